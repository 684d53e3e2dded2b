/** Helpers of the ibsim SA tests: the topology plan (end ports and LIDs from a guid2lid), OpenSM
 * and ibsm started at the first node, saquery's output parsed into records and compared field by
 * field, ibroute -M parsed, multicast reach through the MFTs. Every process is stopped by PID. */
import { expect } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startIbsim, runPreloaded, startPreloaded, type Ibsim, type PreloadedProcess } from './ibsim.js';
import { formatIbnetdiscover } from '../../src/model/ibnetdiscover.js';
import { loadFabricSpec } from '../../src/model/load.js';
import { parseGuid2Lid } from '../../src/sm/lids.js';
import { NodeType } from '../../src/wire/mad.js';
import type { Fabric } from '../../src/model/fabric.js';
import { anyFormatRe } from './log-lines.js';

export const TIMEOUT = 60_000;
export const CLI = path.resolve('dist/cli/main.js');
export const CLIENT = path.resolve('test/fixtures/ibsim-sa-client.mjs');
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
export const hex16 = (g: bigint): string => g.toString(16);
/** fe80::<guid> as saquery prints it (inet_ntop: leading zeros dropped, longest zero run "::"). */
export function linkLocalGid(guid: bigint): string {
  const groups = [0xfe80, 0, 0, 0, Number((guid >> 48n) & 0xffffn), Number((guid >> 32n) & 0xffffn), Number((guid >> 16n) & 0xffffn), Number(guid & 0xffffn)];
  // Leading guid groups that are zero join the prefix's zero run.
  let i = 1;
  while (i < 8 && groups[i] === 0) i++;
  return `fe80::${groups.slice(i).map((g) => g.toString(16)).join(':')}`;
}

// ---------------------------------------------------------------- topology

export interface PlanEndPort {
  node: number;
  port: number;
  guid: bigint;
  lid: number;
  switch: boolean;
}
export interface Plan {
  fabric: Fabric;
  /** ibsim node names (SIM_HOST values) of the CAs, in file order. */
  caHosts: string[];
  ends: PlanEndPort[];
  lidOfGuid: Map<bigint, number>;
}

/** ibsim node ids of the CAs in a topology file (.net: `Hca N "id"`, ibnetdiscover: `Ca N "id"`). */
export function caHostsOf(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/^(?:Hca|Ca)\s+\d+\s+"([^"]+)"/gm)].map((m) => m[1]!);
}

export function planOf(file: string, guid2lid: string): Plan {
  const fabric = loadFabricSpec(file);
  const lidOfGuid = new Map([...parseGuid2Lid(guid2lid)].map(([g, r]) => [g, r.base]));
  const ends: PlanEndPort[] = [];
  fabric.nodes.forEach((n, i) => {
    n.ports.forEach((p, pn) => {
      if (!p) return;
      const sw = n.type === NodeType.Switch;
      if (sw ? pn !== 0 : !p.peer) return;
      const lid = lidOfGuid.get(p.guid);
      if (lid === undefined) throw new Error(`guid2lid has no LID for port GUID 0x${hex16(p.guid)} (${n.desc} port ${pn})`);
      ends.push({ node: i, port: pn, guid: p.guid, lid, switch: sw });
    });
  });
  return { fabric, caHosts: caHostsOf(file), ends, lidOfGuid };
}

/** A sample of at most `n` elements, spread over the list (deterministic). */
export function spread<T>(list: T[], n: number): T[] {
  if (list.length <= n) return list;
  const step = list.length / n;
  return Array.from({ length: n }, (_, i) => list[Math.floor(i * step)]!);
}

export interface Rec {
  title: string;
  fields: Map<string, string>;
}

/** saquery's dump: records start at an unindented "... dump:" (or section) line; field lines are
 * `<name>....<value>` (PortInfo: `<name>:....<value>`); capability bit names follow on their own lines. */
export function parseSaquery(text: string): Rec[] {
  const out: Rec[] = [];
  let cur: Rec | undefined;
  let last: string | undefined;
  for (const line of text.split('\n')) {
    if (!line.trim() || line.startsWith('ibwarn')) continue;
    if (!/^\s/.test(line)) {
      cur = { title: line.trim(), fields: new Map() };
      out.push(cur);
      last = undefined;
      continue;
    }
    if (!cur) continue;
    const m = /^\s+(\S.*?)(?::?\.{2,}:?|:\.+)(.*)$/.exec(line);
    if (m) {
      let key = m[1]!.trim();
      while (cur.fields.has(key)) key += "'";
      cur.fields.set(key, m[2]!.trim());
      last = key;
    } else if (last && !/dump:$|^\s*RID$/.test(line)) {
      cur.fields.set(last, `${cur.fields.get(last)} +${line.trim()}`);
    }
  }
  return out;
}
export function diffRecords(query: string, ours: Rec[], theirs: Rec[], excluded: Record<string, string> = {}): string[] {
  const out: string[] = [];
  if (ours.length !== theirs.length) {
    out.push(`${query}: ibsm printed ${ours.length} record(s) [${ours.map((r) => r.title).join(', ')}], OpenSM ${theirs.length} [${theirs.map((r) => r.title).join(', ')}]`);
  }
  for (let i = 0; i < Math.min(ours.length, theirs.length); i++) {
    const a = ours[i]!;
    const b = theirs[i]!;
    if (a.title !== b.title) out.push(`${query}: record ${i} is "${a.title}" under ibsm, "${b.title}" under OpenSM`);
    for (const k of new Set([...a.fields.keys(), ...b.fields.keys()])) {
      if (k in excluded) continue;
      const va = a.fields.get(k);
      const vb = b.fields.get(k);
      if (va !== vb) out.push(`${query}: record ${i} ${k}: ibsm=${va ?? '(absent)'} OpenSM=${vb ?? '(absent)'}`);
    }
  }
  return out;
}

// ---------------------------------------------------------------- running the SAs

export async function saquery(ib: Ibsim, host: string, args: string[]): Promise<{ code: number | null; out: string }> {
  const r = await runPreloaded('saquery', args, { ibsim: ib, simHost: host, timeoutMs: 20_000 });
  return { code: r.code, out: r.stdout };
}

export interface ClientResult {
  lines: Array<Record<string, unknown>>;
  stderr: string;
  code: number | null;
}
export async function client(ib: Ibsim, host: string, ops: unknown[], timeoutMs = 30_000): Promise<ClientResult> {
  const r = await runPreloaded(process.execPath, [CLIENT, JSON.stringify({ ops })], { ibsim: ib, simHost: host, timeoutMs });
  const lines = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('RESULT '))
    .map((l) => JSON.parse(l.slice(7)) as Record<string, unknown>);
  if (r.code !== 0 || lines.length !== ops.length) throw new Error(`SA client at ${host} failed (code ${r.code}, ${lines.length}/${ops.length} results):\n${r.stdout}\n${r.stderr}`);
  return { lines, stderr: r.stderr, code: r.code };
}

export async function waitFor(what: string, pred: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if (await pred()) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > end) throw new Error(`${what}: not reached within ${ms} ms`);
    await sleep(200);
  }
}

export interface RunningSa {
  proc: PreloadedProcess;
  /** OpenSM: its guid2lid; ibsm: the file it was started with. */
  guid2lid: string;
  log(): string;
}

/** OpenSM at the first node, its cache (guid2lid) and log in a scratch dir; resolves at SUBNET UP. */
export async function startOpenSm(ib: Ibsim, extraArgs: string[] = []): Promise<RunningSa> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-osm-'));
  const logFile = path.join(dir, 'opensm.log');
  // -D 0x05: errors and verbose messages (the "SUBNET UP" box is a verbose message).
  const proc = startPreloaded('opensm', ['-D', '0x05', '-f', logFile, ...extraArgs], { ibsim: ib, cwd: dir, env: { OSM_CACHE_DIR: dir, OSM_TMP_DIR: dir }, timeoutMs: 10 * TIMEOUT });
  const log = (): string => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  await waitFor('OpenSM SUBNET UP', () => log().includes('SUBNET UP'), 90_000);
  const g2l = path.join(dir, 'guid2lid');
  await waitFor('OpenSM guid2lid', () => existsSync(g2l) && readFileSync(g2l, 'utf8').trim().length > 0, 10_000);
  return { proc, guid2lid: g2l, log };
}

/** ibsm run at the first node; resolves at SUBNET UP (its log goes to stdout here). */
export async function startIbsm(ib: Ibsim, guid2lid: string, extraArgs: string[] = []): Promise<RunningSa> {
  const proc = startPreloaded('bash', ['-c', 'exec "$0" "$@" 2>&1', process.execPath, CLI, 'run', '--umad', '--sweep-interval', '2', '--guid2lid', guid2lid, ...extraArgs], { ibsim: ib, timeoutMs: 10 * TIMEOUT });
  await proc.waitForLine((l) => anyFormatRe('IBSM-1001').test(l), 30_000); // text or --log-format json
  return { proc, guid2lid, log: () => proc.stdout() };
}

export async function stopSa(sa: RunningSa | undefined, kind: string): Promise<void> {
  if (!sa) return;
  const r = await sa.proc.stop('SIGTERM');
  // ibsm must leave on SIGTERM by itself (exit 0); OpenSM's exit code is not ours to judge.
  if (kind === 'ibsm') expect(r.code, `ibsm exit (signal ${r.signal}):\n${r.stdout.slice(-2000)}`).toBe(0);
}

export function fattreeFile(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-sa-gen-'));
  const file = path.join(dir, 'fattree.net');
  writeFileSync(file, formatIbnetdiscover(loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=4'), { timestamp: 'x' }));
  return file;
}

// ---------------------------------------------------------------- ibsm alone

/** ibsm on a fresh ibsim of `file` (LIDs of its own choosing, written to a scratch guid2lid). */
export async function withIbsm<T>(file: string, fn: (ib: Ibsim, plan: Plan, sm: RunningSa) => Promise<T>, extraArgs: string[] = []): Promise<T> {
  const ib = await startIbsim(file);
  let sm: RunningSa | undefined;
  try {
    const g2l = path.join(mkdtempSync(path.join(os.tmpdir(), 'ibsm-g2l-')), 'guid2lid');
    sm = await startIbsm(ib, g2l, extraArgs);
    await waitFor('guid2lid written', () => existsSync(g2l), 10_000);
    const plan = planOf(file, readFileSync(g2l, 'utf8'));
    const out = await fn(ib, plan, sm);
    return out;
  } finally {
    await stopSa(sm, 'ibsm');
    await ib.stop();
  }
}

export async function ibsmQuery(ib: Ibsim, host: string, args: string[]): Promise<Array<Record<string, unknown>>> {
  const r = await runPreloaded(process.execPath, [CLI, 'query', ...args, '--umad', '--json'], { ibsim: ib, simHost: host, timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`ibsm query ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Array<Record<string, unknown>>;
}
/** `ibroute -M <lid>`: MLID → ports set in the switch's MFT. */
export function parseIbrouteMcast(text: string): Map<number, number[]> {
  const out = new Map<number, number[]>();
  const header = /^(\s*Ports:)(.*)$/m.exec(text);
  if (!header) return out;
  const cols: Array<[number, number]> = [];
  for (const m of header[2]!.matchAll(/\d+/g)) cols.push([header[1]!.length + m.index! + m[0].length - 1, Number(m[0])]);
  for (const m of text.matchAll(/^(0x[0-9a-f]{4})(.*)$/gim)) {
    const row = m[0];
    out.set(parseInt(m[1]!, 16), cols.filter(([c]) => row[c] === 'x').map(([, p]) => p));
  }
  return out;
}

/** Walk the MFTs from `from` (a CA end port) for `mlid`; returns the CA end-port GUIDs reached and any switch reached twice. */
export function mcastReach(plan: Plan, mfts: Map<number, Map<number, number[]>>, from: PlanEndPort, mlid: number): { reached: Set<bigint>; loops: string[] } {
  const reached = new Set<bigint>();
  const loops: string[] = [];
  const seen = new Set<number>();
  const first = plan.fabric.nodes[from.node]!.ports[from.port]!.peer!;
  const queue: Array<{ node: number; inPort: number }> = [{ node: first.node, inPort: first.port }];
  while (queue.length) {
    const { node, inPort } = queue.shift()!;
    const n = plan.fabric.nodes[node]!;
    if (n.type !== NodeType.Switch) {
      reached.add(n.ports[inPort]!.guid);
      continue;
    }
    if (seen.has(node)) {
      loops.push(`${n.desc} reached twice`);
      continue;
    }
    seen.add(node);
    for (const out of mfts.get(node)?.get(mlid) ?? []) {
      if (out === inPort || out === 0) continue;
      const peer = n.ports[out]?.peer;
      if (peer) queue.push({ node: peer.node, inPort: peer.port });
    }
  }
  return { reached, loops };
}

/** The VL tables QoS programs, read back with smpquery from `host`: a CA port's SL2VL and
 * VLArbitration, and a switch's SL2VL (port 1 to 2) and VLArbitration (port 2), by name. */
export async function readVlTables(ib: Ibsim, plan: Plan, host: string): Promise<Map<string, string>> {
  const a = plan.ends.find((e) => !e.switch)!;
  const sw = plan.ends.find((e) => e.switch)!;
  const tables = new Map<string, string>();
  for (const [name, args] of [
    ['sl2vl CA', ['sl2vl', String(a.lid), '1']],
    ['vlarb CA', ['vlarb', String(a.lid), '1']],
    ['sl2vl switch 1->2', ['sl2vl', String(sw.lid), '2', '1']],
    ['vlarb switch port 2', ['vlarb', String(sw.lid), '2']],
  ] as const) {
    tables.set(name, (await runPreloaded('smpquery', [...args], { ibsim: ib, simHost: host, timeoutMs: 20_000 })).stdout);
  }
  return tables;
}
