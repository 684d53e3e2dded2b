/** The ibsm command: usage errors, config files, run --once on the embedded fabric. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main } from '../src/cli/main.js';
import { hasCode, logRe } from './helpers/log-lines.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(args, { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } });
  return { code, out, err };
}

describe('ibsm CLI', () => {
  it('prints usage and exits 2 without a command, 0 with --help', async () => {
    expect((await cli([])).code).toBe(2);
    const h = await cli(['--help']);
    expect(h.code).toBe(0);
    expect(h.out).toMatch(/ibsm <command>/);
  });
  it('rejects bad option values with the option named', async () => {
    const r = await cli(['run', '--lmc', '9']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--lmc must be an integer from 0 to 7/);
    expect((await cli(['run', '--sim', 'x', '--umad'])).err).toMatch(/either --sim or --umad/);
    expect((await cli(['run', '--sa-cache', 'many'])).err).toMatch(/--sa-cache must be an integer from 0 to 1000000/);
    expect((await cli(['frobnicate'])).err).toMatch(/unknown command "frobnicate"/);
    expect((await cli(['run', '--sm-key', 'secret'])).err).toMatch(/--sm-key must be a 64-bit number/);
    expect((await cli(['run', '--poll-retries', '200'])).err).toMatch(/--poll-retries must be an integer from 0 to 100/);
  });
  it('refuses an unknown routing engine before anything is sent, suggesting the close name', async () => {
    const r = await cli(['run', '--routing', 'ftre,minhop', '--once']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/unknown routing engine "ftre" \(did you mean "ftree"\?\); known engines: .*minhop/);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-cfg-'));
    const cfg = path.join(dir, 'r.json');
    writeFileSync(cfg, '{"routing": 5}');
    expect((await cli(['run', '--config', cfg])).err).toMatch(/"routing" must be a comma-separated list of names \(or an array of names\), got 5 \(a number\)/);
  });
  it('rejects a config file with an unknown key or bad JSON, naming the file', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-cfg-'));
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, '{"lmc": 1, "sweepintervall": 3}');
    const r = await cli(['run', '--config', bad]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(bad);
    expect(r.err).toMatch(/unknown key "sweepintervall"/);
    writeFileSync(bad, '{"lmc": ');
    expect((await cli(['run', '--config', bad])).err).toMatch(/config file/);
  });
  it('runs --once from a config file, persisting guid2lid, and the command line wins over the file', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-cfg-'));
    const cfg = path.join(dir, 'ibsm.json');
    const g2l = path.join(dir, 'guid2lid');
    writeFileSync(cfg, JSON.stringify({ sim: 'gen:fattree2:leaves=2,spines=1,hosts=2', routing: 'minhop', lmc: 1, guid2lid: g2l }));
    const r = await cli(['run', '--config', cfg, '--lmc', '0', '--once']);
    expect(r.code).toBe(0);
    const lines = readFileSync(g2l, 'utf8').trim().split('\n');
    expect(lines.length).toBe(7); // 4 hosts + 3 switches
    // LMC 0 from the command line: every range is a single LID
    for (const l of lines) {
      const [, lo, hi] = l.split(' ');
      expect(lo).toBe(hi);
    }
  });
  it('a malformed partitions file: said loudly with file:line, and the SM runs with the default partition (as OpenSM)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-cfg-'));
    const pf = path.join(dir, 'partitions.conf');
    writeFileSync(pf, 'Default=0x7fff : ALL=full ;\nBroken=0x10 : not-a-guid ;\n');
    const r = await cli(['run', '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=1', '--partitions', pf, '--once']);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(logRe('IBSM-9012', `${pf}:2`));
    expect(hasCode(r.err, 'IBSM-1001')).toBe(true);
  });
});
