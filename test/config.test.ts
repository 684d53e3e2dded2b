/** The one option table: per-command --help, did-you-mean, -V, typed config files (ibsm's JSON and
 * OpenSM's opensm.conf as the installed `opensm -c` writes it), `ibsm config` round trips, and the
 * README's option tables are the table's. */
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main } from '../src/cli/main.js';
import { CONFIG_OPTIONS, COMMANDS, OPTIONS, optionsOf, ROOT_GUID2LID_FILE } from '../src/config/options.js';
import { manPage, markdownOptionTable, parseCommandLine } from '../src/config/parse.js';
import { readConfigFile, resolveConfig } from '../src/config/file.js';
import { readOpensmConf } from '../src/config/opensm-conf.js';
import { FORK_KEYS } from '../src/config/opensm-keys.js';
import { DEFAULT_FALLBACK } from '../src/routing/registry.js';
import { SM_CONFIG_KEYS } from '../src/api/sm.js';
import { logRe } from './helpers/log-lines.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(args, { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } });
  return { code, out, err };
}

const tmp = (): string => mkdtempSync(path.join(os.tmpdir(), 'ibsm-config-'));

describe('the option table', () => {
  it('each command prints its own options from the table', async () => {
    for (const cmd of ['run', 'discover', 'route', 'query', 'config'] as const) {
      const r = await cli([cmd, '--help']);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(new RegExp(`^usage: ibsm ${cmd} `));
      const mine = optionsOf(cmd);
      for (const o of mine) expect(r.out, `${cmd} --${o.name}`).toContain(`--${o.name}`);
      // (a name two commands give their own entries, as --sm-key of run and of query, is theirs both)
      for (const o of OPTIONS.filter((x) => !x.commands.includes(cmd) && !mine.some((m) => m.name === x.name))) expect(r.out, `${cmd} lists --${o.name}`).not.toMatch(new RegExp(`^\\s+(-\\w, )?--${o.name}(?![\\w-])`, 'm'));
    }
    expect((await cli(['query', '--help'])).out).toMatch(/records \(name, SA attribute, filters\):\n\s+nodes\s+NodeRecord/);
    expect((await cli(['route', '--help'])).out).toMatch(/engines: minhop, updn, ftree, dfsssp/);
  });

  it('unknown options get a did-you-mean or the command they belong to; -V prints the version', async () => {
    const r = await cli(['run', '--sweep-intervall', '3']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/unknown option --sweep-intervall for ibsm run \(did you mean "--sweep-interval"\?\)/);
    expect((await cli(['run', '--engine', 'minhop'])).err).toMatch(/unknown option --engine for ibsm run \(it is an option of ibsm route\)/);
    expect((await cli(['route', 'gen:torus:3x3', '--routing', 'minhop'])).err).toMatch(/unknown option --routing for ibsm route \(it is an option of ibsm run, ibsm config\)/);
    expect((await cli(['discover', '--jsn'])).err).toMatch(/did you mean "--json"/);
    expect((await cli(['query', 'nodes', '--lidd', '1'])).err).toMatch(/unknown option --lidd for ibsm query \(did you mean "--lid"\?\)/);
    const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version as string;
    for (const a of [['-V'], ['--version'], ['run', '-V'], ['route', '--version'], ['query', '-V']]) {
      const v = await cli(a);
      expect(v.code, a.join(' ')).toBe(0);
      expect(v.out).toBe(`ibsm ${version}\n`);
    }
  });

  it('route without --engine uses the default chain of ibsm run', async () => {
    const r = await cli(['route', 'gen:torus:3x3,hosts=1', '--json']);
    expect(JSON.parse(r.out).requested).toEqual([...DEFAULT_FALLBACK]);
    const run = resolveConfig('run', parseCommandLine('run', []), undefined);
    expect(run.settings.get('routing')!.value).toEqual([...DEFAULT_FALLBACK]);
  });

  it('the guid2lid cache is OpenSM\'s as root on a real HCA, never on a simulated fabric', () => {
    const umad = resolveConfig('run', parseCommandLine('run', ['--umad']), undefined).settings.get('guid2lid')!;
    const root = process.getuid?.() === 0 && !process.env.LD_PRELOAD?.includes('umad2sim');
    expect(umad.value).toBe(root ? ROOT_GUID2LID_FILE : undefined);
    expect(resolveConfig('run', parseCommandLine('run', ['--sim', 'gen:torus:2x2']), undefined).settings.get('guid2lid')!.value).toBeUndefined();
    expect(resolveConfig('run', parseCommandLine('run', ['--umad', '--guid2lid', '/x']), undefined).settings.get('guid2lid')).toMatchObject({ value: '/x', source: 'command line' });
  });

  it('every config key is an option of the API (openSm takes what ibsm run takes)', () => {
    const runKeys = optionsOf('run').filter((o) => o.key).map((o) => o.key!);
    expect([...SM_CONFIG_KEYS].sort()).toEqual([...runKeys].sort());
    expect(CONFIG_OPTIONS.every((o) => o.commands.includes('run') || o.commands.includes('route'))).toBe(true);
  });

  it('the man page is the table\'s (npm run docs writes it)', () => {
    const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version as string;
    const man = readFileSync(new URL('../docs/ibsm.8', import.meta.url), 'utf8');
    expect(man).toBe(manPage(version));
    for (const o of OPTIONS) expect(man, o.name).toContain(`\\-\\-${o.name.replace(/-/g, '\\-')}\\fR`);
  });

  it("the README's option tables are the table's", () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const cmd of COMMANDS.filter((c) => c !== 'config')) {
      const m = new RegExp(`<!-- options:${cmd} -->\\n([\\s\\S]*?)\\n<!-- /options -->`).exec(readme);
      expect(m, `README has the ${cmd} table`).not.toBeNull();
      expect(m![1]).toBe(markdownOptionTable(cmd));
    }
  });
});

describe('config files', () => {
  it('rejects badly typed values, naming the key, the value and what was expected', async () => {
    const dir = tmp();
    const cases: Array<[string, RegExp]> = [
      ['{"umad":"false"}', /"umad" must be true or false, got "false" \(a string\)/],
      ['{"verbose":"no"}', /"verbose" must be true or false, got "no" \(a string\)/],
      ['{"routing":5}', /"routing" must be a comma-separated list of names \(or an array of names\), got 5 \(a number\)/],
      ['{"routing":"ftree,lash"}', /"routing": unknown routing engine "lash"/],
      ['{"lmc":9}', /"lmc" must be an integer from 0 to 7, got 9 \(a number\)/],
      ['{"lmc":"1"}', /"lmc" must be an integer from 0 to 7, got "1" \(a string\)/],
      ['{"smKey":"secret"}', /"smKey" must be a 64-bit number as a string \(e.g. "0x1234"\), got "secret"/],
      ['{"logFormat":"xml"}', /"logFormat" must be one of "text", "json", got "xml"/],
      ['{"sweepIntervall":3}', /unknown key "sweepIntervall" \(did you mean "sweepIntervalS"\?\)/],
    ];
    for (const [text, re] of cases) {
      const f = path.join(dir, 'c.json');
      writeFileSync(f, text);
      const r = await cli(['run', '--config', f, '--once']);
      expect(r.code, text).toBe(2);
      expect(r.err, text).toMatch(re);
      expect(r.err, text).toContain(f);
    }
  });

  it('ibsm config prints every option with its source, and --config reads it back to the same values', async () => {
    const dir = tmp();
    const f1 = path.join(dir, 'one.json');
    writeFileSync(f1, JSON.stringify({ lmc: 2, routing: ['updn', 'minhop'], smKey: '0x10', verbose: true }));
    const r = await cli(['config', '--config', f1, '--sweep-interval', '7', '--sim', 'gen:torus:3x3', '--subnet-prefix', '0xfe80000000000001']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`// from: file ${f1}.*\\n  "lmc": 2,`));
    expect(r.out).toMatch(/\/\/ from: command line \(7\)\n  "sweepIntervalS": 7,/);
    expect(r.out).toMatch(/\/\/ from: default \(0\)\n  "priority": 0,/);
    expect(r.out).toMatch(/\/\/ "mkey": unset/);
    const f2 = path.join(dir, 'two.conf');
    writeFileSync(f2, r.out);
    const back = resolveConfig('config', parseCommandLine('config', ['--config', f2]), undefined);
    const first = resolveConfig('config', parseCommandLine('config', ['--config', f1, '--sweep-interval', '7', '--sim', 'gen:torus:3x3', '--subnet-prefix', '0xfe80000000000001']), undefined);
    for (const [name, s] of first.settings) expect(back.settings.get(name)!.value, name).toEqual(s.value);
    expect(back.settings.get('sm-key')!.value).toBe(0x10n);
    expect(back.settings.get('lmc')!.source).toBe(`file ${f2}`);
    // and printing it again gives the same text but for the sources
    const again = await cli(['config', '--config', f2]);
    const strip = (t: string): string => t.replace(/^\s*\/\/.*\n/gm, '');
    expect(strip(again.out)).toBe(strip(r.out));
  });

  it("reads OpenSM's own opensm -c output: every implemented key mapped, every other key's use listed", async () => {
    const dir = tmp();
    const conf = path.join(dir, 'opensm.conf');
    execFileSync('opensm', ['-c', conf], { stdio: 'ignore', timeout: 30_000 });
    const text = readFileSync(conf, 'utf8');
    const osm = readOpensmConf(text, conf);
    const lines = new Map(text.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => [l.split(/\s+/)[0]!, l.slice(l.indexOf(' ') + 1).trim()]));
    expect(lines.size).toBeGreaterThan(100);
    // Every option with an opensm.conf key is in OpenSM's own output (no invented keys; NVIDIA's
    // fork's keys apart, each listed with where the fork names it) ...
    const upstream = OPTIONS.filter((x) => x.opensm && !FORK_KEYS.some((k) => k.key === x.opensm));
    for (const o of upstream) expect(lines.has(o.opensm!), o.opensm).toBe(true);
    // ... is read, and maps unless OpenSM's value is (null), the default port, or a file OpenSM would skip.
    for (const o of upstream) {
      expect(osm.keys.map((k) => k.key), o.opensm).toContain(o.opensm);
      const v = lines.get(o.opensm!)!;
      // qos_max_vls 0 and qos_high_limit -1 are OpenSM's "not set": the default applies
      if (v === '(null)' || (o.opensm === 'guid' && BigInt(v) === 0n) || o.opensm === 'qos_policy_file' || o.opensm === 'partition_config_file' || o.opensm === 'prefix_routes_file') continue;
      if ((o.opensm === 'qos_max_vls' && v === '0') || (o.opensm === 'qos_high_limit' && v === '-1')) {
        expect(osm.values.has(o.name), o.opensm).toBe(false);
        continue;
      }
      expect(osm.values.has(o.name), o.opensm).toBe(true);
    }
    expect(osm.values.get('sm-key')).toBe(BigInt(lines.get('sm_key')!));
    expect(osm.values.get('packet-life')).toBe(Number(lines.get('packet_life_time')));
    expect(osm.values.get('poll-interval')).toBe(Number(lines.get('sminfo_polling_timeout')));
    expect(osm.values.get('subnet-prefix')).toBe(BigInt(lines.get('subnet_prefix')!));
    // every key, each once, with what ibsm does with it
    expect(osm.keys.map((k) => k.key).sort()).toEqual([...lines.keys()].sort());
    expect(osm.keys.find((k) => k.key === 'sm_sl')!.status).toBe('as ibsm does');
    // through the command: sources name the file; every key's use is printed
    const r = await cli(['config', '--config', conf]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`// from: file ${conf} \\(0x0*1\\)\\n  "smKey": "0x1",`));
    expect(r.out).toMatch(/\/\/   .*:\d+ sm_sl 0: as ibsm does\n/);
    expect(readConfigFile(conf).format).toBe('opensm.conf');
  });

  it('ibsm run --once takes an opensm.conf, with the command line over it', async () => {
    const dir = tmp();
    const conf = path.join(dir, 'opensm.conf');
    execFileSync('opensm', ['-c', conf], { stdio: 'ignore', timeout: 30_000 });
    const log = path.join(dir, 'ibsm.log');
    writeFileSync(conf, readFileSync(conf, 'utf8').replace(/^lmc 0$/m, 'lmc 1').replace(/^routing_engine .*$/m, 'routing_engine updn,minhop'));
    const r = await cli(['run', '--config', conf, '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2', '--once', '--log-file', log, '--guid2lid', 'none']);
    expect(r.code, r.err).toBe(0);
    const text = readFileSync(log, 'utf8');
    expect(text).toMatch(logRe('IBSM-1001'));
    expect(text).toMatch(logRe('IBSM-8001', 'routing=updn,minhop lmc=1'));
    expect(text).toMatch(logRe('IBSM-9002', 'partition_config_file /etc/opensm/partitions.conf does not exist: the default partition, as in OpenSM'));
  });

  it('a malformed opensm.conf line is an error with its line number', async () => {
    const dir = tmp();
    const f = path.join(dir, 'bad.conf');
    writeFileSync(f, '# opensm\nlmc 1\nsweep_interval\n');
    const r = await cli(['config', '--config', f]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${f}:3: sweep_interval has no value`);
    writeFileSync(f, 'lmc 1\nlmc=2 x y\n');
    expect((await cli(['config', '--config', f])).err).toContain(`${f}:2: unknown opensm.conf key "lmc=2" in the malformed line "lmc=2 x y"`);
    writeFileSync(f, 'lmc 1\nsm_priority high\n');
    expect((await cli(['config', '--config', f])).err).toContain(`${f}:2: sm_priority must be an integer from 0 to 15, got "high"`);
    writeFileSync(f, 'routing_engine lashes\n');
    expect((await cli(['config', '--config', f])).err).toMatch(/:1: routing_engine: unknown routing engine "lashes"/);
  });
});
