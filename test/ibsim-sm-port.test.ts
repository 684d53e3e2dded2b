/** One SM per port (issue #28; src/api/sm-port-lock.ts), on ibsim: a second `ibsm run` on the
 * port of a running one is refused (exit 1, SmPortBusyError naming the first's PID) and leaves the
 * port's IsSM bit set (smpquery portinfo: CapabilityMask bit 1), so a priority-1 ibsm on another
 * host finds the priority-10 master and stands by (sminfo from a third host names the master).
 * Before, the second one also became MASTER and its exit cleared the first's IsSM, after which a
 * priority-1 SM elsewhere became MASTER beside the priority-10 one. A SIGKILLed SM's claim is
 * taken over by the next start on that port. Every process is stopped by PID. */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { startIbsim, runPreloaded, startPreloaded, IBSIM_EXAMPLES, type Ibsim, type PreloadedProcess } from './helpers/ibsim.js';
import { TIMEOUT, CLI, waitFor } from './helpers/sa-compare.js';
import { logRe } from './helpers/log-lines.js';

const FILE = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca');
const ARGS = ['run', '--umad', '--control-socket', 'none', '--guid2lid', 'none', '--sweep-interval', '1'];

const ibsmAt = (ib: Ibsim, host: string, extra: string[]): PreloadedProcess =>
  startPreloaded('bash', ['-c', 'exec "$0" "$@" 2>&1', process.execPath, CLI, ...ARGS, ...extra], { ibsim: ib, simHost: host, timeoutMs: 10 * TIMEOUT });

async function capMask(ib: Ibsim, lid: number): Promise<number> {
  const r = await runPreloaded('smpquery', ['portinfo', String(lid), '1'], { ibsim: ib, simHost: 'Hca3', timeoutMs: 20_000 });
  const m = /CapMask:\.*(0x[0-9a-f]+)/i.exec(r.stdout);
  if (!m) throw new Error(`smpquery portinfo ${lid}: ${r.stdout}${r.stderr}`);
  return Number(m[1]);
}
const IS_SM = 0x2;

describe('one SM per port, on ibsim', () => {
  it('a second ibsm on the same port is refused and leaves IsSM; a priority-1 SM elsewhere stands by; a killed SM\'s claim is taken over', async () => {
    const ib = await startIbsim(FILE);
    const procs: PreloadedProcess[] = [];
    try {
      const first = ibsmAt(ib, 'Hca1', ['--priority', '10']);
      procs.push(first);
      const up = await first.waitForLine((l) => logRe('IBSM-1001').test(l), 30_000);
      expect(up).toBeDefined();
      const smLid = Number(/smLid=(\d+)/.exec(first.stdout())?.[1] ?? /IBSM-2020 .*smLid=(\d+)/.exec(first.stdout())?.[1]);
      expect(smLid).toBeGreaterThan(0);
      expect(await capMask(ib, smLid) & IS_SM, 'IsSM of the first SM').toBe(IS_SM);

      // The second, on the same port: refused at once, naming the first.
      const second = await ibsmAt(ib, 'Hca1', []).done;
      expect(second.code, second.stdout).toBe(1);
      expect(second.stdout).toMatch(logRe('IBSM-9103', `error="another SM runs on .* process ${first.pid} holds .*" errorType=SmPortBusyError`));
      expect(second.stdout).not.toMatch(logRe('IBSM-1020'));
      // Its exit left the first's IsSM alone.
      expect(await capMask(ib, smLid) & IS_SM, 'IsSM after the refused one exited').toBe(IS_SM);

      // A priority-1 ibsm on another host finds the master and stands by.
      const low = ibsmAt(ib, 'Hca2', ['--priority', '1']);
      procs.push(low);
      await low.waitForLine((l) => logRe('IBSM-1021').test(l), 30_000);
      await new Promise((r) => setTimeout(r, 2500)); // two of its sweeps' worth
      expect(low.stdout()).not.toMatch(logRe('IBSM-1020'));
      const si = await runPreloaded('sminfo', [], { ibsim: ib, simHost: 'Hca3', timeoutMs: 20_000 });
      expect(si.code, si.stderr).toBe(0);
      expect(si.stdout).toMatch(new RegExp(`sminfo: sm lid ${smLid} .*priority 10 state 3 SMINFO_MASTER`));
      await low.stop('SIGTERM');

      // The first killed (its claim left behind): the next start on that port takes it over.
      await first.stop('SIGKILL');
      const again = ibsmAt(ib, 'Hca1', ['--priority', '10']);
      procs.push(again);
      await again.waitForLine((l) => logRe(['IBSM-1001', 'IBSM-1020', 'IBSM-1021']).test(l), 30_000);
      expect(again.stdout()).not.toMatch(/SmPortBusyError/);
      await waitFor('the restarted SM master', () => logRe('IBSM-1020').test(again.stdout()), 30_000);
      const r = await again.stop('SIGTERM');
      expect(r.code, r.stdout).toBe(0);
    } finally {
      for (const p of procs) await p.stop('SIGKILL').catch(() => undefined);
      await ib.stop();
    }
  }, 6 * TIMEOUT);
});
