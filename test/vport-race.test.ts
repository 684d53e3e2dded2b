/** The light sweep's vport pass and a hypervisor racing it: a vport created after the pass read
 * VPortState but before it cleared VPortStateChange (the clearing erases the flag the creation
 * raised). The simulated HCA is the witness: the vport must come ACTIVE with its LID at the next
 * light sweep, not wait for a heavy sweep. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { NodeType, PortState } from '../src/wire/mad.js';
import type { SimVPort, SimVirt } from '../src/sim/vport.js';
import { checkFabric, smRig } from './helpers/sm-rig.js';
import { drive } from './helpers/drive.js';

const SPEC = 'gen:fattree2:leaves=4,spines=2,hosts=6';
const INTERVAL = 5000;

/** Run `hook` once, the next time the SM writes VirtualizationInfo (the Set that clears
 * VPortStateChange assigns `enabled` just before it clears the flag). */
function beforeNextClear(virt: SimVirt, hook: () => void): void {
  let value = virt.enabled;
  let armed = true;
  Object.defineProperty(virt, 'enabled', {
    configurable: true,
    get: () => value,
    set: (x: boolean) => {
      if (armed) {
        armed = false;
        hook();
      }
      value = x;
    },
  });
}

describe('SR-IOV vports: a vport created between the pass\'s read and its clearing of VPortStateChange', () => {
  it('is ACTIVE with a LID after the next light sweep, without a heavy sweep', async () => {
    const r = smRig(loadFabricSpec(SPEC), { sm: { sweepIntervalMs: INTERVAL }, sim: { virtualization: { vportCap: 64, vports: 2 } } });
    await drive(r.clock, r.sm.start());
    checkFabric(r);
    const heavy = r.sm.stats.filter((s) => s.kind === 'heavy').length;
    const ca = r.sim.nodes.filter((n) => n.type === NodeType.CA)[2]!;
    const virt = r.sim.vports.virt(ca.guid, 1);
    const first = r.sim.vports.create(ca.guid, 1, { lidRequired: true });
    let late: SimVPort | undefined;
    beforeNextClear(virt, () => {
      late = r.sim.vports.create(ca.guid, 1, { lidRequired: true });
    });
    for (let i = 0; i < 4 && first.state !== PortState.Active; i++) await r.clock.advanceAsync(INTERVAL);
    expect(first.state, 'the first vport: the pass that found it').toBe(PortState.Active);
    expect(late, 'the race happened').toBeDefined();
    expect(late!.state, 'the late vport: not by that pass').toBe(PortState.Init);
    expect(virt.vportStateChange, 'its flag was erased by the clearing').toBe(false);
    await r.clock.advanceAsync(INTERVAL * 2);
    expect(r.sm.stats.filter((s) => s.kind === 'heavy').length, 'no heavy sweep').toBe(heavy);
    expect(late!.state, 'the late vport: the next pass').toBe(PortState.Active);
    expect(late!.lid).toBeGreaterThan(0);
    expect(late!.lid).not.toBe(first.lid);
    expect(r.sm.vports.lidMap.get(late!.guid)?.base).toBe(late!.lid);
    // every switch forwards its LID as its host's
    for (const s of r.sim.nodes.filter((n) => n.isSwitch)) {
      const lft = r.sim.lft(s.guid);
      expect(lft[late!.lid], s.desc).toBe(lft[ca.ports[1]!.info.lid]);
    }
  });
});

describe('SR-IOV vports: an HCA that lost its vport state', () => {
  it('a reset HCA (VirtualizationEnable 0, vports back to Init, P_Key tables empty) is set up again by the next light sweep', async () => {
    const r = smRig(loadFabricSpec(SPEC), { sm: { sweepIntervalMs: INTERVAL }, sim: { virtualization: { vportCap: 64, vports: 4 } } });
    await drive(r.clock, r.sm.start());
    const heavy = r.sm.stats.filter((s) => s.kind === 'heavy').length;
    const ca = r.sim.nodes.filter((n) => n.type === NodeType.CA)[3]!;
    const virt = r.sim.vports.virt(ca.guid, 1);
    const keys = new Map([...virt.vports.values()].map((v) => [v.index, [...v.pkeys]]));
    expect([...keys.values()].every((k) => k.some((x) => x !== 0))).toBe(true);
    // the reset: no VPortStateChange raised, only VirtualizationEnable tells
    virt.enabled = false;
    for (const v of virt.vports.values()) {
      if (v.index !== 0) v.state = PortState.Init;
      v.pkeys.fill(0);
      if (v.lidRequired) virt.setLid(v, 0);
    }
    await r.clock.advanceAsync(INTERVAL * 2);
    expect(r.sm.stats.filter((s) => s.kind === 'heavy').length, 'no heavy sweep').toBe(heavy);
    expect(virt.enabled).toBe(true);
    for (const v of virt.vports.values()) {
      expect(v.state, `vport ${v.index}`).toBe(PortState.Active);
      expect([...v.pkeys], `vport ${v.index} P_Keys`).toEqual(keys.get(v.index));
      if (v.lidRequired) expect(v.lid).toBe(r.sm.vports.lidMap.get(v.guid)?.base);
    }
  });

  it('ports a local sweep read again (recheckPorts): their vports are read in full by the next light sweep', async () => {
    const r = smRig(loadFabricSpec(SPEC), { sm: { sweepIntervalMs: INTERVAL }, sim: { virtualization: { vportCap: 64, vports: 2 } } });
    await drive(r.clock, r.sm.start());
    const ca = r.sim.nodes.filter((n) => n.type === NodeType.CA)[4]!;
    const virt = r.sim.vports.virt(ca.guid, 1);
    // the vports went back to Init without a flag (the port flapped; the HCA's VFs re-initialised)
    for (const v of virt.vports.values()) if (v.index !== 0) v.state = PortState.Init;
    await r.clock.advanceAsync(INTERVAL * 2);
    expect(virt.vports.get(1)!.state, 'nothing told the SM').toBe(PortState.Init);
    expect(r.sm.vports.recheckPorts(r.sm.current!.fabric, new Set([`${ca.guid}/1`]))).toBe(1);
    await r.clock.advanceAsync(INTERVAL * 2);
    for (const v of virt.vports.values()) expect(v.state, `vport ${v.index}`).toBe(PortState.Active);
  });
});
