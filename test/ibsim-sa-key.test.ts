/** The SA_Key apart from the SM_Key (`--sa-key`, opensm.conf sa_key), on ibsim with saquery
 * (`--smkey`, `-K`) as the client: the SMInfoRecord's SM_Key is shown to a request carrying the
 * SA_Key (trusted) and hidden from one carrying 0; a request carrying another non-zero key, the
 * SM_Key included, is dropped unanswered (as OpenSM: osm_sa_mad_ctrl.c, ERR 1A04), logged
 * (IBSM-5040) and counted (ibsm_sa_wrong_key_total). */
import { describe, expect, it } from 'vitest';
import { runPreloaded } from './helpers/ibsim.js';
import { TIMEOUT, fattreeFile, waitFor, withIbsm } from './helpers/sa-compare.js';
import { logRe } from './helpers/log-lines.js';

const SM_KEY = '0x0000000000000005';
const SA_KEY = '0x00000000000000ab';

describe('--sa-key on ibsim (saquery --smkey)', () => {
  it('the SA_Key is trusted (SMInfoRecord SM_Key shown), 0 is not, the SM_Key and any other key are dropped, logged and counted', async () => {
    await withIbsm(
      fattreeFile(),
      async (ib, plan, sm) => {
        const host = plan.caHosts.at(-1)!;
        const smir = (key: string) => runPreloaded('saquery', ['-K', '--smkey', key, 'SMIR'], { ibsim: ib, simHost: host, timeoutMs: 30_000 });
        const smKeyOf = (out: string): string | undefined => /SM_Key\.+(0x[0-9a-f]+)/i.exec(out)?.[1];

        const trusted = await smir(SA_KEY);
        expect(trusted.code, trusted.stderr).toBe(0);
        expect(BigInt(smKeyOf(trusted.stdout) ?? -1)).toBe(BigInt(SM_KEY));

        const plain = await smir('0');
        expect(plain.code, plain.stderr).toBe(0);
        expect(BigInt(smKeyOf(plain.stdout) ?? -1)).toBe(0n);

        // The SM_Key is not the SA_Key: no answer (saquery times out), as OpenSM.
        const before = sm.log().length;
        const wrong = await runPreloaded('saquery', ['-K', '--smkey', SM_KEY, '-t', '200', 'SMIR'], { ibsim: ib, simHost: host, timeoutMs: 30_000 });
        expect(wrong.code).not.toBe(0);
        expect(smKeyOf(wrong.stdout)).toBeUndefined();
        await waitFor('IBSM-5040', () => logRe('IBSM-5040', 'lid=\\d+ key=0x0000000000000005 ').test(sm.log().slice(before)), 10_000);
        expect(sm.log()).not.toMatch(/0x0*ab\b/i); // the SA_Key is never logged
        const port = Number(logRe('IBSM-8020', 'url=http://127\\.0\\.0\\.1:(\\d+)/metrics').exec(sm.log())?.[1]);
        const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        // saquery sent its request (and retries) with the wrong key: every one dropped and counted
        expect(Number(/^ibsm_sa_wrong_key_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
      },
      ['--sm-key', SM_KEY, '--sa-key', SA_KEY, '--metrics-listen', '127.0.0.1:0'],
    );
  }, 3 * TIMEOUT);
});
