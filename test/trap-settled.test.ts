/** One bouncing switch-to-switch link, one local sweep a state change (issue #33, sm/trap-check.ts):
 * both switches at the link's ends trap 128 for each change; the first trap's local sweep reads
 * both (both flag PortStateChange), so the other switch's trap, held while that sweep ran or
 * checked alone after it, starts no second sweep and reads no CA port. A change the sweep did not
 * see (another cable of that switch) still sweeps. Witnesses: the SMPs the SM sent (counted under
 * it, by attribute and by the node type they reach), the sweeps done, the simulated fabric's port
 * states and LFTs (routes verified). No flapping policy. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { NodeType, PortState, SmpAttr } from '../src/wire/mad.js';
import type { SmpClient } from '../src/sm/smp-client.js';
import { checkFabric, smRig } from './helpers/sm-rig.js';
import { drive } from './helpers/drive.js';
import { bounce, leafUplink, wait } from './helpers/flap.js';

const SPEC = 'gen:fattree2:leaves=4,spines=2,hosts=4';

function rig() {
  const f = loadFabricSpec(SPEC);
  const byPath = new Map<string, number>(); // PortInfo Gets whose DR path ends at a CA
  let caPortReads = 0;
  const gets = new Map<number, number>();
  /** Does DR path `path` from the SM's node end at a CA (walked over the fabric as built)? */
  const endsAtCa = (path: readonly number[]): boolean => {
    const k = path.join(',');
    if (byPath.has(k)) return byPath.get(k) === 1;
    let node = 0;
    for (const p of path) node = f.nodes[node]!.ports[p]?.peer?.node ?? node;
    const ca = path.length > 0 && f.nodes[node]!.type !== NodeType.Switch ? 1 : 0;
    byPath.set(k, ca);
    return ca === 1;
  };
  const wrap = (s: SmpClient): SmpClient => ({
    getDr: (path, attr, mod, t) => {
      gets.set(attr, (gets.get(attr) ?? 0) + 1);
      if (attr === SmpAttr.PortInfo && endsAtCa(path)) caPortReads++;
      return s.getDr(path, attr, mod, t);
    },
    setDr: (path, attr, mod, data, mkey, t) => s.setDr(path, attr, mod, data, mkey, t),
    getLid: (lid, attr, mod, t) => s.getLid(lid, attr, mod, t),
    setLid: (lid, attr, mod, data, t) => s.setLid(lid, attr, mod, data, t),
    trap: (lid, notice) => s.trap(lid, notice),
    get sent() {
      return s.sent;
    },
  });
  const r = smRig(f, { wrapSmp: wrap });
  return { ...r, f, link: leafUplink(f), caPortReads: () => caPortReads, gets };
}

describe('a bouncing switch-to-switch link (no flapping policy)', () => {
  it('one local sweep a state change; the other end\'s trap starts no sweep and reads no CA port', async () => {
    const r = rig();
    await drive(r.clock, r.sm.start());
    await wait(r.clock, 3000);
    const peer = r.f.nodes[r.link.leaf]!.ports[r.link.up]!.peer!;
    const sweeps0 = r.sm.sweepsDone.heavy;
    const ca0 = r.caPortReads();
    const light0 = r.lines('IBSM-1108').length;
    const downs0 = r.lines('IBSM-2006').length;
    const ups0 = r.lines('IBSM-2007').length;
    const N = 6;
    await bounce(r.sim, r.clock, r.link.guid, r.link.up, N);
    await wait(r.clock, 5000); // every trap (a lost one's repeat too) in and handled
    const sweeps = r.sm.sweepsDone.heavy - sweeps0;
    const traps = r.lines('IBSM-3001').length;
    console.log(`${N} bounces (${2 * N} state changes): ${sweeps} sweeps (${traps} traps logged), ${r.caPortReads() - ca0} CA PortInfo reads, ${r.lines(['IBSM-3007', 'IBSM-3008']).length} traps settled without a sweep`);
    // both switches trap each change: 2 × 2N traps, 2N sweeps at most
    expect(sweeps).toBeGreaterThanOrEqual(1);
    expect(sweeps).toBeLessThanOrEqual(2 * N);
    expect(r.lines('IBSM-1108').length - light0).toBe(0); // no light sweep over the CA ports
    expect(r.caPortReads() - ca0).toBe(0);
    expect(r.lines('IBSM-1203')).toEqual([]); // no full heavy sweep for want of a flagged switch
    expect(traps).toBeGreaterThan(0);
    // and every change was swept: each down and each up seen by a local sweep
    expect(r.lines('IBSM-2006').length - downs0).toBe(N);
    expect(r.lines('IBSM-2007').length - ups0).toBe(N);
    // the link is back, routed through, every port ACTIVE, routes complete and loop-free
    const snap = r.sm.current!;
    const leaf = snap.fabric.nodes.find((n) => n.guid === r.link.guid)!;
    expect(snap.fabric.nodes[leaf.ports[r.link.up]!.peer!.node]!.guid).toBe(r.f.nodes[peer.node]!.guid);
    expect(r.sim.portInfo(r.link.guid, r.link.up).portState).toBe(PortState.Active);
    checkFabric(r);
  });

  it('another cable of the other end, pulled after a bounce, is still swept and routed round', async () => {
    const r = rig();
    await drive(r.clock, r.sm.start());
    await bounce(r.sim, r.clock, r.link.guid, r.link.up, 2);
    await wait(r.clock, 3000);
    // the spine at the link's other end: its other leaf port
    const spine = r.f.nodes[r.link.leaf]!.ports[r.link.up]!.peer!.node;
    const sg = r.f.nodes[spine]!.guid;
    const other = r.f.nodes[spine]!.ports.findIndex((p, pn) => pn > 0 && p?.peer && p.peer.node !== r.link.leaf);
    const s0 = r.sm.sweepsDone.heavy;
    r.sim.linkDown(sg, other);
    await wait(r.clock, 3000);
    expect(r.sm.sweepsDone.heavy - s0).toBeGreaterThanOrEqual(1);
    expect(r.sm.current!.fabric.nodes.find((n) => n.guid === sg)!.ports[other]!.peer).toBeUndefined();
    checkFabric(r);
    r.sim.linkUp(sg, other);
    await wait(r.clock, 3000);
    expect(r.sm.current!.fabric.nodes.find((n) => n.guid === sg)!.ports[other]!.peer).toBeDefined();
    checkFabric(r);
  });
});
