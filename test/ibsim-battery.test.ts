/** Diag tools run back to back under ibsm on ibsim. umad2sim clients do no RMPP (they read the
 * first segment of a multi-record answer as the whole answer and never ACK), and libibmad's TID
 * sequence restarts in every process: RMPP resends and the closing ABORT of an answer to one tool
 * reached the next tool at the same node with a TID it was waiting for (seen: `saquery SR` right
 * after `saquery NR` printed the NodeRecords as ServiceRecords; ibqueryerrors aborted with
 * "double free"; 12 of 48 commands died). The SA now sends the first window once to a receiver
 * that never ACKs (RmppOptions.quietWithoutAck). Every process is stopped by PID. */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { runPreloaded, IBSIM_EXAMPLES } from './helpers/ibsim.js';
import { TIMEOUT, parseSaquery, withIbsm } from './helpers/sa-compare.js';
import { hasCode } from './helpers/log-lines.js';

describe('a battery of diag commands back to back under ibsm', () => {
  it('crashes nothing, and no answer to one command reaches the next (SR after NR is empty)', async () => {
    await withIbsm(path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca'), async (ib, plan, sm) => {
      const host = plan.caHosts.at(-1)!;
      const cas = plan.ends.filter((e) => !e.switch);
      const sws = plan.ends.filter((e) => e.switch);
      const [a, b] = [cas[0]!.lid, cas.at(-1)!.lid];
      const sw = sws[0]!.lid;
      const battery: string[][] = [];
      // Multi-record SA answers (each more than one RMPP segment) interleaved with SMP and PMA tools.
      for (let round = 0; round < 2; round++) {
        battery.push(
          ['saquery'], ['saquery', 'SR'], ['saquery', 'NR'], ['saquery', 'SR'], ['saquery', 'PIR'], ['saquery', '-c'], ['saquery', 'GIR'], ['saquery', 'VLAR'],
          ['saquery', 'SL2VL'], ['saquery', '-x'], ['saquery', 'LR'], ['saquery', '-p'], ['ibqueryerrors'], ['saquery', '-N'], ['iblinkinfo'], ['saquery', 'LFTR'],
          ['ibnetdiscover'], ['saquery', 'PKTR'], ['ibhosts'], ['ibswitches'], ['saquery', 'SWIR'], ['sminfo'], ['perfquery'], ['saquery', '-s'],
        );
      }
      battery.push(['saquery', '-g'], ['smpquery', 'nodeinfo', String(sw)], ['ibroute', String(sw)], ['ibtracert', String(a), String(b)]);
      expect(battery.length).toBe(52);
      const failures: string[] = [];
      const outputs: Array<{ cmd: string; out: string }> = [];
      for (const [cmd, ...args] of battery) {
        const r = await runPreloaded(cmd!, args, { ibsim: ib, simHost: host, timeoutMs: 30_000 });
        const line = [cmd, ...args].join(' ');
        outputs.push({ cmd: line, out: r.stdout });
        if (r.signal || r.code !== 0 || r.timedOut) failures.push(`${line}: exit ${r.code} signal ${r.signal}${r.timedOut ? ' (timed out)' : ''}: ${r.stderr.slice(-300)}`);
      }
      expect(failures).toEqual([]);
      // No services are registered: every `saquery SR` prints nothing (a stray NodeRecord resend would print records).
      for (const o of outputs.filter((x) => x.cmd === 'saquery SR')) expect(parseSaquery(o.out), o.out).toEqual([]);
      // The SA did not keep resending to tools that had exited.
      expect(hasCode(sm.log(), 'IBSM-5002')).toBe(false);
    });
  }, 4 * TIMEOUT);
});
