/**
 * The local control socket of a running SM (`ibsm run --control-socket PATH`): a unix socket of
 * mode 0600 (its owner only: root on a real host), never a network port. One JSON request per
 * line (`{"cmd":"status"}`, `{"cmd":"resweep","heavy":true}`, `{"cmd":"reroute"}`, `{"cmd":"reload"}`,
 * `{"cmd":"dump","what":"lfts"}`, `{"cmd":"topo","format":"svg"}`,
 * `{"cmd":"what-if","spec":"links"}`), one JSON answer per line (`{"ok":true,"result":…}` or
 * `{"ok":false,"error":"…"}`). Requests are bounded in size and connections in number; a bad
 * request is answered with an error, never fatal.
 */
import { chmodSync, lstatSync, mkdirSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import type { Logger } from '../util/log.js';
import { ConnectionGuard, type ConnectionGuardOptions } from '../util/conn-guard.js';
import { formatGuid } from '../util/guid.js';
import { IbsmError } from '../util/errors.js';

const MAX_REQUEST = 64 * 1024;
/** Requests waiting on one connection, and bytes of answers it has not read, before it is closed. */
const MAX_QUEUED = 64;
const MAX_UNREAD = 4 << 20;
/** Connections at once (a unix socket's peers are one: its owner), and how long one may idle: a
 * new connection closes the oldest idle one rather than being refused (util/conn-guard.ts). */
export const CONTROL_CONNECTIONS: Readonly<ConnectionGuardOptions> = { max: 16, perPeer: 16, idleMs: 30_000 };

export const DUMPS = ['lfts', 'mfts', 'topology', 'lids', 'traffic', 'health', 'vports'] as const;
export type DumpKind = (typeof DUMPS)[number];

export const TOPO_FORMATS = ['dot', 'svg', 'json'] as const;
export type TopoFormat = (typeof TOPO_FORMATS)[number];

export type ControlRequest = { cmd: 'status' } | { cmd: 'resweep'; heavy?: boolean } | { cmd: 'reroute' } | { cmd: 'reload' } | { cmd: 'dump'; what: DumpKind } | { cmd: 'topo'; format: TopoFormat } | { cmd: 'what-if'; spec: string; verify?: 'full' | 'fast' } | VportRequest | { cmd: 'isolate' | 'release'; target: string };

/** `ibsm vport create|destroy HOST[:PORT] [N]`: a hypervisor's act on the embedded simulated fabric. */
export interface VportRequest {
  cmd: 'vport';
  action: 'create' | 'destroy';
  node: string;
  port: number;
  count: number;
}
/** Vports one request may create or destroy. */
export const MAX_VPORTS_PER_REQUEST = 1024;

/** What the running SM offers the socket. */
export interface ControlTarget {
  status(): unknown;
  resweep(heavy: boolean): Promise<unknown>;
  reroute(): Promise<unknown>;
  /** A dump's text (`traffic` is computed then, in steps: a promise). */
  dump(what: DumpKind): string | Promise<string>;
  /** The picture of the fabric (view/topology.ts). */
  topo(format: TopoFormat): string;
  /** Fail each case of `spec` in turn on the live fabric and re-route as the SM would
   * (cli/what-if.ts `liveWhatIf`): the cases, the summary; one at a time. */
  whatIf?(spec: string, verify: 'full' | 'fast'): Promise<unknown>;
  /** Reload the configuration, as SIGHUP (cli/run.ts). */
  reload?(): Promise<unknown>;
  /** Isolate or release a node or port by hand (sm/health-manual.ts), a sweep applying it. */
  isolate?(target: string, release: boolean): Promise<unknown>;
  /** Vports created or destroyed as a hypervisor would (only with the embedded simulated fabric). */
  vport?(req: VportRequest): unknown;
}

export class ControlError extends IbsmError {
  override readonly name = 'ControlError';
}

function parseRequest(line: string): ControlRequest {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    throw new ControlError('request is not JSON');
  }
  const r = v as Record<string, unknown>;
  switch (r?.cmd) {
    case 'status':
    case 'reroute':
    case 'reload':
      return { cmd: r.cmd };
    case 'resweep':
      return { cmd: 'resweep', heavy: r.heavy === true };
    case 'dump':
      if (typeof r.what !== 'string' || !(DUMPS as readonly string[]).includes(r.what)) throw new ControlError(`dump what? one of ${DUMPS.join(', ')}`);
      return { cmd: 'dump', what: r.what as DumpKind };
    case 'topo':
      if (typeof r.format !== 'string' || !(TOPO_FORMATS as readonly string[]).includes(r.format)) throw new ControlError(`topo format? one of ${TOPO_FORMATS.join(', ')}`);
      return { cmd: 'topo', format: r.format as TopoFormat };
    case 'what-if':
      if (typeof r.spec !== 'string' || !r.spec.trim()) throw new ControlError('what-if of what? links, switches or a LIST');
      if (r.verify !== undefined && r.verify !== 'full' && r.verify !== 'fast') throw new ControlError('what-if verify: full or fast');
      return { cmd: 'what-if', spec: r.spec, ...(r.verify ? { verify: r.verify } : {}) };
    case 'isolate':
    case 'release':
      if (typeof r.target !== 'string' || !r.target.trim()) throw new ControlError(`${r.cmd} what? NODE[:PORT]`);
      return { cmd: r.cmd, target: r.target };
    case 'vport':
      return parseVportRequest(r);
    default:
      throw new ControlError(`unknown command ${JSON.stringify(r?.cmd)}; commands: status, resweep, reroute, reload, dump, topo, what-if, vport, isolate, release`);
  }
}

async function answer(target: ControlTarget, req: ControlRequest): Promise<unknown> {
  switch (req.cmd) {
    case 'status':
      return target.status();
    case 'resweep':
      return target.resweep(req.heavy === true);
    case 'reroute':
      return target.reroute();
    case 'reload':
      if (!target.reload) throw new ControlError('reload is not available here');
      return target.reload();
    case 'dump':
      return target.dump(req.what);
    case 'topo':
      return target.topo(req.format);
    case 'what-if':
      if (!target.whatIf) throw new ControlError('what-if is not available here');
      return target.whatIf(req.spec, req.verify ?? 'full');
    case 'isolate':
    case 'release':
      if (!target.isolate) throw new ControlError(`${req.cmd} is not available here`);
      return target.isolate(req.target, req.cmd === 'release');
    case 'vport':
      if (!target.vport) throw new ControlError('vport create|destroy needs the embedded simulated fabric (ibsm run --sim): on a real fabric the hypervisor makes the VFs');
      return target.vport(req);
  }
}

function parseVportRequest(r: Record<string, unknown>): VportRequest {
  if (r.action !== 'create' && r.action !== 'destroy') throw new ControlError('vport what? create or destroy');
  if (typeof r.node !== 'string' || !r.node) throw new ControlError('vport: which host? HOST[:PORT] (a node description, GUID or index)');
  const port = r.port ?? 1;
  const count = r.count ?? 1;
  if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 254) throw new ControlError(`vport: port ${String(port)} is not 1..254`);
  if (!Number.isInteger(count) || (count as number) < 1 || (count as number) > MAX_VPORTS_PER_REQUEST) throw new ControlError(`vport: count ${String(count)} is not 1..${MAX_VPORTS_PER_REQUEST}`);
  return { cmd: 'vport', action: r.action, node: r.node, port: port as number, count: count as number };
}

/** `HOST[:PORT] [N]` of `ibsm vport create|destroy` as a request (throws ControlError on a bad one). */
export function vportRequestOf(action: string | undefined, where: string | undefined, n: string | undefined): VportRequest {
  const m = where !== undefined ? /^(.+?)(?::(\d+))?$/.exec(where) : null;
  return parseVportRequest({ action, node: m?.[1], port: m?.[2] !== undefined ? Number(m[2]) : undefined, count: n !== undefined ? Number(n) : undefined });
}

const json = (v: unknown): string => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${formatGuid(x)}` : x));

/** What is at a control socket path: nothing, a socket no one serves (stale: left by an ibsm that
 * died), or a socket another process serves (live). Anything else there (a file, a directory, a
 * symbolic link) is refused with a ControlError naming the path: never removed. */
export async function controlSocketState(path: string): Promise<'absent' | 'stale' | 'live'> {
  let st;
  try {
    st = lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw new ControlError(`${path}: ${(e as Error).message}`);
  }
  if (!st.isSocket()) throw new ControlError(`${path} exists and is not a socket (${st.isDirectory() ? 'a directory' : st.isSymbolicLink() ? 'a symbolic link' : 'a file'}): ibsm does not replace it; remove it or give another --control-socket`);
  const live = await new Promise<boolean>((res) => {
    const s = createConnection(path);
    s.once('connect', () => (s.destroy(), res(true)));
    s.once('error', (e: NodeJS.ErrnoException) => res(e.code !== 'ECONNREFUSED' && e.code !== 'ENOENT'));
  });
  return live ? 'live' : 'stale';
}

/** Check a control socket path before anything else happens (before the first SMP): its
 * directory can be made, and it is absent or a stale socket; throws a ControlError otherwise. */
export async function checkControlPath(path: string): Promise<void> {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  } catch (e) {
    throw new ControlError(`${path}: its directory cannot be made: ${(e as Error).message}`);
  }
  if ((await controlSocketState(path)) === 'live') throw new ControlError(`another ibsm serves the control socket ${path}; give another --control-socket`);
}

/** Listen on `path` (its directory made if needed; a stale socket replaced; a live one, or
 * anything that is not a socket, refused). Connections are held under abuse (CONTROL_CONNECTIONS). */
export async function serveControl(path: string, target: ControlTarget, log: Logger): Promise<Server> {
  await checkControlPath(path);
  if ((await controlSocketState(path)) === 'stale') unlinkSync(path);
  const server = createServer((sock: Socket) => {
    // Bytes, not strings: a line is decoded once it is whole, so over-long or never-ended lines
    // (issue #29's abuse) cost the JS heap nothing; their chunks are only held, up to MAX_REQUEST.
    let parts: Buffer[] = [];
    let pending = 0;
    let queued = 0;
    let chain = Promise.resolve();
    sock.on('error', () => sock.destroy());
    sock.on('data', (d: Buffer) => {
      if (pending + d.length > MAX_REQUEST) {
        parts = [];
        pending = 0;
        sock.end(json({ ok: false, error: `request longer than ${MAX_REQUEST} bytes` }) + '\n', () => sock.destroy());
        return;
      }
      let from = 0;
      let nl: number;
      while ((nl = d.indexOf(10, from)) >= 0) {
        const tail = d.subarray(from, nl);
        const line = (pending ? Buffer.concat([...parts, tail]) : tail).toString('utf8').trim();
        parts = [];
        pending = 0;
        from = nl + 1;
        if (!line) continue;
        // Requests queued on one connection, and answers it leaves unread, are bounded too.
        if (++queued > MAX_QUEUED || sock.writableLength > MAX_UNREAD) {
          sock.end(json({ ok: false, error: `more than ${MAX_QUEUED} requests waiting on one connection, or answers left unread` }) + '\n', () => sock.destroy());
          return;
        }
        guard.busy(sock, 1);
        chain = chain.then(async () => {
          let reply: string;
          try {
            reply = json({ ok: true, result: await answer(target, parseRequest(line)) });
          } catch (e) {
            reply = json({ ok: false, error: (e as Error).message });
          }
          guard.busy(sock, -1);
          queued--;
          if (!sock.destroyed) sock.write(reply + '\n');
        });
      }
      if (from < d.length) {
        parts.push(d.subarray(from));
        pending += d.length - from;
      }
    });
  });
  const guard = new ConnectionGuard(server, CONTROL_CONNECTIONS);
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(path, () => res());
  });
  chmodSync(path, 0o600);
  server.on('error', (e) => log.warn('control socket error', { path, error: e.message }));
  server.on('close', () => {
    try {
      unlinkSync(path);
    } catch {
      /* gone */
    }
  });
  return server;
}

/** Send one request to a running SM and return its result (throws ControlError with what to do). */
export function controlRequest(path: string, req: ControlRequest, timeoutMs = 30_000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const s = createConnection(path);
    let buf = '';
    const timer = setTimeout(() => (s.destroy(), reject(new ControlError(`no answer from ${path} within ${timeoutMs} ms`))), timeoutMs);
    s.setEncoding('utf8');
    s.once('connect', () => s.write(json(req) + '\n'));
    s.on('data', (d: string) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      s.end();
      const r = JSON.parse(buf.slice(0, nl)) as { ok: boolean; result?: unknown; error?: string };
      if (r.ok) resolve(r.result);
      else reject(new ControlError(r.error ?? 'the SM refused the request'));
    });
    s.once('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (e.code === 'EACCES' || e.code === 'EPERM') reject(new ControlError(`permission denied on the control socket ${path}: it is its owner's only (mode 0600); run as the SM's user (root)`));
      else if (e.code === 'ENOENT' || e.code === 'ECONNREFUSED') reject(new ControlError(`no ibsm listens on ${path}: start \`ibsm run\` (with --control-socket) or give --socket PATH`));
      else reject(new ControlError(`control socket ${path}: ${e.message}`));
    });
  });
}
