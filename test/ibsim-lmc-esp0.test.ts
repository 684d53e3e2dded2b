/** OpenSM's lmc_esp0 on ibsim, OpenSM the witness (issue #28): with `lmc 1` and `lmc_esp0 TRUE`
 * in one opensm.conf, a switch whose SwitchInfo says EnhancedPort0 (ibsim: "enhanced port 0" in its
 * header line) gets LMC 1 on port 0, two aligned LIDs, under OpenSM and under ibsm reading the
 * same file, each on a cold fabric; under ibsm every switch's second LID is reached from a host
 * (ibtracert). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { loadFabricSpec } from '../src/model/load.js';
import { runPreloaded, startIbsim, type Ibsim } from './helpers/ibsim.js';
import { TIMEOUT, startIbsm, startOpenSm, stopSa, type RunningSa } from './helpers/sa-compare.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-esp0-'));
const NET = path.join(dir, 'esp0.net');
writeFileSync(NET, formatIbnetdiscover(loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=4'), { timestamp: 'x' }).replace(/base port 0/g, 'enhanced port 0'));
const CONF = path.join(dir, 'opensm.conf');
writeFileSync(CONF, 'lmc 1\nlmc_esp0 TRUE # LMC on enhanced switch port 0\n');

interface Seen {
  switches: Map<string, { lid: number; lmc: number }>;
  cas: Map<string, { lid: number; lmc: number }>;
}

/** Every switch's port 0 and every CA port's LID and LMC, as ibnetdiscover prints them. */
async function seen(ib: Ibsim): Promise<Seen> {
  const r = await runPreloaded('ibnetdiscover', [], { ibsim: ib, timeoutMs: 30_000 });
  expect(r.code, r.stderr).toBe(0);
  const switches = new Map<string, { lid: number; lmc: number }>();
  for (const m of r.stdout.matchAll(/^Switch\s+\d+\s+"([^"]+)".*enhanced port 0 lid (\d+) lmc (\d+)/gm)) switches.set(m[1]!, { lid: Number(m[2]), lmc: Number(m[3]) });
  const cas = new Map<string, { lid: number; lmc: number }>();
  for (const m of r.stdout.matchAll(/^\[1\]\(([0-9a-f]+)\)\s.*# lid (\d+) lmc (\d+)/gm)) cas.set(m[1]!, { lid: Number(m[2]), lmc: Number(m[3]) });
  return { switches, cas };
}

async function under(kind: 'opensm' | 'ibsm', body: (ib: Ibsim, s: Seen) => Promise<void>): Promise<Seen> {
  const ib = await startIbsim(NET);
  let sm: RunningSa | undefined;
  try {
    sm = kind === 'opensm' ? await startOpenSm(ib, ['-F', CONF]) : await startIbsm(ib, path.join(dir, `guid2lid-${kind}`), ['--config', CONF]);
    const s = await seen(ib);
    await body(ib, s);
    return s;
  } finally {
    await stopSa(sm, kind);
    await ib.stop();
  }
}

describe('lmc_esp0 on ibsim, OpenSM the witness', () => {
  it('switches with an enhanced port 0 get LMC 1 there under both SMs, and both route both LIDs of every switch (ibtracert)', async () => {
    const trace = async (ib: Ibsim, s: Seen): Promise<void> => {
      const host = [...s.cas.values()][0]!;
      for (const [name, sw] of s.switches) {
        const r = await runPreloaded('ibtracert', [String(host.lid), String(sw.lid + 1)], { ibsim: ib, timeoutMs: 30_000 });
        expect(r.code, `ibtracert to ${name}'s second LID ${sw.lid + 1}: ${r.stderr}`).toBe(0);
        expect(r.stdout).toContain(`To switch {0x${name.slice(2).toLowerCase()}} portnum 0 lid ${sw.lid}-${sw.lid + 1}`);
      }
    };
    const osm = await under('opensm', trace);
    const ours = await under('ibsm', trace);
    expect(osm.switches.size).toBe(6);
    for (const s of [osm, ours]) {
      expect([...s.switches.values()].map((v) => v.lmc)).toEqual(Array(6).fill(1));
      for (const v of s.switches.values()) expect(v.lid % 2, 'aligned to 2^LMC').toBe(0);
      expect([...s.cas.values()].every((v) => v.lmc === 1)).toBe(true);
    }
  }, 4 * TIMEOUT);
});
