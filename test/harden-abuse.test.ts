/** Issue #29 item 6, the short run of the abuse harness (scripts/bench/abuse.mjs; the long run and
 * its figures: scripts/bench/README.md): ibsm on ibsim attacked at once from five simulated hosts
 * (20,000 SA MADs with random attributes, methods and RMPP headers; 5,000 SMInfo Sets with wrong
 * SM_Keys to its port) and on its own host (500 abusive control-socket and HTTP connections),
 * while a sixth host asks PathRecords and `ibsm status` goes through the control socket. */
import { describe, expect, it } from 'vitest';
import { requireIbsim } from './helpers/ibsim.js';

interface AbuseFigures {
  attackers: Array<{ sent: number; dropped: number; answers?: number; refused?: number }>;
  idle: { rssMb: number; metricsBytes: number; logBytes: number; pathRecordMs: { p50: number; p99: number; n: number } };
  after: { alive: boolean; rssPeakMb: number; logBytes: number; metricsBytes: number; pathRecordFailures: number; failureSample: string[]; pathRecordMs: { p50: number; p99: number; max: number; n: number }; status: { ok: number; failed: number } };
  conns: number;
}

describe('abuse harness, short run', () => {
  it('ibsm stays up, answers every legitimate PathRecord and status, refuses every wrong-key SMInfo Set; log, metrics and memory stay bounded', async () => {
    requireIbsim();
    // @ts-expect-error a script of the repository, plain JavaScript
    const { runAbuse } = (await import('../scripts/bench/abuse.mjs')) as { runAbuse: (o: object) => Promise<AbuseFigures> };
    const r = await runAbuse({ sa: 20_000, sminfo: 5_000, conns: 500, hosts: 3, idleMs: 2000 });
    if (process.env.ABUSE_PRINT) console.log(JSON.stringify(r));
    expect(r.after.alive).toBe(true);
    const [sa, sminfo] = [r.attackers.slice(0, 3), r.attackers.slice(3)];
    expect(sa.reduce((a, x) => a + x.sent - x.dropped, 0)).toBeGreaterThan(19_000);
    expect(sminfo.reduce((a, x) => a + (x.refused ?? 0), 0)).toBe(sminfo.reduce((a, x) => a + x.sent - x.dropped, 0)); // every one refused
    expect(r.conns).toBe(500);
    expect(r.after.pathRecordFailures, r.after.failureSample.join('; ')).toBe(0);
    expect(r.after.pathRecordMs.n).toBeGreaterThan(10);
    expect(r.after.status.failed).toBe(0);
    expect(r.after.status.ok).toBeGreaterThan(0);
    expect(r.after.logBytes - r.idle.logBytes).toBeLessThan(64 * 1024); // one line per host and code, not 5,000
    expect(r.after.metricsBytes).toBeLessThanOrEqual(2 * r.idle.metricsBytes);
    expect(r.after.rssPeakMb).toBeLessThan(2 * r.idle.rssMb);
  }, 120_000);
});
