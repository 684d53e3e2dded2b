/** The MAD window under ibsim's umad2sim preload: the RPC keeps the wanted window outstanding,
 * and the addon paces the requests on the wire at half of what a quarter of the socket send buffer
 * holds, so they never fill umad2sim's socket pair (both directions full hang ibsim and the SM
 * together: docs/ibsim-notes.md); on a real HCA nothing is paced. (test/ibsim-guid.test.ts sees
 * the SM log the pace on ibsim; test/bounds-umad.test.ts measures what the socket holds and shows
 * the pace held.) */
import { describe, expect, it } from 'vitest';
import { UMAD2SIM_DGRAM_BYTES, umadWindow } from '../src/api/backend.js';

const PRELOAD = { LD_PRELOAD: '/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so' };

describe('umadWindow', () => {
  it('leaves the window alone without umad2sim (the kernel queues MADs), whatever the send buffer', () => {
    expect(umadWindow(64, {}, () => 212_992)).toEqual({ window: 64 });
    expect(umadWindow(64, { LD_PRELOAD: '/usr/lib/libfoo.so' }, () => 1)).toEqual({ window: 64 });
  });
  it('under umad2sim: the wanted window outstanding, paced at an eighth of the MADs the send buffer holds, at least 1, never above the window; 212,992 bytes when unreadable', () => {
    expect(UMAD2SIM_DGRAM_BYTES).toBe(1280);
    expect(umadWindow(64, PRELOAD, () => 212_992)).toEqual({ window: 64, pace: 20, sndbuf: 212_992 });
    expect(umadWindow(64, PRELOAD, () => 4_194_304)).toEqual({ window: 64, pace: 64, sndbuf: 4_194_304 });
    expect(umadWindow(3, PRELOAD, () => 212_992)).toEqual({ window: 3, pace: 3, sndbuf: 212_992 });
    expect(umadWindow(64, PRELOAD, () => 4096)).toEqual({ window: 64, pace: 1, sndbuf: 4096 });
    expect(umadWindow(64, PRELOAD, () => undefined)).toEqual({ window: 64, pace: 20, sndbuf: 212_992 });
  });
});
