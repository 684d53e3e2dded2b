/** One clock per process (#31): an SM opened on the in-process fabric runs on the fabric's clock,
 * so what the fabric does in time (an injected delay) meets the SM's timers (its MAD timeouts) as
 * on a real fabric. With the fabric on a virtual clock of its own and the SM on real time, a delay
 * of 1.5 s cost no time at all and no SMP ever timed out. */
import { describe, expect, it } from 'vitest';
import { openSm, Logger } from '../src/index.js';
import { MemorySink } from '../src/util/log.js';

describe('the simulated fabric and its SM on one time base', () => {
  it('a MAD the fabric holds past the SM\'s 1 s timeout times out and is retried; the subnet comes up', async () => {
    const sink = new MemorySink();
    const sm = await openSm({ sim: 'gen:fattree2:leaves=2,spines=2,hosts=2', seed: 3, sweepIntervalS: 0, log: new Logger(sink, 'info') });
    try {
      expect(sm.sim!.clock).toBe(sm.backend.clock);
      const t0 = sm.backend.clock.now();
      sm.sim!.setFaults({ delayMs: 1500, delayRate: 0.05 });
      await sm.start();
      const rpc = sm.backend.rpc.stats;
      expect(rpc.timeouts).toBeGreaterThan(0);
      // retried: by the sweep's one retry layer (sm/retry.ts; MadRpc makes one try of a sweep's SMP)
      const retried = sink.lines.map((l) => /SMP retries in this sweep.*\brecovered=(\d+)/.exec(l)).find((m) => m);
      expect(Number(retried?.[1] ?? 0), sink.lines.join('\n')).toBeGreaterThan(0);
      // a timeout is 1 s of the one clock
      expect(sm.backend.clock.now() - t0).toBeGreaterThanOrEqual(1000);
      expect(sm.snapshot!.fabric.nodes.length).toBe(8);
    } finally {
      await sm.stop();
    }
  });
});
