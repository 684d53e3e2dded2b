/** opensm.conf read as OpenSM reads it (#28 item 3): every line of OpenSM's own default file, and
 * every key of it changed from its default, through `ibsm config`: each mapped, accepted as ibsm
 * does, accepted without effect (said), or refused with its reason; none silently ignored. The
 * key table of docs/configuration.md is generated from the rules and checked here. */
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from './helpers/cli.js';
import { opensmConfKeys, readOpensmConf } from '../src/config/opensm-conf.js';
import { FORK_KEYS, OPENSM_ENGINES, OPENSM_KEY_RULES, opensmKeyRule, opensmKeysMarkdown, sameValue } from '../src/config/opensm-keys.js';
import { OPTIONS } from '../src/config/options.js';
import { openSm, type IbsmSm } from '../src/index.js';
import { Logger, MemorySink } from '../src/util/log.js';

const FIXTURE = new URL('./fixtures/opensm-3.3.23.conf', import.meta.url);
const DEFAULT_TEXT = readFileSync(FIXTURE, 'utf8');
const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const tmp = (): string => mkdtempSync(path.join(tmpdir(), 'ibsm-osmconf-'));

const config = (file: string): ReturnType<typeof runCli> => runCli(['config', '--config', file]);

/** key → value of an opensm.conf text. */
function entries(text: string): Array<{ key: string; value: string; line: number }> {
  return text.split('\n').flatMap((l, i) => {
    const t = l.trim();
    if (!t || t.startsWith('#')) return [];
    const k = t.split(/\s+/)[0]!;
    return [{ key: k, value: t.slice(k.length).trim(), line: i + 1 }];
  });
}

/** A value other than OpenSM's default, of the same kind. */
function changed(key: string, v: string): string {
  const special: Record<string, string> = {
    part_enforce: 'in',
    console: 'local',
    routing_engine: 'updn,minhop',
    qos_vlarb_high: '0:4,1:8',
    qos_vlarb_low: '0:32,1:16',
    qos_sl2vl: '0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1',
    log_flags: '0x07',
    max_op_vls: '4',
    qos_max_vls: '4',
    qos_high_limit: '5',
  };
  if (special[key]) return special[key];
  if (/^(TRUE|FALSE)$/.test(v)) return v === 'TRUE' ? 'FALSE' : 'TRUE';
  if (/^0x[0-9a-f]+$/i.test(v)) return `0x${(BigInt(v) + 1n).toString(16).padStart(v.length - 2, '0')}`;
  if (/^-?\d+$/.test(v)) return String(Number(v) + 1);
  if (v === '(null)') return '/tmp/ibsm-opensm-conf-test';
  if (/^\d+ \d+$/.test(v)) return '1 5';
  if (/^\d+:\d+$/.test(v)) return '1:2';
  return `${v}.other`;
}

describe('OpenSM 3.3.23 opensm.conf, key by key', () => {
  it('the committed default file is what `opensm -c` writes (OpenSM installed, as in CI)', () => {
    const f = path.join(tmp(), 'opensm.conf');
    execFileSync('opensm', ['-c', f], { stdio: 'ignore', timeout: 30_000 });
    expect(entries(readFileSync(f, 'utf8'))).toEqual(entries(DEFAULT_TEXT));
  });

  it('every key of the default file has a rule, and every rule is a key of it', () => {
    const keys = opensmConfKeys(DEFAULT_TEXT);
    expect(keys.length).toBe(160);
    for (const k of keys) expect(opensmKeyRule(k), k).toBeDefined();
    for (const r of OPENSM_KEY_RULES) expect(keys, r.key).toContain(r.key);
    // an option's key is OpenSM 3.3.23's, or one of NVIDIA's fork listed with its source (and not 3.3.23's)
    for (const o of OPTIONS.filter((x) => x.opensm)) expect(keys.includes(o.opensm!) || FORK_KEYS.some((k) => k.key === o.opensm), o.opensm).toBe(true);
    for (const k of FORK_KEYS) expect(keys, k.key).not.toContain(k.key);
    // a key is either an option's or has a row, never both
    for (const r of OPENSM_KEY_RULES) expect(OPTIONS.find((o) => o.opensm === r.key), r.key).toBeUndefined();
    // a rule's default is OpenSM's
    for (const e of entries(DEFAULT_TEXT)) {
      const r = OPENSM_KEY_RULES.find((x) => x.key === e.key);
      if (r) expect(sameValue(r.dflt, e.value), e.key).toBe(true);
    }
  });

  it('docs/configuration.md lists every key with its status, as generated from the rules', () => {
    const doc = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    expect(doc).toContain(opensmKeysMarkdown(opensmConfKeys(DEFAULT_TEXT)));
    for (const k of opensmConfKeys(DEFAULT_TEXT)) expect(doc, k).toContain(`| \`${k}\` |`);
  });

  it('every line of the default file: read, and each key listed with what ibsm does with it', async () => {
    const f = path.join(tmp(), 'opensm.conf');
    writeFileSync(f, DEFAULT_TEXT);
    const r = await config(f);
    expect(r.code, r.err).toBe(0);
    for (const e of entries(DEFAULT_TEXT)) {
      const line = new RegExp(`^//   ${esc(f)}:${e.line} ${e.key} ${esc(e.value)}: (.+)$`, 'm').exec(r.out);
      expect(line, e.key).not.toBeNull();
      expect(line![1], e.key).toMatch(/^(--[a-z-]+|as ibsm does|no effect: .+|not used: .+)/);
    }
    // where ibsm differs from OpenSM's default too, it is said even at the default value
    const differing = OPENSM_KEY_RULES.filter((x) => x.kind === 'no-effect' && x.differs);
    expect(differing.map((x) => x.key).sort()).toEqual(['allow_both_pkeys', 'drop_event_subscriptions', 'ipoib_mcgroup_creation_validation', 'nue_max_num_vls', 'use_ucast_cache']);
    for (const x of differing) expect(r.out, x.key).toContain(`// note: ${x.key} ${x.dflt}: no effect: `);
  });

  it('each key changed from its default: mapped, said, or refused with its reason, never silently ignored', async () => {
    const dir = tmp();
    const outcomes = { mapped: 0, noted: 0, refused: 0 };
    for (const e of entries(DEFAULT_TEXT)) {
      const v = changed(e.key, e.value);
      expect(sameValue(v, e.value), e.key).toBe(false);
      // the key changed, on a line of its own after a comment (its line number: 2)
      const f = path.join(dir, `${e.key}.conf`);
      writeFileSync(f, `# ${e.key} changed\n${e.key} ${v}\n`);
      const r = await config(f);
      const rule = opensmKeyRule(e.key)!;
      if (r.code === 2) {
        outcomes.refused++;
        expect(r.err, e.key).toContain(`${f}:2: `);
        expect(r.err, e.key).toContain(e.key.replace(/_/g, '_'));
        if ('rule' in rule && rule.rule.kind === 'same') expect(r.err, e.key).toContain(rule.rule.why);
        continue;
      }
      expect(r.code, `${e.key}: ${r.err}`).toBe(0);
      const listed = new RegExp(`^//   .*:2 ${e.key} ${esc(v)}: (.+)$`, 'm').exec(r.out);
      expect(listed, e.key).not.toBeNull();
      if ('option' in rule) {
        outcomes.mapped++;
        // mapped: the option is set from the file (or the file is named as not used, with why)
        if (listed![1]!.startsWith('--')) expect(r.out, e.key).toMatch(new RegExp(`// from: file ${esc(f)}.*\\n  "${rule.option.key}": `));
        else expect(listed![1], e.key).toMatch(/^not used: /);
      } else if (rule.rule.kind === 'no-effect') {
        outcomes.noted++;
        // a value other than OpenSM's default is said in a note, with the reason
        expect(r.out, e.key).toContain(`// note: ${e.key} ${v}: no effect: ${rule.rule.why}`);
      } else if (rule.rule.kind === 'alias') {
        outcomes.mapped++;
        expect(listed![1], e.key).toMatch(new RegExp(`^--${rule.rule.option}`));
      } else {
        // 'same' rules accept only their values: a changed one that is accepted is one of them
        expect([rule.rule.dflt, ...(rule.rule.also ?? [])].some((a) => sameValue(a, v)), e.key).toBe(true);
      }
    }
    expect(outcomes.refused).toBeGreaterThan(40);
    expect(outcomes.noted).toBeGreaterThan(30);
  });
});

describe('opensm.conf as operators write it', () => {
  const read = (text: string): ReturnType<typeof readOpensmConf> => readOpensmConf(text, 'c.conf');
  it('a trailing comment after a value is accepted (sweep_interval 10 # comment)', () => {
    expect(read('sweep_interval 10 # seconds\nlmc 1	# tab before\n').values).toEqual(new Map<string, unknown>([['sweep-interval', 10], ['lmc', 1]]));
  });
  it("OpenSM's engine names: torus-2QoS is torus, dor the nearest engine with a notice, file refused with what to use", () => {
    expect(read('routing_engine torus-2QoS,minhop\n').values.get('routing')).toEqual(['torus', 'minhop']);
    expect(read('routing_engine ftree, updn # fallback\n').values.get('routing')).toEqual(['ftree', 'updn']);
    const dor = read('routing_engine dor\n');
    expect(dor.values.get('routing')).toEqual(['torus']);
    expect(dor.notes.join('\n')).toMatch(/routing_engine dor: dor \(dimension-order routing\) is routed by ibsm's torus/);
    expect(read('routing_engine lash,dnup,sssp,nue,dfsssp,updn,ftree\n').values.get('routing')).toEqual(['nue', 'updn', 'dfsssp', 'ftree']);
    expect(() => read('routing_engine file\n')).toThrow(/c\.conf:1: routing engine "file": ibsm has no `file` routing engine/);
    // every name OpenSM 3.3.23 lists in its own file is mapped or refused with what to use
    const listed = /# Supported engines: ([^\n]+)\n#\s+([^\n]+)/.exec(DEFAULT_TEXT)!;
    for (const name of `${listed[1]} ${listed[2]}`.split(/[,\s]+/).filter(Boolean)) {
      const e = OPENSM_ENGINES[name.toLowerCase()];
      expect(e, name).toBeDefined();
      if (e!.refuse) expect(() => read(`routing_engine ${name}\n`), name).toThrow(/what|name an engine/);
      else expect(read(`routing_engine ${name}\n`).values.get('routing'), name).toEqual([e!.engine]);
    }
  });
  it('an unknown key gets a "did you mean"; a malformed line is refused with file:line', () => {
    expect(() => read('sm_priorty 5\n')).toThrow('c.conf:1: unknown opensm.conf key "sm_priorty" (did you mean "sm_priority"?)');
    expect(() => read('lmc 1\nthis is not valid\n')).toThrow(/^c\.conf:2: unknown opensm\.conf key "this" in the malformed line "this is not valid"/);
    expect(() => read('sm_priority 5 6\n')).toThrow('c.conf:1: malformed line "sm_priority 5 6": sm_priority takes one value, got "5 6"');
  });
  it('every problem of a file is reported at once, each with its line', () => {
    expect(() => read('console local\nlmc 1\ndaemon TRUE\nevent_plugin_name osmeventplugin\nsm_priorty 1\n')).toThrow(
      /4 problems in c\.conf:\n  c\.conf:1: console local is refused: ibsm has no console: use the control socket.*\n  c\.conf:3: daemon TRUE is refused: .*systemd.*\n  c\.conf:4: event_plugin_name osmeventplugin is refused: .*use the API.*\n  c\.conf:5: unknown/,
    );
  });
  it('implemented keys become options: no_partition_enforcement, reassign_lids, force_heavy_sweep, honor_guid2lid_file, log_flags, accum_log_file', () => {
    const r = read('part_enforce both\nno_partition_enforcement TRUE\nreassign_lids TRUE\nforce_heavy_sweep TRUE\nhonor_guid2lid_file TRUE\nlog_flags 0x0f\naccum_log_file FALSE\n');
    expect(Object.fromEntries(r.values)).toEqual({ 'part-enforce': 'off', 'reassign-lids': true, 'force-heavy-sweep': true, 'honor-guid2lid': true, verbose: true, 'log-truncate': true });
    expect(read('log_flags 0x01\n').notes.join()).toMatch(/ibsm always logs errors and notices/);
    expect(() => read('log_flags 0x1ff\n')).toThrow(/log_flags must be a byte/);
  });
  it('sa_key: mapped to --sa-key, apart from sm_key', () => {
    const r = read('sm_key 0x5\nsa_key 0x6\n');
    expect(r.values.get('sa-key')).toBe(6n);
    expect(r.values.get('sm-key')).toBe(5n);
    expect(r.keys.find((k) => k.key === 'sa_key')!.status).toBe('--sa-key');
  });
  it('a key given twice takes the later value, said', () => {
    const r = read('lmc 1\nlmc 2\n');
    expect(r.values.get('lmc')).toBe(2);
    expect(r.notes.join()).toMatch(/lmc is given at c\.conf:1 and again at line 2: the later value is used/);
  });
});

describe('the opensm.conf keys ibsm implements, at work', () => {
  const SPEC = 'gen:fattree2:leaves=2,spines=1,hosts=2';
  /** A switch port cabled to a CA, as the simulated fabric holds it. */
  const leafPort = (sm: IbsmSm): { node: number; port: number } => {
    for (const n of sm.sim!.nodes) {
      if (!n.isSwitch) continue;
      for (const p of n.ports) if (p && p.num > 0 && p.peer && !p.peer.node.isSwitch) return { node: n.idx, port: p.num };
    }
    throw new Error('no leaf port');
  };
  it('part_enforce (and no_partition_enforcement TRUE): switch ports facing CAs enforce both ways, one way, or not at all', async () => {
    const seen: Record<string, { in: number; out: number; pkeys: number }> = {};
    const partitions = path.join(tmp(), 'partitions.conf');
    writeFileSync(partitions, 'Default=0x7fff : ALL=full ;\nP1=0x10 : ALL=full ;\n');
    for (const mode of ['both', 'in', 'off'] as const) {
      const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, partEnforce: mode, partitions, log: new Logger(new MemorySink(), 'info') });
      await sm.start();
      const { node, port } = leafPort(sm);
      const pi = sm.sim!.portInfo(node, port);
      seen[mode] = { in: pi.partitionEnforcementInbound, out: pi.partitionEnforcementOutbound, pkeys: sm.sim!.pkeys(node, port).filter(Boolean).length };
      await sm.stop();
    }
    // off: the switch port's P_Key table is not written (it keeps its reset content, 0xffff alone)
    expect(seen).toEqual({ both: { in: 1, out: 1, pkeys: 2 }, in: { in: 1, out: 0, pkeys: 2 }, off: { in: 0, out: 0, pkeys: 1 } });
  });
  it('reassign_lids: the first sweep ignores the guid2lid file and the LIDs the ports have', async () => {
    const file = path.join(tmp(), 'guid2lid');
    const sm0 = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, guid2lid: file, log: new Logger(new MemorySink(), 'info') });
    await sm0.start();
    await sm0.stop();
    // every port moved far up: honoured without reassign_lids, ignored with it
    const moved = readFileSync(file, 'utf8').replace(/0x([0-9a-f]{4}) 0x([0-9a-f]{4})$/gm, (_m, a: string, b: string) => `0x${(parseInt(a, 16) + 0x100).toString(16).padStart(4, '0')} 0x${(parseInt(b, 16) + 0x100).toString(16).padStart(4, '0')}`);
    writeFileSync(file, moved);
    const lidsOf = async (reassignLids: boolean): Promise<{ max: number; sink: MemorySink }> => {
      const sink = new MemorySink();
      const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, guid2lid: file, reassignLids, log: new Logger(sink, 'info', 'json') });
      await sm.start();
      const max = sm.subnet.sm.current!.maxLid;
      await sm.stop();
      writeFileSync(file, moved);
      return { max, sink };
    };
    expect((await lidsOf(false)).max).toBeGreaterThan(0x100);
    const r = await lidsOf(true);
    expect(r.max).toBeLessThan(0x20);
    expect(r.sink.lines.some((l) => l.includes('"code":"IBSM-9011"'))).toBe(true);
  });
  it('force_heavy_sweep: the periodic sweep is a heavy one', async () => {
    for (const forceHeavySweep of [false, true]) {
      const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, forceHeavySweep, log: new Logger(new MemorySink(), 'info') });
      await sm.start();
      const before = { ...sm.subnet.sm.sweepsDone };
      await sm.subnet.sm.sweep('light');
      const after = sm.subnet.sm.sweepsDone;
      expect({ heavy: after.heavy - before.heavy, light: after.light - before.light }, String(forceHeavySweep)).toEqual(forceHeavySweep ? { heavy: 1, light: 0 } : { heavy: 0, light: 1 });
      await sm.stop();
    }
  });
  it('accum_log_file FALSE (--log-truncate): the log file is emptied at start', async () => {
    const log = path.join(tmp(), 'ibsm.log');
    writeFileSync(log, 'an old line\n');
    for (const logTruncate of [false, true]) {
      const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, logFile: log, logTruncate });
      await sm.stop();
      expect(readFileSync(log, 'utf8').includes('an old line'), String(logTruncate)).toBe(!logTruncate);
    }
  });
});
