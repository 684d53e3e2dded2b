/** sm/trap-check.ts on its own, over the in-process fabric (the SM started, then left idle: no
 * traps reach it, no periodic light sweep), its sweep callback counted: a trap 128 from a switch a
 * local sweep read is settled when PortStateChange is clear and the ports read as the snapshot has
 * them, swept when PortStateChange is set, and swept when a port moved though PortStateChange was
 * cleared (by another reader); a trap held while busy is settled by a reading since it arrived,
 * else checked; held traps are dropped when the SM is no longer master. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { SmpAttr } from '../src/wire/mad.js';
import { SwitchInfo } from '../src/wire/sma.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { TrapCheck } from '../src/sm/trap-check.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { smRig } from './helpers/sm-rig.js';
import { drive } from './helpers/drive.js';
import { leafUplink, wait } from './helpers/flap.js';

async function setup() {
  const f = loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=2');
  const r = smRig(f, { traps: false });
  await drive(r.clock, r.sm.start());
  const snap = r.sm.current!;
  const { leaf, guid } = leafUplink(f);
  const i = snap.fabric.nodes.findIndex((n) => n.guid === guid);
  const lid = snap.fabric.nodes[i]!.ports[0]!.lid!;
  const path = snap.discovery.nodes[i]!.path;
  const host = f.nodes[leaf]!.ports.findIndex((p, pn) => pn > 0 && p?.peer && f.nodes[p.peer.node]!.ports.length === 2);
  const smp = smpClientOf(r.rpc);
  const check = new TrapCheck(smp, new Logger(new MemorySink(), 'debug'));
  let sweeps = 0;
  const sweep = (): void => void sweeps++;
  /** Whether the SM is busy (a sweep running or pending), as the trap's callback asks. */
  const state = { busy: false };
  /** A trap from the leaf, the SM idle (or `busy` until the SM is idle again), and time for the check to end. */
  const trap = async (busy = false): Promise<boolean> => {
    state.busy = busy;
    const held = check.trap(snap, lid, r.clock.now(), () => state.busy, sweep);
    await wait(r.clock, 1000);
    state.busy = false;
    return held;
  };
  /** PortStateChange cleared as a sweep clears it (SwitchInfo written back with the bit set). */
  const clearPsc = async (): Promise<void> => {
    const si = SwitchInfo.decode(await drive(r.clock, smp.getDr(path, SmpAttr.SwitchInfo, 0)));
    expect(si.portStateChange).toBe(1);
    await drive(r.clock, smp.setDr(path, SmpAttr.SwitchInfo, 0, SwitchInfo.encode(si)));
  };
  return { r, snap, guid, host, check, trap, clearPsc, sweeps: () => sweeps };
}

describe('a trap 128 checked alone', () => {
  it('no reading of the switch in the snapshot: not handled here (the caller sweeps at once)', async () => {
    const s = await setup();
    expect(await s.trap()).toBe(false);
    expect(s.check.checks).toBe(0);
  });

  it('settled when nothing moved; swept for PortStateChange; swept for a moved port though the bit was cleared', async () => {
    const s = await setup();
    s.check.settled(s.snap, new Map([[s.guid, s.r.clock.now()]]));
    expect(await s.trap()).toBe(true);
    expect(s.sweeps()).toBe(0);
    expect(s.check.settledChecked).toBe(1);
    s.r.sim.linkDown(s.guid, s.host);
    expect(await s.trap()).toBe(true);
    expect(s.sweeps()).toBe(1); // PortStateChange set
    await s.clearPsc();
    expect(await s.trap()).toBe(true);
    expect(s.sweeps()).toBe(2); // the host port is down, the snapshot has it linked
    expect(s.check.checks).toBe(3);
  });

  it('held while busy: settled by a reading since its arrival, else checked; dropped when not master', async () => {
    const s = await setup();
    s.r.sim.linkDown(s.guid, s.host);
    const t0 = s.r.clock.now();
    expect(await s.trap(true)).toBe(true);
    expect(s.check.checks).toBe(0);
    s.check.settled(s.snap, new Map([[s.guid, t0 + 1]]));
    s.check.idle(s.snap);
    await wait(s.r.clock, 1000);
    expect(s.sweeps()).toBe(0);
    expect(s.check.settledFree).toBe(1);
    expect(s.check.checks).toBe(0);
    // a reading from before the trap does not settle it: checked (PortStateChange set: swept)
    expect(await s.trap(true)).toBe(true);
    s.check.idle(s.snap);
    await wait(s.r.clock, 1000);
    expect(s.check.checks).toBe(1);
    expect(s.sweeps()).toBe(1);
    // not master any more: dropped
    expect(await s.trap(true)).toBe(true);
    s.check.idle(undefined);
    await wait(s.r.clock, 1000);
    expect(s.check.checks).toBe(1);
    expect(s.sweeps()).toBe(1);
  });
});
