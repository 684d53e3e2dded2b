/** The writer's output loads into the real ibsim, and the real ibnetdiscover then sees the same
 * fabric (and prints exactly what our writer prints for that source node). */
import { describe, expect, test } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateFabric } from '../src/model/generators.js';
import { formatIbnetdiscover, parseIbnetdiscoverFull } from '../src/model/ibnetdiscover.js';
import { diffFabrics } from '../src/model/json.js';
import { runPreloaded, startIbsim } from './helpers/ibsim.js';

const SPECS = ['gen:fattree2:leaves=3,spines=2,hosts=2', 'gen:torus:3x2,hosts=1', 'gen:dragonfly:a=2,p=1,h=1', 'gen:random:switches=8,degree=3,hosts=1,seed=4'];

describe('writer output under ibsim', () => {
  for (const spec of SPECS) {
    test(`${spec}: ibsim loads our text; ibnetdiscover sees the same fabric`, async () => {
      const f = generateFabric(spec);
      const dir = mkdtempSync(path.join(os.tmpdir(), 'topo-ibsim-'));
      const file = path.join(dir, 'fabric.topo');
      const written = formatIbnetdiscover(f, { timestamp: 'T' });
      writeFileSync(file, written);
      const ibsim = await startIbsim(file);
      try {
        const r = await runPreloaded('ibnetdiscover', [], { ibsim, cwd: dir, timeoutMs: 15_000 });
        expect(r.code, r.stderr).toBe(0);
        const seen = parseIbnetdiscoverFull(r.stdout);
        expect(diffFabrics(f, seen.fabric)).toEqual([]);
        // ibsim attaches at the first node of the file; from there our writer must print the same text.
        const first = parseIbnetdiscoverFull(written).fabric.nodes[0]!.guid;
        const stamp = /^# Topology file: generated on (.*)$/m.exec(r.stdout)![1]!;
        expect(formatIbnetdiscover(f, { sourceNode: first, timestamp: stamp })).toBe(r.stdout);
      } finally {
        await ibsim.stop();
      }
    }, 20_000);
  }
});
