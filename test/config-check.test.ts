/** `ibsm config --check`, file errors that name their option and role, and partitions.conf errors
 * handled as OpenSM handles them (#28 items 1 and 4, #29 item 4). */
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runConfig } from '../src/cli/main.js';
import { runCli } from './helpers/cli.js';
import { checkConfiguration } from '../src/config/files.js';
import { openSm } from '../src/index.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { logRe, lit } from './helpers/log-lines.js';

const SPEC = 'gen:fattree2:leaves=2,spines=1,hosts=2';
const tmp = (): string => mkdtempSync(path.join(tmpdir(), 'ibsm-check-'));

const ibsm = (...argv: string[]): ReturnType<typeof runCli> => runCli(argv);

describe('ibsm config --check', () => {
  it('a good configuration: every file read and parsed, exit 0', async () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'partitions.conf'), 'Default=0x7fff, ipoib : ALL=full ;\nP1=0x10 : ALL=full ;\n');
    writeFileSync(path.join(dir, 'roots'), '0x1\n0x2\n');
    const r = await ibsm('config', '--check', '--partitions', path.join(dir, 'partitions.conf'), '--root-guid-file', path.join(dir, 'roots'));
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain(`partitions ${path.join(dir, 'partitions.conf')}: good (2 partitions)`);
    expect(r.out).toContain('root-guid-file');
    expect(r.out).toMatch(/configuration good\n$/);
  });
  it('every problem with file:line and where the file was given; exit 2; nothing run', async () => {
    const dir = tmp();
    const part = path.join(dir, 'partitions.conf');
    writeFileSync(part, 'Default=0x7fff :\n  ALL=fool ;\n');
    const conf = path.join(dir, 'opensm.conf');
    writeFileSync(conf, `# site config\npartition_config_file ${part}\nqos TRUE\nqos_policy_file ${dir}\nroot_guid_file ${dir}/no-such-file # roots\n`);
    const r = await ibsm('config', '--check', '--config', conf);
    expect(r.code).toBe(2);
    const problems = r.out.split('\n').filter((l) => l.startsWith('problem: '));
    expect(problems).toEqual([
      `problem: ${part}:2: "ALL=fool": unknown membership "fool" (full, limited or both) (partition_config_file at ${conf}:2: partitions.conf: the partitions, their P_Keys and IPoIB groups)`,
      `problem: qos_policy_file at ${conf}:4 ${dir} (qos-policy.conf: the QoS policy (PathRecord SLs and limits)): is a directory, not a file`,
      `problem: root_guid_file at ${conf}:5 ${dir}/no-such-file (the root switch GUIDs for updn/ftree): does not exist`,
    ]);
    expect(r.out).toMatch(/configuration refused: 3 problems\n$/);
  });
  it('an option or config-file problem: exit 2, each problem said', async () => {
    const dir = tmp();
    const conf = path.join(dir, 'opensm.conf');
    writeFileSync(conf, 'sm_priorty 1\nconsole local\n');
    const r = await ibsm('config', '--check', '--config', conf);
    expect(r.code).toBe(2);
    expect(r.out).toContain(`problem: ${conf}:1: unknown opensm.conf key "sm_priorty" (did you mean "sm_priority"?)`);
    expect(r.out).toContain(`problem: ${conf}:2: console local is refused: ibsm has no console`);
    expect((await ibsm('config', '--check', '--lmc', '9')).out).toContain('problem: --lmc must be an integer from 0 to 7, got "9"');
  });
  it('a JSON number beyond range (1e400) is reported as such, not as "got null"', async () => {
    const f = path.join(tmp(), 'ibsm.conf');
    writeFileSync(f, '{"sweepIntervalS": 1e400}');
    const r = await ibsm('config', '--check', '--config', f);
    expect(r.code).toBe(2);
    expect(r.out).toContain(`"sweepIntervalS" must be an integer from 0 to 86400, got a number too large (Infinity)`);
    expect(r.out).not.toContain('null');
  });
});

describe('file errors name the option (or the opensm.conf key and its line) and the file\'s role', () => {
  it('ibsm run --partitions missing.conf: refused before the first SMP, not a bare ENOENT', async () => {
    const r = await ibsm('run', '--once', '--sim', SPEC, '--partitions', '/nonexistent/missing.conf');
    expect(r.code).toBe(1); // a runtime failure (README: exit status), as a file that does not parse always was
    expect(r.err).toMatch(logRe('IBSM-9101', lit('error="--partitions /nonexistent/missing.conf (partitions.conf: the partitions, their P_Keys and IPoIB groups): does not exist"')));
    expect(r.err).not.toMatch(/ENOENT|SUBNET UP|discovery/);
  });
  it('a directory given as a file (EISDIR), named in opensm.conf: the key and its line', async () => {
    const dir = tmp();
    mkdirSync(path.join(dir, 'roots.d'));
    const conf = path.join(dir, 'opensm.conf');
    writeFileSync(conf, `lmc 0\nroot_guid_file ${dir}/roots.d\n`);
    const r = await ibsm('run', '--once', '--sim', SPEC, '--config', conf);
    expect(r.code).toBe(1); // a runtime failure (README: exit status), as a file that does not parse always was
    expect(r.err).toContain(`root_guid_file at ${conf}:2 ${dir}/roots.d (the root switch GUIDs for updn/ftree): is a directory, not a file`);
    expect(r.err).not.toContain('EISDIR');
  });
  it('a parse error at start names file:line and where the file was given (qos-policy.conf)', async () => {
    const dir = tmp();
    const q = path.join(dir, 'qos-policy.conf');
    writeFileSync(q, 'qos-levels\n  qos-level\n    name: A\n    sl: 99\n  end-qos-level\nend-qos-levels\n');
    const conf = path.join(dir, 'opensm.conf');
    writeFileSync(conf, `qos TRUE\nqos_policy_file ${q}\n`);
    const r = await ibsm('run', '--once', '--sim', SPEC, '--config', conf);
    expect(r.code).toBe(1); // a runtime failure (README: exit status), as a file that does not parse always was
    expect(r.err).toContain(`${q}:4: sl must be a number 0..15, got \\"99\\" (qos_policy_file at ${conf}:2: qos-policy.conf: the QoS policy (PathRecord SLs and limits))`);
  });
  it('through the API too: the option and the role', async () => {
    await expect(openSm({ sim: SPEC, sweepIntervalS: 0, qosPolicy: '/nonexistent/qos.conf', log: new Logger(new MemorySink(), 'info') })).rejects.toThrow('--qos-policy /nonexistent/qos.conf (qos-policy.conf: the QoS policy (PathRecord SLs and limits)): does not exist');
  });
});

describe('partitions.conf in error at start: as OpenSM, the default configuration, said loudly', () => {
  it('the SM comes up with the default partition and logs IBSM-9012 with file:line', async () => {
    const part = path.join(tmp(), 'partitions.conf');
    writeFileSync(part, 'Default=0x7fff, ipoib : ALL=full ;\nP1=0x10 :\n  ALL=fool ;\n');
    const sink = new MemorySink();
    const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, partitions: part, log: new Logger(sink, 'info', 'json') });
    await sm.start();
    const err = sink.lines.map((l) => JSON.parse(l) as Record<string, string>).find((l) => l.code === 'IBSM-9012')!;
    expect(err).toMatchObject({ level: 'error', file: part });
    expect(err.error).toMatch(new RegExp(`^${part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:3: "ALL=fool"`));
    expect(sink.lines.some((l) => l.includes('"code":"IBSM-1001"'))).toBe(true);
    // every CA port: the default partition alone, full (0xffff), as OpenSM's default configuration
    for (const n of sm.sim!.nodes.filter((x) => !x.isSwitch)) for (const p of n.ports) if (p?.peer) expect(sm.sim!.pkeys(n.idx, p.num).filter(Boolean)).toEqual([0xffff]);
    await sm.stop();
  });
  it('for a reload: checkConfiguration gives typed problems (the running configuration is kept), or the new files parsed', async () => {
    const dir = tmp();
    const part = path.join(dir, 'partitions.conf');
    writeFileSync(part, 'Default=0x7fff : ALL=full ;\nnewpart=0x0040 : ALL=full ;\n');
    const good = await checkConfiguration(() => runConfig(['--sim', SPEC, '--partitions', part]).config);
    expect(good.ok).toBe(true);
    expect(good.ok && good.files.partitions!.pkeysFor(0x1n)).toEqual([0xffff, 0x8040]);
    writeFileSync(part, 'Default=0x7fff : ALL=full ;\nnewpart=0x0040 : ALL=full\n');
    const bad = await checkConfiguration(() => runConfig(['--sim', SPEC, '--partitions', part, '--qos-policy', path.join(dir, 'none.conf')]).config);
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.problems.map((p) => [p.option, p.kind])).toEqual([
      ['partitions', 'invalid'],
      ['qos-policy', 'missing'],
    ]);
    expect(!bad.ok && bad.problems[0]!.message).toMatch(/partitions\.conf:2: the last partition is not terminated with ';'/);
    // an option or the config file in error: typed too, naming the option or the file
    const conf = path.join(dir, 'opensm.conf');
    writeFileSync(conf, 'lmc 1\nsm_priorty 2\n');
    const opt = await checkConfiguration(() => runConfig(['--sim', SPEC, '--config', conf]).config);
    expect(!opt.ok && opt.problems.map((p) => [p.option, p.file, p.kind])).toEqual([['config', conf, 'invalid']]);
    const lmc = await checkConfiguration(() => runConfig(['--sim', SPEC, '--lmc', '9']).config);
    expect(!lmc.ok && lmc.problems.map((p) => [p.option, p.origin])).toEqual([['lmc', '--lmc']]);
  });
});
