/** SR-IOV vports end to end on the in-process fabric and the virtual clock: the simulated HCAs
 * (sim/vport.ts) are the witness (vport states and LIDs as their SMAs hold them, the switches'
 * LFTs, an SMP LID-routed to each vport LID arriving). */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { NodeType, PortState } from '../src/wire/mad.js';
import { VPortAttr, VPortInfo, vportIndexMod } from '../src/wire/vport.js';
import { PortCap2 } from '../src/wire/sma.js';
import type { SimFabric } from '../src/sim/fabric.js';
import { formatGuid } from '../src/util/guid.js';
import { parsePartitions } from '../src/model/partitions.js';
import { checkFabric, smRig, type SmRig } from './helpers/sm-rig.js';
import { drive } from './helpers/drive.js';

const SPEC = 'gen:fattree2:leaves=4,spines=2,hosts=6';
const INTERVAL = 5000;

function cas(sim: SimFabric) {
  return sim.nodes.filter((n) => n.type === NodeType.CA);
}

/** Every vport of the fabric: ACTIVE; a LidRequired one with a LID no port and no other vport
 * has, reached by LID-routed SMPs from the SM's port; the others with none of their own. */
async function checkVports(r: SmRig): Promise<{ vports: number; withLid: number }> {
  const seen = new Map<number, string>();
  for (const n of r.sim.nodes) for (const p of n.ports) if (p && p.info.lid) for (let l = p.info.lid; l < p.info.lid + (1 << p.info.lmc); l++) seen.set(l, `${n.desc}/${p.num}`);
  let vports = 0;
  let withLid = 0;
  for (const v of r.sim.vports.all()) {
    vports++;
    expect(v.state, `vport ${v.index} of ${v.virt.port.node.desc}`).toBe(PortState.Active);
    if (!v.lidRequired) {
      expect(v.lid).toBe(0);
      continue;
    }
    withLid++;
    expect(v.lid, `vport ${v.index} of ${v.virt.port.node.desc} has a LID`).toBeGreaterThan(0);
    expect(seen.get(v.lid), `LID ${v.lid} unique`).toBeUndefined();
    seen.set(v.lid, `vport ${v.guid}`);
    // the route reaches it: a LID-routed Get to the vport LID is answered by its HCA's SMA
    const got = VPortInfo.decode(await drive(r.clock, r.sm.current ? r.rpc.smpGet(v.lid, VPortAttr.VPortInfo, vportIndexMod(v.index)) : Promise.reject(new Error('no snapshot'))));
    expect(got.portGuid).toBe(v.guid);
    expect(got.vportLid).toBe(v.lid);
  }
  return { vports, withLid };
}

describe('SR-IOV vports: the simulated HCA', () => {
  it('advertises IsVirtualizationSupported and keeps vports the hypervisor creates and destroys', () => {
    const r = smRig(loadFabricSpec(SPEC), { sim: { virtualization: { vportCap: 64, vports: 4 } } });
    const ca = cas(r.sim)[0]!;
    const port = ca.ports[1]!;
    expect(port.info.capabilityMask2 & PortCap2.IsVirtualizationSupported).toBe(PortCap2.IsVirtualizationSupported);
    const virt = r.sim.vports.virt(ca.guid, 1);
    expect([...virt.vports.keys()]).toEqual([0, 1, 2, 3, 4]);
    expect([...virt.vports.values()].map((v) => v.lidRequired)).toEqual([false, true, false, true, false]);
    expect(virt.vportStateChange).toBe(false);
    const v = r.sim.vports.create(ca.guid, 1, { lidRequired: true });
    expect(v.index).toBe(5);
    expect(virt.vportStateChange).toBe(true);
    expect(virt.indexTop).toBe(5);
    r.sim.vports.destroy(ca.guid, 1, 5);
    expect(virt.indexTop).toBe(4);
    expect(() => r.sim.vports.destroy(ca.guid, 1, 0)).toThrow(/physical function/);
    expect(() => r.sim.vports.create(ca.guid, 1, { index: 65 })).toThrow(/VPortCap/);
  });
});

describe('SR-IOV vports: the SM', () => {
  it('a heavy sweep enables virtualization, gives LidRequired vports LIDs, routes them and brings every vport ACTIVE', async () => {
    const r = smRig(loadFabricSpec(SPEC), { sim: { virtualization: { vportCap: 64, vports: 4 } } });
    await drive(r.clock, r.sm.start());
    checkFabric(r);
    for (const virt of r.sim.vports.ports) expect(virt.enabled).toBe(true);
    const got = await checkVports(r);
    const caPorts = cas(r.sim).reduce((k, n) => k + n.ports.filter((p) => p?.peer).length, 0);
    expect(got).toEqual({ vports: caPorts * 5, withLid: caPorts * 2 });
    // in the guid2lid map the SM keeps, like the physical ports
    for (const v of r.sim.vports.all()) if (v.lidRequired) expect(r.sm.vports.lidMap.get(v.guid)?.base).toBe(v.lid);
    // a vport without LidRequired takes the LID of vport LidByVPortIndex (0: the base LID)
    const ca = cas(r.sim)[0]!;
    const rec = r.sm.vports.ports.get(ca.ports[1]!.guid)!;
    expect(rec.vports.get(2)!.lid).toBe(ca.ports[1]!.info.lid);
  });

  it('100 vports created at run time on one host: ACTIVE with LIDs after the next light sweep, no heavy sweep, no other LFT entry written', async () => {
    const r = smRig(loadFabricSpec(SPEC), { sm: { sweepIntervalMs: INTERVAL }, sim: { virtualization: { vportCap: 256, vports: 2 } } });
    await drive(r.clock, r.sm.start());
    checkFabric(r);
    const heavy = r.sm.stats.filter((s) => s.kind === 'heavy').length;
    const switches = r.sim.nodes.filter((n) => n.isSwitch);
    const before = new Map(switches.map((s) => [s.guid, r.sim.lft(s.guid).slice()]));
    const ca = cas(r.sim)[3]!;
    const created = Array.from({ length: 100 }, (_, i) => r.sim.vports.create(ca.guid, 1, { lidRequired: i % 2 === 0 }));
    await r.clock.advanceAsync(INTERVAL * 2);
    expect(r.sm.stats.filter((s) => s.kind === 'heavy').length, 'no heavy sweep').toBe(heavy);
    expect(r.sim.vports.virt(ca.guid, 1).vportStateChange, 'VPortStateChange acknowledged').toBe(false);
    for (const v of created) expect(v.state).toBe(PortState.Active);
    const fresh = new Set(created.filter((v) => v.lidRequired).map((v) => v.lid));
    expect(fresh.size).toBe(50);
    expect(fresh.has(0)).toBe(false);
    await checkVports(r);
    // every switch: the LFT entries of the new LIDs are the host's port's; no other entry changed
    const hostLid = ca.ports[1]!.info.lid;
    for (const s of switches) {
      const was = before.get(s.guid)!;
      const now = r.sim.lft(s.guid);
      for (let lid = 1; lid < Math.max(was.length, now.length); lid++) {
        if (fresh.has(lid)) expect(now[lid], `switch ${s.desc} LID ${lid}`).toBe(now[hostLid]);
        else expect(now[lid] ?? 255, `switch ${s.desc} LID ${lid} untouched`).toBe(was[lid] ?? 255);
      }
    }
    // destroyed: forgotten by the next light sweep, its LID released from the map
    r.sim.vports.destroy(ca.guid, 1, created[0]!.index);
    await r.clock.advanceAsync(INTERVAL);
    expect(r.sm.vports.lidMap.has(created[0]!.guid)).toBe(false);
    expect(r.sm.stats.filter((s) => s.kind === 'heavy').length, 'still no heavy sweep').toBe(heavy);
    // a vport created on another host takes a LID inside the routed range (the one released):
    // its entries are written anew (the routing's tables are not changed in place under the LFT
    // shadows that borrow them, sm/programmed.ts), and it is reached there
    const other = cas(r.sim)[0]!;
    const again = r.sim.vports.create(other.guid, 1, { lidRequired: true });
    await r.clock.advanceAsync(INTERVAL * 2);
    expect(again.state).toBe(PortState.Active);
    expect(again.lid).toBeGreaterThan(0);
    expect(again.lid).toBeLessThanOrEqual(Math.max(...fresh));
    await checkVports(r);
    for (const s of switches) expect(r.sim.lft(s.guid)[again.lid], `switch ${s.desc} LID ${again.lid}`).toBe(r.sim.lft(s.guid)[other.ports[1]!.info.lid]);
  });

  it('vport LIDs persist across a restart through guid2lid (a cold fabric, the same LIDs), and are LMC-aware', async () => {
    const saved: Array<ReadonlyMap<bigint, { base: number; lmc: number }>> = [];
    const a = smRig(loadFabricSpec(SPEC), { sm: { lmc: 1, saveGuid2Lid: (m) => saved.push(new Map(m)) }, sim: { virtualization: { vportCap: 64, vports: 4 } } });
    await drive(a.clock, a.sm.start());
    const lidsA = new Map([...a.sim.vports.all()].filter((v) => v.lidRequired).map((v) => [v.guid, v.lid]));
    expect(lidsA.size).toBeGreaterThan(0);
    for (const [g, l] of lidsA) {
      expect(l % 2, 'aligned to 2^LMC').toBe(0);
      expect(saved.at(-1)!.get(g)).toEqual({ base: l, lmc: 1 });
    }
    // both LIDs of a vport's range are routed as the port's two LIDs
    const ca = cas(a.sim)[2]!;
    const v = [...a.sim.vports.virt(ca.guid, 1).vports.values()].find((x) => x.lidRequired)!;
    for (const s of a.sim.nodes.filter((n) => n.isSwitch)) {
      const lft = a.sim.lft(s.guid);
      const base = ca.ports[1]!.info.lid;
      expect([lft[v.lid], lft[v.lid + 1]]).toEqual([lft[base], lft[base + 1]]);
    }
    await checkVports(a);
    // a fresh SM on a cold fabric, handed the saved map: every vport gets its LID back, though
    // the physical ports are numbered in another order (the SM attached elsewhere)
    const b = smRig(loadFabricSpec(SPEC), { attach: cas(a.sim)[5]!.idx, sm: { lmc: 1, guid2lid: saved.at(-1)! }, sim: { virtualization: { vportCap: 64, vports: 4 } } });
    // and one more VF on the host the SM numbers first: first in line for a fresh LID
    const first = b.sim.node(a.sm.current!.fabric.nodes.find((n) => n.type === NodeType.CA)!.guid);
    b.sim.vports.virt(first.guid, 1).add({ index: 5, lidRequired: true });
    await drive(b.clock, b.sm.start());
    const lidsB = new Map([...b.sim.vports.all()].filter((x) => x.lidRequired && lidsA.has(x.guid)).map((x) => [x.guid, x.lid]));
    expect(lidsB.size).toBe(lidsA.size);
    for (const [g, l] of lidsB) expect(l, formatGuid(g)).toBe(lidsA.get(g));
    await checkVports(b);
  });

  it('each vport gets the P_Keys of its partitions: partitions.conf names vport GUIDs as port GUIDs', async () => {
    const topo = loadFabricSpec(SPEC);
    const probe = smRig(topo, { sim: { virtualization: { vportCap: 64, vports: 2 } } });
    const ca = cas(probe.sim)[1]!;
    const [a, b] = [1, 2].map((i) => probe.sim.vports.virt(ca.guid, 1).vports.get(i)!.guid);
    const hex = (g: bigint) => '0x' + g.toString(16).padStart(16, '0');
    const partitions = parsePartitions(`Default=0x7fff, ipoib : ALL=full ;\nTenantA=0x0a01 : ${hex(a!)}=full ;\nTenantB=0x0a02 : ${hex(b!)}=full ;\n`);
    const r = smRig(loadFabricSpec(SPEC), { sm: { partitions }, sim: { virtualization: { vportCap: 64, vports: 2 } } });
    await drive(r.clock, r.sm.start());
    const virt = r.sim.vports.virt(ca.guid, 1);
    const keys = (i: number) => [...virt.vports.get(i)!.pkeys].filter((k) => k !== 0);
    expect(keys(1)).toContain(0x8a01);
    expect(keys(1)).not.toContain(0x8a02);
    expect(keys(2)).toContain(0x8a02);
    expect(keys(2)).not.toContain(0x8a01);
    for (const i of [0, 1, 2]) expect(keys(i)).toContain(0xffff);
    // what the SM believes it wrote is what the HCA holds
    expect(r.sm.vports.ports.get(ca.ports[1]!.guid)!.vports.get(1)!.pkeySig).toBe(keys(1).join(','));
  });

  it('a link down re-routed by a local sweep: the vport LIDs follow their hosts\' new routes', async () => {
    const r = smRig(loadFabricSpec(SPEC), { sm: { sweepIntervalMs: INTERVAL }, sim: { virtualization: { vportCap: 64, vports: 4 } } });
    await drive(r.clock, r.sm.start());
    const leaf = r.sim.node('sw-l1-1');
    const up = leaf.ports.findIndex((p, i) => i > 0 && p?.peer?.node.isSwitch);
    r.sim.linkDown(leaf.guid, up);
    await r.clock.advanceAsync(INTERVAL * 2);
    expect(r.sm.stats.length).toBeGreaterThan(1);
    checkFabric(r);
    for (const s of r.sim.nodes.filter((n) => n.isSwitch)) {
      const lft = r.sim.lft(s.guid);
      for (const v of r.sim.vports.all()) if (v.lidRequired) expect(lft[v.lid], `${s.desc}: vport LID ${v.lid}`).toBe(lft[v.virt.port.info.lid]);
    }
    await checkVports(r);
  });

  it('a fabric without virtualization: the light sweep sends no vport SMP', async () => {
    const r = smRig(loadFabricSpec(SPEC), { sm: { sweepIntervalMs: INTERVAL } });
    await drive(r.clock, r.sm.start());
    expect(r.sm.vports.ports.size).toBe(0);
    expect(r.sm.vports.reads).toBe(0);
    await r.clock.advanceAsync(INTERVAL * 3);
    expect(r.sm.vports.reads).toBe(0);
  });
});
