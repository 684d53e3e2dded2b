/** Issue #29 items 2 and 3: local resources checked before the first SMP and never destroyed; the
 * control socket, the web view and the metrics endpoint hold under abuse (connections left open,
 * requests sent half, a Host header from elsewhere). Real sockets, the real command. */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { controlRequest, serveControl, CONTROL_CONNECTIONS, type ControlTarget } from '../src/cli/control.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { openSm, type IbsmSm } from '../src/index.js';
import { staleSocket } from './helpers/sockets.js';
import { hasCode } from './helpers/log-lines.js';

const CLI = path.resolve('dist/cli/main.js');
const SPEC = 'gen:fattree2:leaves=2,spines=1,hosts=2';
const tmp = (): string => mkdtempSync(path.join(os.tmpdir(), 'ibsm-harden-'));

function ibsm(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    p.stderr.on('data', (d) => (stderr += d));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stderr }));
  });
}

const target: ControlTarget = {
  status: () => ({ role: 'master' }),
  resweep: async () => ({}),
  reroute: async () => ({}),
  dump: () => '',
  topo: () => '',
};

/** `n` connections to a unix socket or TCP port, each with `send` written (and left open). */
async function open(n: number, to: { path: string } | { port: number; host: string }, send = ''): Promise<Socket[]> {
  const out: Socket[] = [];
  for (let i = 0; i < n; i++) {
    const s = connect(to as never);
    s.on('error', () => undefined);
    await new Promise<void>((r) => s.once('connect', () => r()).once('close', () => r()));
    if (send && !s.destroyed) s.write(send);
    out.push(s);
  }
  return out;
}

function get(port: number, urlPath: string, host = `127.0.0.1:${port}`): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: urlPath, headers: { host }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the control socket path: refused unless absent or a stale socket, never removed', () => {
  it('a regular file, a directory and a symbolic link at the path are refused and left as they were', async () => {
    const dir = tmp();
    const file = path.join(dir, 'notes.txt');
    writeFileSync(file, 'keep me\n');
    await expect(serveControl(file, target, new Logger(new MemorySink()))).rejects.toThrow(/notes\.txt exists and is not a socket \(a file\).*--control-socket/);
    expect(readFileSync(file, 'utf8')).toBe('keep me\n');
    const sub = path.join(dir, 'adir');
    mkdirSync(sub);
    await expect(serveControl(sub, target, new Logger(new MemorySink()))).rejects.toThrow(/adir exists and is not a socket \(a directory\)/);
    expect(lstatSync(sub).isDirectory()).toBe(true);
    const link = path.join(dir, 'link.sock');
    symlinkSync(file, link);
    await expect(serveControl(link, target, new Logger(new MemorySink()))).rejects.toThrow(/not a socket \(a symbolic link\)/);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });

  it('a stale socket is replaced; a live one is refused and keeps serving', async () => {
    const sock = path.join(tmp(), 'ibsm.sock');
    staleSocket(sock);
    const server = await serveControl(sock, target, new Logger(new MemorySink()));
    try {
      await expect(serveControl(sock, target, new Logger(new MemorySink()))).rejects.toThrow(/another ibsm serves the control socket/);
      expect(await controlRequest(sock, { cmd: 'status' })).toEqual({ role: 'master' });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('ibsm run: a control socket path that is a file stops ibsm before the fabric is touched, naming the option and the path; the file stays', async () => {
    const file = path.join(tmp(), 'important');
    writeFileSync(file, 'data\n');
    const r = await ibsm(['run', '--sim', SPEC, '--control-socket', file, '--once']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`IBSM-9106`);
    expect(r.stderr).toContain(`--control-socket ${file}: ${file} exists and is not a socket`);
    expect(hasCode(r.stderr, 'IBSM-8001')).toBe(false); // before the backend is opened
    expect(hasCode(r.stderr, 'IBSM-1001')).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('data\n');
  });

  it('ibsm run: an unwritable guid2lid cache and an unopenable log file stop ibsm before the first SMP, naming the option and the path', async () => {
    const dir = tmp();
    const notDir = path.join(dir, 'plain');
    writeFileSync(notDir, '');
    const g = await ibsm(['run', '--sim', SPEC, '--guid2lid', path.join(notDir, 'guid2lid'), '--once']);
    expect(g.code).toBe(1);
    // (the configuration's file check, before the cache's write check, finds it first: either names the option and the path)
    expect(g.stderr).toMatch(new RegExp(`--guid2lid ${path.join(notDir, 'guid2lid').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}.*cannot be (read|written)`));
    expect(hasCode(g.stderr, 'IBSM-8001')).toBe(false);
    expect(hasCode(g.stderr, 'IBSM-1001')).toBe(false);
    const l = await ibsm(['run', '--sim', SPEC, '--log-file', path.join(notDir, 'ibsm.log'), '--once']);
    expect(l.code).toBe(1);
    expect(l.stderr).toContain(`--log-file ${path.join(notDir, 'ibsm.log')}: cannot open it`);
    expect(hasCode(l.stderr, 'IBSM-1001')).toBe(false);
  });
});

describe('the control socket under abuse', () => {
  it(`${CONTROL_CONNECTIONS.max} idle connections and 100 more, and 40 half-sent requests, do not lock out status`, async () => {
    const sock = path.join(tmp(), 'ibsm.sock');
    const server = await serveControl(sock, target, new Logger(new MemorySink()));
    const held: Socket[] = [];
    try {
      held.push(...(await open(CONTROL_CONNECTIONS.max + 100, { path: sock })));
      expect(await controlRequest(sock, { cmd: 'status' }, 10_000)).toEqual({ role: 'master' });
      held.push(...(await open(40, { path: sock }, '{"cmd":"sta')));
      expect(await controlRequest(sock, { cmd: 'status' }, 10_000)).toEqual({ role: 'master' });
      // a connection that queues requests without reading the answers is closed, not grown
      const [greedy] = await open(1, { path: sock }, '{"cmd":"status"}\n'.repeat(1000));
      held.push(greedy!);
      greedy!.resume(); // it reads now: it sees the server close it
      await new Promise<void>((r) => (greedy!.destroyed ? r() : greedy!.once('close', () => r())));
      expect(await controlRequest(sock, { cmd: 'status' }, 10_000)).toEqual({ role: 'master' });
    } finally {
      for (const s of held) s.destroy();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('the web view and the metrics endpoint under abuse', () => {
  let sm: IbsmSm | undefined;
  afterAll(async () => sm?.stop());

  it('128 (and 300) half-sent requests do not take the web view or the metrics down; metrics check the Host header (403)', async () => {
    sm = await openSm({ sim: SPEC, sweepIntervalS: 0, web: '127.0.0.1:0', metricsListen: '127.0.0.1:0', log: new Logger(new MemorySink()) });
    await sm.start();
    const webPort = new URL(sm.webUrl!).port;
    const metricsUrl = (sm as unknown as { metrics: import('node:http').Server }).metrics.address() as import('node:net').AddressInfo;
    const web = Number(webPort);
    const metrics = metricsUrl.port;
    const held: Socket[] = [];
    try {
      for (const [port, p] of [[web, '/api/state'], [metrics, '/metrics']] as const) {
        for (const n of [128, 300]) {
          held.push(...(await open(n, { port, host: '127.0.0.1' }, 'GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ')));
          const r = await get(port, p);
          expect(r.status, `${p} after ${n} half-sent requests`).toBe(200);
        }
      }
      expect((await get(metrics, '/metrics', 'evil.example:80')).status).toBe(403);
      expect((await get(metrics, '/metrics', `localhost:${metrics}`)).status).toBe(200);
      expect((await get(web, '/api/state', 'evil.example:80')).status).toBe(403);
    } finally {
      for (const s of held) s.destroy();
    }
  });
});

