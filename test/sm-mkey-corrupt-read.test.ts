/** An SM without an M_Key of its own never raises a port's M_Key protection, whatever a PortInfo
 * read says: a corrupt read (the fuzzer's SMP responses) showing protect bits 2 and a key must not
 * be echoed into the port by the next PortInfo Set, which would lock the SM out of the port (Gets
 * dropped) until the lease ran out: the port's link left out of every sweep. The simulated port's
 * own state is the witness. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { NodeType, SmpAttr } from '../src/wire/mad.js';
import { PortInfo } from '../src/wire/sma.js';
import type { SmpClient } from '../src/sm/smp-client.js';
import { checkFabric, smRig } from './helpers/sm-rig.js';

describe('a corrupt PortInfo read that shows M_Key protection', () => {
  it('is not written back: the port stays unprotected and the next sweeps find the whole fabric', async () => {
    const f = loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=3');
    let corrupted = 0;
    // Between the SM and MadRpc: the first PortInfo read of every node two hops away or more comes
    // back with an M_Key, protect bits 2 and an 11-hour lease.
    const seen = new Set<string>();
    const wrap = (inner: SmpClient): SmpClient => ({
      getLid: inner.getLid,
      setDr: inner.setDr,
      setLid: inner.setLid,
      trap: inner.trap,
      get sent() {
        return inner.sent;
      },
      getDr: async (path, attr, mod) => {
        const d = await inner.getDr(path, attr, mod);
        const key = path.join(',');
        if (attr !== SmpAttr.PortInfo || seen.has(key)) return d;
        seen.add(key);
        const pi = PortInfo.decode(d);
        if (path.length < 2) return d;
        corrupted++;
        return PortInfo.encode({ ...pi, mkey: 0x99c13b657abbaen, mkeyProtectBits: 2, mkeyLeasePeriod: 39487 });
      },
    });
    const r = smRig(f, { wrapSmp: wrap, sm: { sweepIntervalMs: 0 } });
    await r.clock.runUntil(r.sm.start(), 30_000);
    expect(corrupted).toBeGreaterThan(0);
    for (const n of f.nodes) expect(r.sim.portInfo(n.guid, n.type === NodeType.Switch ? 0 : 1).mkeyProtectBits, n.desc).toBe(0);
    const st = await r.clock.runUntil(r.sm.sweep('heavy'), 30_000);
    expect(st.skippedLinks + st.skippedNodes).toBe(0);
    expect(r.sm.current!.fabric.nodes.length).toBe(f.nodes.length);
    checkFabric(r);
    r.sm.stop();
  });
});
