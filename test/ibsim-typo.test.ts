/** Configuration is checked before the first SMP: `ibsm run --umad --routing ftre --once` (a
 * typo) exits 2 and leaves the fabric exactly as it was, as the real tools see it (ibnetdiscover:
 * every LID still 0; smpquery over directed routes: every port still Initialize, no SM LID). */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { startIbsim, runPreloaded, IBSIM_EXAMPLES } from './helpers/ibsim.js';
import { tool } from './helpers/witness.js';
import { parseIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { NodeType } from '../src/wire/mad.js';

const CLI = path.resolve('dist/cli/main.js');

describe('a routing-name typo leaves the fabric untouched', () => {
  it(
    'ibsm run --umad --routing ftre --once: exit 2 with a did-you-mean, no LID, no SM LID, no port armed',
    async () => {
      const ib = await startIbsim(path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca'));
      try {
        const r = await runPreloaded(process.execPath, [CLI, 'run', '--umad', '--routing', 'ftre', '--once'], { ibsim: ib, simHost: 'Hca1', timeoutMs: 60_000 });
        expect(r.code).toBe(2);
        expect(r.stderr).toMatch(/unknown routing engine "ftre" \(did you mean "ftree"\?\)/);
        const seen = parseIbnetdiscover(await tool(ib, 'ibnetdiscover', []));
        expect(seen.nodes.length).toBe(6);
        let checked = 0;
        for (const n of seen.nodes) for (const p of n.ports) if (p && (n.type === NodeType.Switch || p.peer)) expect(p.lid ?? 0, `${n.desc} LID`).toBe(0);
        // Directed routes from Hca1: its own port, Switch1 (ports 1, 2, 3), Switch2 through port 3.
        for (const [dr, port] of [['0', '1'], ['0,1', '1'], ['0,1', '2'], ['0,1', '3'], ['0,1,3', '1'], ['0,1,3', '2']] as const) {
          const out = await tool(ib, 'smpquery', ['-D', 'portinfo', dr, port], 'Hca1');
          expect(out, `DR ${dr} port ${port}`).toMatch(/^LinkState:\.+Initialize$/m);
          expect(out).toMatch(/^SMLid:\.+0$/m);
          checked++;
        }
        expect(checked).toBe(6);
      } finally {
        await ib.stop();
      }
    },
    120_000,
  );
});
