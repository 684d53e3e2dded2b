/** Issue #11 item 5: no send can block the event loop. Under umad2sim send() only queues and the
 * addon's sender thread calls umad_send (issue #32: the socket writes beside the main thread's
 * work). Stopped (SIGSTOP) so it reads nothing, umad2sim's socket fills: umad_send blocks in the
 * sender thread, while the process's event loop keeps running, the send queue stays at its bound
 * and the excess is dropped and counted; once ibsim resumes, the queue drains. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { umadWindow } from '../src/api/backend.js';
import { requireIbsim, runNodePreloaded, startIbsim, type Ibsim } from './helpers/ibsim.js';

const FLOOD = fileURLToPath(new URL('./fixtures/umad-send-flood.mjs', import.meta.url));
const PACE = fileURLToPath(new URL('./fixtures/umad-pace.mjs', import.meta.url));
const LOST_WAKE = fileURLToPath(new URL('./fixtures/umad-lost-wake.mjs', import.meta.url));
const SEND_MANY = fileURLToPath(new URL('./fixtures/umad-send-many.mjs', import.meta.url));
/** One switch, two hosts: the SM-less client attaches at the first node. */
const NET = fileURLToPath(new URL('./fixtures/one-switch.net', import.meta.url));

let ibsim: Ibsim | undefined;

beforeAll(async () => {
  requireIbsim();
  ibsim = await startIbsim(NET);
});

afterAll(async () => {
  if (ibsim) {
    try {
      process.kill(ibsim.pid, 'SIGCONT');
    } catch {
      /* gone */
    }
    await ibsim.stop();
  }
});

interface SendStats {
  queued: number;
  sending: number;
  sent: number;
  dropped: number;
  errors: number;
  direct: number;
  inFlight?: number;
  expired?: number;
  byReceiver?: number;
  unsent?: number;
}

describe('umad send under a stalled peer', () => {
  it('20,000 sends to a stopped ibsim all return, the event loop runs, the queue holds its bound and drops the rest', async () => {
    const count = 20_000;
    const sendQueue = 1024;
    const r = await runNodePreloaded(FLOOD, [JSON.stringify({ ibsimPid: ibsim!.pid, count, sendQueue })], { ibsim: ibsim!, timeoutMs: 60_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { running: SendStats; returned: number; loopTicksWhileStopped: number; whileStopped: SendStats; afterResume: SendStats };
    // ibsim reading: every send went out through the sender thread, none from send() itself.
    expect(out.running).toMatchObject({ sent: 20, direct: 0, queued: 0, sending: 0, dropped: 0, errors: 0 });
    expect(out.returned).toBe(count);
    // Timers fired while the socket was full: the main thread was not inside a blocking send.
    expect(out.loopTicksWhileStopped).toBeGreaterThan(0);
    const s = out.whileStopped;
    expect(s.queued).toBe(sendQueue);
    expect(s.dropped).toBeGreaterThan(0);
    expect(s.sending, 'the sender thread is blocked inside umad_send').toBe(1);
    expect(s.sent + s.sending + s.queued + s.dropped + s.errors).toBe(count + 20);
    expect(s.direct).toBe(0);
    // The pace under umad2sim (src/api/backend.ts umadWindow: the requests on the wire at once) is
    // at most half of what the socket took before umad_send blocked: the SM's own MADs never wait
    // for room.
    const sndbuf = Number(readFileSync('/proc/sys/net/core/wmem_default', 'utf8'));
    const { pace } = umadWindow(64, { LD_PRELOAD: 'libumad2sim.so' }, () => sndbuf);
    expect(s.sent + s.errors - 20, `pace ${pace}`).toBeGreaterThanOrEqual(2 * pace!);
    // Resumed: what was queued went out.
    expect(out.afterResume.queued).toBe(0);
    expect(out.afterResume.sent + out.afterResume.errors).toBe(s.sent + s.sending + s.queued + s.errors);
    expect(out.afterResume.dropped).toBe(s.dropped);
  });
});

/** Issue #32: under umad2sim the RPC keeps more requests outstanding than the socket pair may
 * hold; the addon paces them (api/backend.ts umadWindow, native setPace): at most `pace` on the
 * wire, each answer freeing a slot and the receiver thread sending the next queued MAD, a slot
 * without an answer freed after 100 ms. */
describe('paced umad sends', () => {
  it('keep at most the pace on the wire while ibsim is stopped, drop a timed-out try still queued, send the rest as answers come, and free a lost answer\'s slot; responses take no slot, and a response queued at the close is still written', async () => {
    const pace = 4;
    const count = 200;
    const r = await runNodePreloaded(PACE, [JSON.stringify({ ibsimPid: ibsim!.pid, pace, count })], { ibsim: ibsim!, timeoutMs: 60_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { stopped: SendStats; stoppedMs: number; responded: SendStats; unsentStats: SendStats; resumed: SendStats; answers: number; lost: SendStats; lostMs: number; answersAtEnd: number; beforeClose: SendStats; closed: SendStats };
    // Stopped: `pace` written to the socket, the rest queued (unless the check came after an expiry).
    if (out.stoppedMs < 95) expect(out.stopped).toMatchObject({ sent: pace, inFlight: pace, queued: count - pace, sending: 0, dropped: 0, errors: 0, expired: 0 });
    else expect(out.stopped.sent).toBeLessThan(count);
    // A response sent while every slot is taken goes out at once: it takes no slot.
    expect(out.responded.sent).toBe(out.stopped.sent + 1);
    expect(out.responded.queued).toBe(out.stopped.queued);
    // The last request unsent (its try timed out): out of the queue, never sent.
    expect(out.unsentStats.unsent).toBe(1);
    expect(out.unsentStats.queued).toBe(out.stopped.queued - 1);
    // Resumed: every other request answered, nothing expired, the queue sent as answers freed slots.
    expect(out.answers, JSON.stringify(out)).toBe(count - 1);
    expect(out.resumed).toMatchObject({ sent: count, inFlight: 0, queued: 0, dropped: 0, errors: 0, direct: 0, unsent: 1 });
    expect(out.resumed.byReceiver).toBeGreaterThan(0);
    // Stopped again with pace + 5 sent: the first `pace` never answered, their slots expired, so
    // the last 5 went out too; every one of them answered once ibsim resumed.
    expect(out.lost.sent - count).toBe(pace + 5);
    expect(out.lost.expired).toBeGreaterThanOrEqual(pace);
    expect(out.lost.queued).toBe(0);
    expect(out.answersAtEnd).toBe(count - 1 + pace + 5);
    // Closed in the turn that queued a response and a request: the response still written, the
    // request dropped (an answer to it would find the port closed).
    expect(out.closed.sent - out.beforeClose.sent).toBe(1);
    expect(out.closed.dropped - out.beforeClose.dropped).toBe(1);
    expect(out.closed.queued).toBe(0);
  });
});

/** Issue #32: a request queued while the receiver thread was inside umad_send (sending the next
 * request on an answer) found the sender thread asleep waiting for work and owed it no wake-up;
 * the receiver, its one slot taken, did not wake it either: the request waited until the queue ran
 * empty. Seen at 5k nodes through ibsim as every SMP of one stretch of the discovery timing out
 * for 3-15 s (908 nodes or 1,434 links left out of a --once sweep, or SUBNET UP after 40 s);
 * `gdb` showed the sender in an untimed wait with 64 MADs queued and none on the wire. */
describe('paced umad sends: the sender woken for a MAD queued while the receiver sends', () => {
  it('a request queued while the receiver thread holds its send is sent and answered', async () => {
    const hold = 400;
    const r = await runNodePreloaded(LOST_WAKE, [JSON.stringify({ ibsimPid: ibsim!.pid, hold })], { ibsim: ibsim!, timeoutMs: 30_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { answers: number; stats: SendStats };
    expect(out.answers, JSON.stringify(out)).toBe(3);
    expect(out.stats).toMatchObject({ sent: 3, queued: 0, dropped: 0, errors: 0 });
  });
});

/** Issue #32: the transport stages MADs and hands a burst to the addon in one sendMany call (one
 * N-API call and one lock of the send queue for all of it, instead of a call and two locks each). */
describe('umad sends handed over in bursts (sendMany)', () => {
  it('a burst is handed over a full stage at a time and at the end of its turn, answered in send order; a longer MAD follows what is staged; bad records are refused before anything is sent', async () => {
    const r = await runNodePreloaded(SEND_MANY, [], { ibsim: ibsim!, timeoutMs: 30_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { handedInTurn: number; tids: number[]; stats: SendStats; refused: Record<string, string>; afterRefused: SendStats };
    // Two full stages of 64 reached the addon inside the turn; the other 22 at its end.
    expect(out.handedInTurn).toBe(128);
    expect(out.tids).toEqual(Array.from({ length: 153 }, (_, i) => i + 1));
    expect(out.stats).toMatchObject({ sent: 153, queued: 0, dropped: 0, errors: 0, direct: 0 });
    expect(out.refused.tooLong).toMatch(/^RangeError: MAD 0 \(offset 0, length 257\) is out of range/);
    expect(out.refused.pastData).toMatch(/^RangeError: MAD 0 \(offset 100, length 256\) is out of range/);
    expect(out.refused.fewerRecords).toMatch(/^RangeError: meta holds fewer than 2 records/);
    expect(out.refused.metaNotU32).toMatch(/^TypeError: meta must be a Uint32Array/);
    expect(out.afterRefused).toMatchObject({ sent: 153, queued: 0, dropped: 0, errors: 0 });
  });
});
