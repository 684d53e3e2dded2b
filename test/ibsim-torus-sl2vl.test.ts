/** The torus's per-port SL2VL tables on ibsim: ibsm (`--routing torus`) programs them over real
 * MADs, `smpquery sl2vl` reads every switch's tables back, and they equal the tables the torus
 * engine computes in-process for the same fabric (the .net file, numbered by GUID as the SM does). Every process stopped by PID. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runPreloaded } from './helpers/ibsim.js';
import { TIMEOUT, withIbsm } from './helpers/sa-compare.js';
import { formatIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { loadFabricSpec } from '../src/model/load.js';
import { canonicalFabric } from '../src/model/json.js';
import { portSl2Vl } from '../src/model/routes.js';
import { getEngine } from '../src/routing/index.js';
import { NodeType } from '../src/wire/mad.js';

describe('torus SL2VL on ibsim', () => {
  it(
    'smpquery sl2vl of every switch port pair equals the in-process torus engine\'s table',
    async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-torus-sl2vl-'));
      const file = path.join(dir, 'torus.net');
      writeFileSync(file, formatIbnetdiscover(loadFabricSpec('gen:torus:5x5,hosts=1'), { timestamp: 'x' }));
      await withIbsm(
        file,
        async (ib, plan) => {
          // numbered by GUID, as the SM numbers what it discovers (the engine's coordinates follow the switch order)
          const f = canonicalFabric(plan.fabric);
          for (const n of f.nodes) for (const p of n.ports) if (p && plan.lidOfGuid.has(p.guid)) p.lid = plan.lidOfGuid.get(p.guid)!;
          const r = getEngine('torus').route(f, { lmc: 0, maxVls: 8 });
          expect(r.vlsUsed).toBe(2);
          const host = plan.caHosts[0]!;
          let pairs = 0;
          let ones = 0;
          for (const [ni, t] of r.sl2vlByPorts!) {
            const n = f.nodes[ni]!;
            expect(n.type).toBe(NodeType.Switch);
            const lid = n.ports[0]!.lid!;
            const linked = n.ports.map((p, i) => (i > 0 && p?.peer ? i : -1)).filter((i) => i > 0);
            for (const out of linked) {
              const q = await runPreloaded('smpquery', ['sl2vl', String(lid), String(out)], { ibsim: ib, simHost: host, timeoutMs: 20_000 });
              expect(q.code, q.stderr).toBe(0);
              const rows = new Map([...q.stdout.matchAll(/ports: in\s+(\d+), out\s+(\d+):\s*\|((?:\s*\d+\|){16})/g)].map((m) => [`${m[1]}>${m[2]}`, m[3]!.split('|').map((x) => x.trim()).filter((x) => x !== '').map(Number)]));
              for (const inP of [0, ...linked]) {
                if (inP === out) continue;
                const got = rows.get(`${inP}>${out}`);
                expect(got, `${n.desc} in ${inP} out ${out}:\n${q.stdout}\n${q.stderr}`).toEqual([...portSl2Vl(t, inP, out)]);
                pairs++;
                ones += got!.filter((x) => x === 1).length;
              }
            }
          }
          expect(pairs).toBeGreaterThan(0);
          expect(ones).toBeGreaterThan(0);
        },
        ['--routing', 'torus'],
      );
    },
    20 * TIMEOUT,
  );
});
