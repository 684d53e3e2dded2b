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
    // The window under umad2sim (src/api/backend.ts umadWindow) is at most half of what the socket
    // took before umad_send blocked: the SM's own MADs never wait for room.
    const sndbuf = Number(readFileSync('/proc/sys/net/core/wmem_default', 'utf8'));
    const { window } = umadWindow(64, { LD_PRELOAD: 'libumad2sim.so' }, () => sndbuf);
    expect(s.sent + s.errors - 20, `window ${window}`).toBeGreaterThanOrEqual(2 * window);
    // Resumed: what was queued went out.
    expect(out.afterResume.queued).toBe(0);
    expect(out.afterResume.sent + out.afterResume.errors).toBe(s.sent + s.sending + s.queued + s.errors);
    expect(out.afterResume.dropped).toBe(s.dropped);
  });
});
