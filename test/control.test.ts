/** The control socket (src/cli/control.ts): requests and answers over a real unix socket, mode
 * 0600, bad requests answered with an error, a live socket not taken over, a stale one replaced,
 * and a user who may not open it refused with a message that says so. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, statSync, chmodSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { controlRequest, serveControl, ControlError, type ControlTarget } from '../src/cli/control.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { staleSocket } from './helpers/sockets.js';

function target(): ControlTarget & { sweeps: boolean[] } {
  const sweeps: boolean[] = [];
  return {
    sweeps,
    status: () => ({ role: 'master', sweeps: sweeps.length }),
    resweep: async (heavy) => (sweeps.push(heavy), { kind: heavy ? 'heavy' : 'light' }),
    reroute: async () => ({ rerouted: true }),
    dump: (what) => `dump of ${what}\n`,
    topo: (format) => `picture as ${format}\n`,
  };
}

describe('control socket', () => {
  it('answers status, resweep, reroute and dump; refuses what it does not know; mode 0600', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-ctl-'));
    const sock = path.join(dir, 'sub', 'ibsm.sock');
    const t = target();
    const server = await serveControl(sock, t, new Logger(new MemorySink()));
    try {
      expect(statSync(sock).mode & 0o777).toBe(0o600);
      expect(await controlRequest(sock, { cmd: 'status' })).toEqual({ role: 'master', sweeps: 0 });
      expect(await controlRequest(sock, { cmd: 'resweep', heavy: true })).toEqual({ kind: 'heavy' });
      expect(await controlRequest(sock, { cmd: 'resweep' })).toEqual({ kind: 'light' });
      expect(t.sweeps).toEqual([true, false]);
      expect(await controlRequest(sock, { cmd: 'reroute' })).toEqual({ rerouted: true });
      expect(await controlRequest(sock, { cmd: 'dump', what: 'lfts' })).toBe('dump of lfts\n');
      expect(await controlRequest(sock, { cmd: 'topo', format: 'dot' })).toBe('picture as dot\n');
      await expect(controlRequest(sock, { cmd: 'dump', what: 'nope' } as never)).rejects.toThrow(/dump what\? one of lfts, mfts, topology, lids/);
      await expect(controlRequest(sock, { cmd: 'halt' } as never)).rejects.toThrow(/unknown command "halt"/);
      // a second SM on the same path is refused; the first keeps serving
      await expect(serveControl(sock, target(), new Logger(new MemorySink()))).rejects.toThrow(ControlError);
      expect(await controlRequest(sock, { cmd: 'status' })).toMatchObject({ role: 'master' });
    } finally {
      await new Promise((r) => server.close(r));
    }
    await expect(controlRequest(sock, { cmd: 'status' })).rejects.toThrow(/no ibsm listens on/);
  });

  it('replaces a stale socket (left by a process that died)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-ctl-'));
    const sock = path.join(dir, 'ibsm.sock');
    staleSocket(sock);
    expect(statSync(sock).isSocket()).toBe(true);
    const server = await serveControl(sock, target(), new Logger(new MemorySink()));
    expect(await controlRequest(sock, { cmd: 'status' })).toMatchObject({ role: 'master' });
    await new Promise((r) => server.close(r));
  });

  it('a user who may not open the socket gets a permission error that says what to do', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-ctl-'));
    chmodSync(dir, 0o755);
    const sock = path.join(dir, 'ibsm.sock');
    const server = await serveControl(sock, target(), new Logger(new MemorySink()));
    try {
      const client = `import('${path.resolve('dist/cli/control.js')}').then((m) => m.controlRequest(${JSON.stringify(sock)}, { cmd: 'status' })).then(() => process.exit(0), (e) => { console.log(e.message); process.exit(3); })`;
      // root passes any file mode: the client runs as nobody; anyone else is refused by mode 000
      if (process.getuid?.() !== 0) chmodSync(sock, 0);
      const cmd = process.getuid?.() === 0 ? ['setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', client]] : [process.execPath, ['-e', client]];
      const r = spawnSync(cmd[0] as string, cmd[1] as string[], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(3);
      expect(r.stdout).toMatch(/permission denied on the control socket .*mode 0600/);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
