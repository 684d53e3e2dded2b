/** Logs an operator can act on (issue 14 item 2): fatal errors in the configured format with
 * their code (the real `ibsm` process), and --verbose's per-phase lines of every sweep. */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import os from 'node:os';
import { existsSync, mkdtempSync, readFileSync, renameSync } from 'node:fs';
import { Logger, MemorySink } from '../src/util/log.js';
import { openSm } from '../src/index.js';
import { runConfig } from '../src/cli/main.js';
import { runSm } from '../src/cli/run.js';
import { NodeType, PortState } from '../src/wire/mad.js';
import { render } from './helpers/terminal.js';
import { hasCode, withCode, logRe } from './helpers/log-lines.js';

const CLI = path.resolve('dist/cli/main.js');
const SPEC = 'gen:fattree2:leaves=3,spines=2,hosts=2';

function ibsm(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The per-phase debug lines of a sweep (sweep phase: ...). */
const SWEEP_PHASES = ['IBSM-1101', 'IBSM-1102', 'IBSM-1103', 'IBSM-1104', 'IBSM-1105', 'IBSM-1106', 'IBSM-1107', 'IBSM-1108'];

const jsonLines = (s: string): Array<Record<string, unknown>> =>
  s
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('fatal errors in the configured format', () => {
  it('metrics port in use, --log-format json: a JSON error line with its code, exit 1, nothing else on stderr', async () => {
    const busy: Server = await new Promise((r) => {
      const s = createServer().listen(0, '127.0.0.1', () => r(s));
    });
    try {
      const port = (busy.address() as AddressInfo).port;
      const r = await ibsm(['run', '--sim', SPEC, '--metrics-port', String(port), '--log-format', 'json', '--once']);
      expect(r.code).toBe(1);
      const lines = jsonLines(r.stderr); // every line is JSON (throws otherwise)
      const fatal = lines.find((l) => l.level === 'error')!;
      expect(fatal).toMatchObject({ code: 'IBSM-9102', msg: 'metrics address not available; ibsm stops', errorType: 'MetricsListenError' });
      expect(fatal.error).toContain(`127.0.0.1:${port}`);
      expect(fatal.error).toMatch(/EADDRINUSE/);
      expect(lines.at(-1)).toBe(fatal); // the last word before the exit
      expect(lines.every((l) => typeof l.code === 'string' && /^IBSM-\d{4}$/.test(l.code as string))).toBe(true);
      // the same in text: the code in its column
      const t = await ibsm(['run', '--sim', SPEC, '--metrics-listen', `127.0.0.1:${port}`, '--once']);
      expect(t.code).toBe(1);
      expect(t.stderr).toMatch(new RegExp(`^\\S+ error IBSM-9102 metrics address not available; ibsm stops error="--metrics-listen 127\\.0\\.0\\.1:${port}: cannot serve metrics on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`, 'm'));
    } finally {
      busy.close();
    }
  });

  it('a bad configuration with --log-format json: a JSON line with its code, exit 2', async () => {
    const r = await ibsm(['run', '--lmc', '9', '--log-format', 'json']);
    expect(r.code).toBe(2);
    const [line, ...rest] = jsonLines(r.stderr);
    expect(rest).toEqual([]);
    expect(line).toMatchObject({ level: 'error', code: 'IBSM-9101', msg: 'configuration refused; ibsm stops', errorType: 'UsageError' });
    expect(line!.error).toMatch(/--lmc must be an integer from 0 to 7/);
    // a file the configuration names that does not parse: the file and line named, exit 1
    const m = await ibsm(['run', '--sim', SPEC, '--partitions', '/nonexistent/partitions.conf', '--log-format=json', '--once']);
    expect(m.code).toBe(1);
    expect(jsonLines(m.stderr).find((l) => l.level === 'error')).toMatchObject({ code: 'IBSM-9101', msg: 'configuration refused; ibsm stops' });
    // no device: an HCA that is not there (on a machine without HCAs: none at all)
    const d = await ibsm(['run', '--umad', '--ca', 'ibsm-test-no-such-ca', '--guid2lid', 'none', '--log-format', 'json', '--once']);
    expect(d.code).toBe(1);
    expect(jsonLines(d.stderr).find((l) => l.level === 'error')).toMatchObject({ code: 'IBSM-9103', msg: 'no usable device; ibsm stops' });
    // both metrics options: refused before anything starts
    const both = await ibsm(['run', '--metrics-port', '9', '--metrics-listen', '0.0.0.0:9']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/give either --metrics-port or --metrics-listen, not both/);
  });
});

describe('the log file', () => {
  it('SIGUSR1 reopens --log-file after logrotate moved it; a fatal error goes to the file and to stderr', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-logfile-'));
    const log = path.join(dir, 'ibsm.log');
    const p = spawn(process.execPath, [CLI, 'run', '--sim', SPEC, '--sweep-interval', '0', '--guid2lid', 'none', '--log-file', log], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    p.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => p.on('close', r));
    const waitFor = async (what: string, f: () => boolean): Promise<void> => {
      for (let i = 0; i < 300 && !f(); i++) await new Promise((r) => setTimeout(r, 50));
      expect(f(), what).toBe(true);
    };
    const read = (f: string): string => (existsSync(f) ? readFileSync(f, 'utf8') : '');
    try {
      await waitFor('SUBNET UP in the log file', () => hasCode(read(log), 'IBSM-1001'));
      renameSync(log, `${log}.1`);
      p.kill('SIGUSR1');
      await waitFor('the reopened file', () => hasCode(read(log), 'IBSM-8003', 'signal=SIGUSR1'));
      expect(hasCode(read(`${log}.1`), 'IBSM-8003')).toBe(false);
      p.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(read(log)).toMatch(logRe('IBSM-8002', 'reason=SIGTERM'));
      expect(stderr).toBe('');
    } finally {
      p.kill('SIGKILL');
    }
    const busy: Server = await new Promise((r) => {
      const s = createServer().listen(0, '127.0.0.1', () => r(s));
    });
    try {
      const port = (busy.address() as AddressInfo).port;
      const r = await ibsm(['run', '--sim', SPEC, '--metrics-port', String(port), '--log-file', log, '--once']);
      expect(r.code).toBe(1);
      expect(read(log)).toMatch(/ error IBSM-9102 metrics address not available; ibsm stops /);
      expect(r.stderr).toMatch(new RegExp(`^ibsm: MetricsListenError: --metrics-port ${port}: cannot serve metrics on 127\\.0\\.0\\.1:${port}`, 'm'));
    } finally {
      busy.close();
    }
  });
});

describe('ibsm run on a terminal', () => {
  it('the progress line is cleared before each log line and drawn again under it', async () => {
    const out: string[] = [];
    const io = { stderr: { write: (s: string) => out.push(s) }, isTTY: true };
    const { config } = runConfig(['--sim', SPEC, '--routing', 'minhop', '--sweep-interval', '0', '--once', '--verbose']);
    expect(await runSm(config, io)).toBe(0);
    const all = out.join('');
    const progress = out.filter((s) => s.startsWith('\r') && !s.startsWith('\r\x1b[K'));
    expect(progress.length).toBeGreaterThan(1); // the progress line was drawn
    // Every log line written while a progress line showed cleared it first.
    const logWrites = out.filter((s) => /IBSM-\d{4}/.test(s));
    expect(logWrites.length).toBeGreaterThan(5);
    const first = out.indexOf(progress[0]!);
    const end = out.indexOf('\n', first); // SUBNET UP: the progress line is left as it is
    expect(end).toBeGreaterThan(first);
    const during = out.slice(first, end).filter((s) => /IBSM-\d{4}/.test(s));
    expect(during.length).toBeGreaterThan(3);
    for (const w of during) expect(w.startsWith('\r\x1b[K'), w).toBe(true);
    for (const w of out.slice(end).filter((s) => /IBSM-\d{4}/.test(s))) expect(w.startsWith('\r'), w).toBe(false);
    // On the screen every log line stands alone: it starts with its time stamp.
    const screen = render(all).filter((l) => l.includes('IBSM-'));
    expect(screen.length).toBe(logWrites.length);
    for (const l of screen) expect(l).toMatch(/^\d{4}-\d\d-\d\dT\S+Z (debug|info |warn |error) IBSM-\d{4} /);
    expect(hasCode(screen, 'IBSM-1101')).toBe(true);
  });
});


describe('--verbose', () => {
  it('per-phase debug lines of every sweep, with codes, whose figures are the sweep\'s', async () => {
    const sink = new MemorySink();
    const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, routing: ['minhop'], log: new Logger(sink, 'debug', 'json') });
    try {
      const st = await sm.start();
      const lines = sink.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const phase = (code: string): Record<string, unknown> => {
        const l = lines.filter((x) => x.code === code);
        expect(l.length, code).toBe(1);
        expect(l[0]!.level).toBe('debug');
        return l[0]!;
      };
      const snap = sm.snapshot!;
      const sim = sm.sim!;
      const d = phase('IBSM-1101');
      expect(d).toMatchObject({ sweep: 1, nodes: sim.nodes.length, switches: sim.nodes.filter((n) => n.type === NodeType.Switch).length });
      expect(d.ms as number).toBeGreaterThanOrEqual(0);
      const lids = phase('IBSM-1102');
      expect(lids).toMatchObject({ endPorts: st.endPorts, maxLid: snap.maxLid, smLid: snap.smLid });
      const ports = phase('IBSM-1103');
      expect(ports.portInfoSets).toBe(st.portInfoSets);
      const r = phase('IBSM-1104');
      expect(r).toMatchObject({ engine: 'minhop', verified: true, deadlockFree: true, unreachablePairs: 0, loops: 0, cdgCycles: 0 });
      expect(r.routesPerLinkMax as number).toBeGreaterThan(0);
      const t = phase('IBSM-1105');
      expect(t.lftBlocks).toBe(st.lftBlocksWritten);
      expect(t.switchInfo).toBe(d.switches);
      const a = phase('IBSM-1106');
      expect(a.activated).toBe(st.activated);
      // Independent witness: the ports the simulated fabric holds ACTIVE (both ends of every link).
      let active = 0;
      sim.nodes.forEach((n, i) => {
        for (let p = 1; p < n.ports.length; p++) if (n.ports[p] && sim.portInfo(i, p).portState === PortState.Active) active++;
      });
      expect(ports.armed).toBe(active);
      expect(a.activated).toBe(active);
      phase('IBSM-1107');
      expect(phase('IBSM-1109')).toMatchObject({ kind: 'heavy', smps: st.smps });
      // A light sweep has its line too.
      await sm.subnet.sm.sweep('light');
      const light = sink.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.code === 'IBSM-1108');
      expect(light).toHaveLength(1);
      expect(light[0]).toMatchObject({ nodes: sim.nodes.length, changed: false });
    } finally {
      await sm.stop();
    }
  });

  it('without --verbose no phase line is written', async () => {
    const sink = new MemorySink();
    const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, routing: ['minhop'], log: new Logger(sink, 'info') });
    try {
      await sm.start();
      expect(withCode(sink.lines, SWEEP_PHASES)).toEqual([]);
      expect(sink.lines.some((l) => / info  IBSM-1001 /.test(l))).toBe(true);
    } finally {
      await sm.stop();
    }
  });
});
