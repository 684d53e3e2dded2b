/** Discovery reads a switch's external ports, reads CAs and probes the far side of links through
 * the client's callback slot (getDrTo: no promise per SMP, issue #32); a client without one is read
 * through getDr. Both must find the
 * same fabric, byte for byte, and treat a switch whose port reads fail alike: left out, named. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MadStatusError } from '../src/rpc/errors.js';
import { MgmtClass, NodeType, SmpAttr } from '../src/wire/mad.js';
import { discover, type DiscoverySkip } from '../src/sm/discovery.js';
import { RetryingSmp } from '../src/sm/retry.js';
import { smpClientOf, type SmpClient } from '../src/sm/smp-client.js';
import { drive } from './helpers/drive.js';

const SPEC = 'gen:fattree3:pods=4,leaves=4,spines=2,cores=4,hosts=4';

function rig(): { clock: VirtualClock; inner: SmpClient; want: ReturnType<typeof loadFabricSpec> } {
  const clock = new VirtualClock();
  const want = loadFabricSpec(SPEC);
  const sim = new SimFabric(loadFabricSpec(SPEC), { clock });
  const ep = sim.attach(want.nodes.findIndex((n) => n.type !== NodeType.Switch));
  ep.register(MgmtClass.SubnDirected, 1);
  const rpc = new MadRpc(ep, clock, { window: 64, perDestinationWindow: 8, timeoutMs: 100 });
  return { clock, inner: smpClientOf(rpc), want };
}

/** The client without its callback slot: every Get a promise. */
function promisesOnly(c: SmpClient): SmpClient {
  const { getDrTo: _drop, ...rest } = c;
  return Object.defineProperty(rest, 'sent', { get: () => c.sent }) as SmpClient;
}

/** A client whose PortInfo Gets of external ports at the node behind `path` are refused (status
 * 0x1c), through the slot and through getDr alike; counts the slot's use. */
function refusing(c: SmpClient, path: readonly number[], attrId = SmpAttr.PortInfo): SmpClient & { slotGets: number } {
  const at = (p: readonly number[], attr: number, mod: number): boolean => attr === attrId && (attr !== SmpAttr.PortInfo || (mod & 0xff) !== 0) && p.length === path.length && p.every((x, i) => x === path[i]);
  const refusal = (): MadStatusError => new MadStatusError({ mgmtClass: MgmtClass.SubnDirected, method: 1, attrId, attrMod: 1, destination: 'DR path' }, 0x1c, new Uint8Array(256));
  const out = {
    getDr: (p: readonly number[], attr: number, mod = 0) => (at(p, attr, mod) ? Promise.reject(refusal()) : c.getDr(p, attr, mod)),
    setDr: c.setDr.bind(c),
    getLid: c.getLid.bind(c),
    setLid: c.setLid.bind(c),
    trap: c.trap.bind(c),
    slotGets: 0,
    getDrTo: (req: Parameters<NonNullable<SmpClient['getDrTo']>>[0], sink: Parameters<NonNullable<SmpClient['getDrTo']>>[1]) => {
      out.slotGets++;
      if (at(req.path, req.attr, req.mod)) sink.smpFailed(req, refusal());
      else c.getDrTo!(req, sink);
    },
    get sent() {
      return c.sent;
    },
  };
  if (!c.getDrTo) delete (out as Partial<typeof out>).getDrTo; // a promises-only client stays one
  return out as SmpClient & { slotGets: number };
}

/** What a discovery found, every byte of it: nodes, links, paths, PortInfo as read. */
function dump(res: Awaited<ReturnType<typeof discover>>): string {
  // A kept PortInfo is a view over its own 64 bytes (model/port-info.ts keepPortInfo).
  expect(res.nodes[0]!.portInfo.find((pi) => pi)).toHaveProperty('buf');
  return JSON.stringify({ fabric: res.fabric, nodes: res.nodes.map((d) => ({ ...d, portInfo: d.portInfo.map((pi) => (pi ? Array.from((pi as unknown as { buf: Uint8Array }).buf) : null)) })) }, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString(16) : v));
}

describe('discovery over the callback slot', () => {
  it('finds the same fabric as over promises, byte for byte, with the SMPs the promise path sends (port reads, CA reads and probes through the slot)', async () => {
    const a = rig();
    const slot = { portInfo: 0, nodeInfo: 0, nodeDesc: 0 };
    const counted: SmpClient = Object.defineProperty(
      {
        ...a.inner,
        getDrTo: (req: Parameters<NonNullable<SmpClient['getDrTo']>>[0], sink: Parameters<NonNullable<SmpClient['getDrTo']>>[1]) => {
          if (req.attr === SmpAttr.PortInfo) slot.portInfo++;
          if (req.attr === SmpAttr.NodeInfo) slot.nodeInfo++;
          if (req.attr === SmpAttr.NodeDescription) slot.nodeDesc++;
          a.inner.getDrTo!(req, sink);
        },
      },
      'sent',
      { get: () => a.inner.sent },
    ) as SmpClient;
    const viaSlot = await drive(a.clock, discover(new RetryingSmp(counted, a.clock)), 60_000);
    const b = rig();
    const viaPromises = await drive(b.clock, discover(new RetryingSmp(promisesOnly(b.inner), b.clock)), 60_000);
    const switchPorts = a.want.nodes.filter((n) => n.type === NodeType.Switch).reduce((s, n) => s + n.numPorts, 0);
    // every external port of every switch, and every CA but the SM's own, through the slot
    const cas = a.want.nodes.filter((n) => n.type !== NodeType.Switch).length;
    expect(slot.portInfo).toBe(switchPorts + cas - 1);
    expect(slot.nodeDesc).toBe(cas - 1);
    // every probe too: at least one per link but the SM's own (each found once, some from both sides)
    const links = a.want.nodes.reduce((n, x) => n + x.ports.filter((p, i) => i > 0 && p?.peer).length, 0) / 2;
    expect(slot.nodeInfo).toBeGreaterThanOrEqual(links);
    expect(viaSlot.fabric.nodes.length).toBe(a.want.nodes.length);
    expect(dump(viaSlot)).toBe(dump(viaPromises));
    expect(viaSlot.smps).toBe(viaPromises.smps);
  });

  it('a switch whose port reads are refused is left out, named, as over promises; the rest is found', async () => {
    const outcome = async (slot: boolean, attrId = SmpAttr.PortInfo): Promise<{ skips: DiscoverySkip[]; nodes: number; slotGets: number }> => {
      const r = rig();
      // the SM's leaf switch is at [1]; a spine one hop above it at [1, up]
      const leaf = r.want.nodes.find((n) => n.type === NodeType.Switch && n.ports.some((p) => p?.peer && r.want.nodes[p.peer.node]!.type !== NodeType.Switch))!;
      const up = leaf.ports.findIndex((p, i) => i > 0 && p?.peer && r.want.nodes[p.peer.node]!.type === NodeType.Switch);
      const bad = refusing(slot ? r.inner : promisesOnly(r.inner), [1, up], attrId);
      const skips: DiscoverySkip[] = [];
      const res = await drive(r.clock, discover(new RetryingSmp(bad, r.clock), { onSkip: (s) => skips.push(s) }), 60_000);
      return { skips, nodes: res.fabric.nodes.length, slotGets: bad.slotGets };
    };
    const viaSlot = await outcome(true);
    const viaPromises = await outcome(false);
    expect(viaSlot.slotGets).toBeGreaterThan(0);
    expect(viaPromises.slotGets).toBe(0);
    const nodeSkips = (o: typeof viaSlot): string[] => o.skips.filter((s) => s.kind === 'node').map((s) => `${s.guid.toString(16)} ${s.path.join(',')} ${(s.error as Error).name}`);
    expect(nodeSkips(viaSlot)).toHaveLength(1);
    expect(nodeSkips(viaSlot)).toEqual(nodeSkips(viaPromises));
    expect(nodeSkips(viaSlot)[0]).toMatch(/MadStatusError$/);
    expect(viaSlot.nodes).toBe(viaPromises.nodes);
  });

  it('a CA whose PortInfo is refused is left out, named, as over promises', async () => {
    const outcome = async (slot: boolean): Promise<{ nodes: string[]; found: number }> => {
      const r = rig();
      // a CA two hops from the SM: its leaf's first CA port other than the SM's
      const leafIdx = r.want.nodes.findIndex((n) => n.type === NodeType.Switch && n.ports.some((p) => p?.peer && r.want.nodes[p.peer.node]!.type !== NodeType.Switch));
      const leaf = r.want.nodes[leafIdx]!;
      const smPort = leaf.ports.findIndex((p, i) => i > 0 && p?.peer && r.want.nodes[p.peer.node]!.type !== NodeType.Switch);
      const other = leaf.ports.findIndex((p, i) => i > smPort && p?.peer && r.want.nodes[p.peer.node]!.type !== NodeType.Switch);
      const bad = refusing(slot ? r.inner : promisesOnly(r.inner), [1, other]);
      const skipped: string[] = [];
      // (refusing() matches PortInfo with a port number in the modifier: the CA's port 1)
      const res = await drive(r.clock, discover(new RetryingSmp(bad, r.clock), { onSkip: (x) => x.kind === 'node' && skipped.push(`${x.guid.toString(16)} ${x.path.join(',')} ${(x.error as Error).name}`) }), 60_000);
      return { nodes: skipped, found: res.fabric.nodes.length };
    };
    const viaSlot = await outcome(true);
    const viaPromises = await outcome(false);
    expect(viaSlot.nodes).toHaveLength(1);
    expect(viaSlot.nodes[0]).toMatch(/MadStatusError$/);
    expect(viaSlot.nodes).toEqual(viaPromises.nodes);
    expect(viaSlot.found).toBe(viaPromises.found);
  });

  it('a probe that is refused leaves that link out, named, as over promises', async () => {
    const outcome = async (slot: boolean): Promise<{ links: string[]; nodes: number; slotGets: number }> => {
      const r = rig();
      const leaf = r.want.nodes.find((n) => n.type === NodeType.Switch && n.ports.some((p) => p?.peer && r.want.nodes[p.peer.node]!.type !== NodeType.Switch))!;
      const up = leaf.ports.findIndex((p, i) => i > 0 && p?.peer && r.want.nodes[p.peer.node]!.type === NodeType.Switch);
      const bad = refusing(slot ? r.inner : promisesOnly(r.inner), [1, up], SmpAttr.NodeInfo);
      const links: string[] = [];
      const res = await drive(r.clock, discover(new RetryingSmp(bad, r.clock), { onSkip: (x) => x.kind === 'link' && links.push(`${x.guid.toString(16)}/${x.port} ${x.path.join(',')} ${(x.error as Error).name}`) }), 60_000);
      return { links, nodes: res.fabric.nodes.length, slotGets: bad.slotGets };
    };
    const viaSlot = await outcome(true);
    const viaPromises = await outcome(false);
    expect(viaSlot.slotGets).toBeGreaterThan(0);
    expect(viaSlot.links).toHaveLength(1);
    expect(viaSlot.links[0]).toMatch(/MadStatusError$/);
    expect(viaSlot.links).toEqual(viaPromises.links);
    expect(viaSlot.nodes).toBe(viaPromises.nodes);
  });
});
