/** The MAD window under ibsim's umad2sim preload: half of net.unix.max_dgram_qlen, so the answers
 * in flight never fill the SM's datagram queue (a full one hangs ibsim and the SM together:
 * docs/ibsim-notes.md); on a real HCA the wanted window stands. (test/ibsim-guid.test.ts sees
 * the SM log the cap on ibsim.) */
import { describe, expect, it } from 'vitest';
import { umadWindow } from '../src/api/backend.js';

const PRELOAD = { LD_PRELOAD: '/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so' };

describe('umadWindow', () => {
  it('leaves the window alone without umad2sim (the kernel queues MADs), whatever the datagram queue', () => {
    expect(umadWindow(64, {}, () => 10)).toEqual({ window: 64 });
    expect(umadWindow(64, { LD_PRELOAD: '/usr/lib/libfoo.so' }, () => 2)).toEqual({ window: 64 });
  });
  it('under umad2sim: half the queue length, at least 1, never above the wanted window; 10 when unreadable', () => {
    expect(umadWindow(64, PRELOAD, () => 10)).toEqual({ window: 5, qlen: 10 });
    expect(umadWindow(64, PRELOAD, () => 512)).toEqual({ window: 64, qlen: 512 });
    expect(umadWindow(3, PRELOAD, () => 10)).toEqual({ window: 3, qlen: 10 });
    expect(umadWindow(64, PRELOAD, () => 1)).toEqual({ window: 1, qlen: 1 });
    expect(umadWindow(64, PRELOAD, () => undefined)).toEqual({ window: 5, qlen: 10 });
  });
});
