/** An opensm.conf as operators write it, given to ibsm on ibsim; the real diags are the witness
 * (#28 item 3): reassign_lids TRUE (with a trailing comment) renumbers ports a guid2lid file had
 * placed elsewhere, as ibaddr on the host shows; without it the file's LIDs are kept. A typo is
 * refused with its line before any MAD. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runPreloaded, startIbsim } from './helpers/ibsim.js';
import { caHostsOf, fattreeFile, startIbsm, stopSa } from './helpers/sa-compare.js';
import { runCli } from './helpers/cli.js';
import { loadFabricSpec } from '../src/model/load.js';
import { endPorts } from '../src/model/snapshot.js';

const TIMEOUT = 120_000;

/** The LID ibaddr reports for the host's port, after ibsm came up with `conf` and `guid2lid`. */
async function hostLid(file: string, conf: string, guid2lid: string): Promise<number> {
  const ib = await startIbsim(file);
  let sm: Awaited<ReturnType<typeof startIbsm>> | undefined;
  try {
    sm = await startIbsm(ib, guid2lid, ['--config', conf]);
    const r = await runPreloaded('ibaddr', [], { ibsim: ib, simHost: caHostsOf(file).at(-1)!, timeoutMs: 20_000 });
    const m = /LID start (0x[0-9a-f]+)/i.exec(r.stdout);
    expect(m, r.stdout + r.stderr).not.toBeNull();
    return Number(m![1]);
  } finally {
    await stopSa(sm, 'ibsm');
    await ib.stop();
  }
}

describe('opensm.conf on ibsim', () => {
  it('reassign_lids TRUE: the first sweep gives fresh LIDs, not the guid2lid file\'s (ibaddr on the host)', async () => {
    const file = fattreeFile();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-osmconf-'));
    // every end port placed at 0x200 and up by the file
    const g2lText = endPorts(loadFabricSpec(file))
      .filter((e) => e.linked)
      .map((e, i) => `0x${e.guid.toString(16).padStart(16, '0')} 0x${(0x200 + i).toString(16)} 0x${(0x200 + i).toString(16)}\n`)
      .join('');
    const g2l = path.join(dir, 'guid2lid');
    const conf = path.join(dir, 'opensm.conf');
    writeFileSync(g2l, g2lText);
    writeFileSync(conf, ['# site opensm.conf', 'routing_engine updn,minhop # fallback', 'reassign_lids FALSE', ''].join('\n'));
    expect(await hostLid(file, conf, g2l)).toBeGreaterThanOrEqual(0x200);
    writeFileSync(g2l, g2lText);
    writeFileSync(conf, ['# site opensm.conf', 'routing_engine updn,minhop # fallback', 'reassign_lids TRUE   # renumber once', ''].join('\n'));
    expect(await hostLid(file, conf, g2l)).toBeLessThan(0x100);
  }, TIMEOUT);
  it('a typo in opensm.conf is refused with its line and a "did you mean", before any MAD', async () => {
    const conf = path.join(mkdtempSync(path.join(os.tmpdir(), 'ibsm-osmconf-')), 'opensm.conf');
    writeFileSync(conf, 'sm_priorty 5\n');
    const r = await runCli(['run', '--umad', '--config', conf]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${conf}:1: unknown opensm.conf key "sm_priorty" (did you mean "sm_priority"?)`);
  });
});
