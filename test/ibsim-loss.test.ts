/** MAD loss on the SM's own port (ibsim's console `Error "<node>"[1] <pct>`): ibsm must come up in
 * one heavy sweep with every port ACTIVE and complete routes, and the real tools (ibnetdiscover,
 * smpquery, ibroute) must say so once the loss is switched off. Under `Error` ibsim carries out an
 * SMP one hop away and loses its answer (docs/ibsim-notes.md), so the INIT→ARMED PortInfo Sets
 * whose answers were lost are retried, refused (the port is Armed already) and found done. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startIbsim, runPreloaded } from './helpers/ibsim.js';
import { witnessUp } from './helpers/witness.js';
import { formatIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { loadFabricSpec } from '../src/model/load.js';
import { withCode, logRe } from './helpers/log-lines.js';

const CLI = path.resolve('dist/cli/main.js');
const TIMEOUT = 60_000;
const SPEC = 'gen:fattree2:leaves=6,spines=3,hosts=8';

function fatTree(): { file: string; host: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-loss-'));
  const file = path.join(dir, 'fattree.net');
  const text = formatIbnetdiscover(loadFabricSpec(SPEC), { timestamp: 'x' });
  writeFileSync(file, text);
  // The SM runs on the first CA of the file (its ibsim node id is the quoted name).
  const host = /^Ca\s+\d+\s+"([^"]+)"/m.exec(text)![1]!;
  return { file, host };
}

describe('ibsm run --umad converges under MAD loss on its own port (ibsim Error)', () => {
  for (const pct of [1, 5, 10, 20]) {
    it(
      `${pct} % loss: SUBNET UP in one heavy sweep, exit 0; then every port ACTIVE and routes complete by the real tools`,
      async () => {
        const { file, host } = fatTree();
        const ib = await startIbsim(file);
        try {
          await ib.console(`Error "${host}"[1] ${pct}`);
          const r = await runPreloaded(process.execPath, [CLI, 'run', '--umad', '--once'], { ibsim: ib, simHost: host, timeoutMs: TIMEOUT });
          await ib.console(`Error "${host}"[1] 0`);
          expect(r.stderr).toMatch(logRe('IBSM-1001'));
          expect(r.code).toBe(0);
          // One heavy sweep, nothing left out, nothing failed.
          expect(withCode(r.stderr, 'IBSM-2001')).toHaveLength(1);
          expect(r.stderr).not.toMatch(/left out|write failed|sweep failed/);
          // The loss was real: ibsim counts each MAD it dropped at the port in PortRcvErrors.
          const pc = await runPreloaded('perfquery', [], { ibsim: ib, simHost: host, timeoutMs: 30_000 });
          const drops = Number(/^PortRcvErrors:\.+(\d+)$/m.exec(pc.stdout)![1]);
          if (pct >= 5) expect(drops).toBeGreaterThan(0);
          if (pct === 20) {
            // Lost answers to INIT→ARMED Sets: the retry is refused, the re-read finds it done.
            const line = withCode(r.stderr, 'IBSM-1034')[0]!;
            expect(line).toBeDefined();
            expect(Number(/setsFoundDone=(\d+)/.exec(line)![1])).toBeGreaterThan(0);
          }
          const w = await witnessUp(ib, loadFabricSpec(SPEC), 1);
          expect(w.active).toBe(w.ports);
        } finally {
          await ib.stop();
        }
      },
      TIMEOUT * 4,
    );
  }
});
