/** Process exit under umad2sim while ibsim's answers are still arriving (native/umad2sim-exit.c).
 * umad2sim's own atexit clean-up cancels and joins its receiver thread while it holds the mutex
 * that thread takes after each datagram, and a datagram that arrives after a port is closed makes
 * that thread dereference a freed queue: a process that exits in a stream of MADs could hang for
 * ever or die of SIGSEGV (seen: 3 hangs and a SIGSEGV in 40 exits with 32 MADs a millisecond, 1
 * SIGSEGV in 80 with a window of 64, before the staged exit). The transport's exit hook now stops
 * the ports' threads, detaches from ibsim (which then delivers nothing), lets umad2sim's receiver
 * take what is on its way, and only then closes the ports. The race is timing: this test runs
 * many exits in a stream; on the old code it fails only now and then, not every run. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireIbsim, runNodePreloaded, startIbsim, type Ibsim } from './helpers/ibsim.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/umad-exit-under-load.mjs', import.meta.url));
const CLOSE = fileURLToPath(new URL('./fixtures/umad-close-in-stream.mjs', import.meta.url));
const NET = fileURLToPath(new URL('./fixtures/one-switch.net', import.meta.url));
const RUNS = 40;

let ibsim: Ibsim | undefined;
let dir: string | undefined;

beforeAll(async () => {
  requireIbsim();
  dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-umad2sim-exit-'));
  ibsim = await startIbsim(NET);
});

afterAll(async () => {
  try {
    if (ibsim) process.kill(ibsim.pid, 'SIGCONT'); // a fixture that died with ibsim stopped
  } catch {
    /* gone */
  }
  await ibsim?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('exit under umad2sim in a stream of answers', () => {
  it(`${RUNS} processes exit while 64 SMPs are outstanding: each ends with code 0, leaves ibsim's client slot free (ibsim has 10) and its sys-<pid> tree removed`, async () => {
    const outcomes: string[] = [];
    let answered = 0;
    for (let i = 0; i < RUNS; i++) {
      const cwd = mkdtempSync(path.join(dir!, 'run-'));
      const r = await runNodePreloaded(FIXTURE, [String(40 + (i % 5) * 20)], { ibsim: ibsim!, simHost: 'H1', cwd, timeoutMs: 15_000 });
      const line = r.stdout.trim().split('\n').pop() ?? '';
      if (line.startsWith('{')) answered += (JSON.parse(line) as { received: number }).received > 0 ? 1 : 0;
      // umad2sim's clean-up ran to its end: it removes the sysfs tree it wrote in the cwd.
      const left = readdirSync(cwd);
      outcomes.push(r.timedOut ? 'hung' : r.signal ? `signal ${r.signal}` : r.code !== 0 ? `code ${r.code}: ${r.stderr.slice(-300)}` : left.length ? `left ${left.join(',')}` : 'ok');
    }
    expect(outcomes.filter((o) => o !== 'ok')).toEqual([]);
    // The stream was there: the processes exited with answers arriving, not before the first.
    expect(answered).toBeGreaterThan(RUNS / 2);
  }, 600_000);

  it('a port closed with 64 SMPs outstanding (ibsim stopped until after the close): their answers arrive after it and the process lives on; then 12 ports more opened and closed (umad2sim has 8 fds), and it exits with code 0', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await runNodePreloaded(CLOSE, ['12', String(ibsim!.pid)], { ibsim: ibsim!, simHost: 'H1', timeoutMs: 30_000 });
      expect({ code: r.code, signal: r.signal, timedOut: r.timedOut }, r.stderr).toEqual({ code: 0, signal: null, timedOut: false });
      expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toMatchObject({ reopened: 12 });
    }
  }, 300_000);
});
