/** LID assignment: pure, with OpenSM's guid2lid file format for persistence.
 *
 * End ports are every connected CA/router port and every switch's port 0. Each gets 2^LMC
 * consecutive LIDs aligned to 2^LMC (a switch's base port 0 gets one LID unless it has enhanced
 * port 0 and lmc_esp0 is set, as OpenSM does). Preference order for a
 * port's range: the guid2lid map (what the operator or a previous run persisted), then the LID
 * the port already has on the wire if it is valid, aligned and free, then the lowest free aligned
 * range. The SM's own port is placed first so a cold fabric gives it LID 1. */
import { IbsmError, IbsmFileError } from '../util/errors.js';
import type { Fabric } from '../model/fabric.js';
import { endPorts as fabricEndPorts, type DiscoveryResult } from '../model/snapshot.js';
import { formatGuid } from '../util/guid.js';

export const MAX_UNICAST_LID = 0xbfff;

export interface LidRange {
  base: number;
  lmc: number;
}

export interface LidOptions {
  lmc: number;
  /** The SM's port (node index, port number): assigned first. */
  smNode?: number;
  smPort?: number;
  /** Persisted assignments by port GUID (guid2lid). */
  existing?: ReadonlyMap<bigint, LidRange>;
  /** Honour LIDs found on the ports (port.lid as discovered). Default true. */
  keepCurrent?: boolean;
  /** Switches (node index) whose port 0 gets `lmc` too (OpenSM lmc_esp0 on an enhanced port 0);
   * the others get LMC 0. */
  lmcSwitch?: (node: number) => boolean;
  /** LIDs fresh ranges avoid (vport hook, sm/vport-mgr.ts: the vports' LIDs, kept while they exist). */
  reserved?: ReadonlySet<number>;
}

export interface LidAssignment {
  maxLid: number;
  /** port GUID → assigned range, for every end port. */
  byGuid: Map<bigint, LidRange>;
  /** End ports whose LID changed from what they had on the wire. */
  changed: number;
}

export class LidSpaceExhausted extends IbsmError {
  override readonly name = 'LidSpaceExhausted';
}

/** An end port as LID assignment sees it: the LMC it gets and the LID it has now. */
interface LidPort {
  node: number;
  port: number;
  guid: bigint;
  lmc: number;
  current: number;
}

/** The end ports that get LIDs (model/snapshot.ts's end ports that are linked: every switch's
 * port 0, every CA/router port with a cable), with the LMC each gets (switches: 0, or `lmc` where
 * `lmcSwitch` says). */
export function endPorts(fabric: Fabric, lmc: number, lmcSwitch?: (node: number) => boolean): LidPort[] {
  return fabricEndPorts(fabric)
    .filter((e) => e.linked)
    .map((e) => ({ node: e.node, port: e.port, guid: e.guid, lmc: e.kind === 'switch' && !lmcSwitch?.(e.node) ? 0 : lmc, current: e.lid }));
}

/** OpenSM lmc_esp0: with an LMC, the switches whose port 0 gets it too (those whose SwitchInfo
 * says EnhancedPort0); undefined when off. */
export function lmcSwitches(disc: DiscoveryResult, s: { lmc: number; lmcEsp0?: boolean }): ((node: number) => boolean) | undefined {
  if (!s.lmcEsp0 || s.lmc === 0) return undefined;
  return (node) => disc.nodes[node]?.switchInfo?.enhancedPort0 === 1;
}

/** Assign LIDs in place (sets port.lid and port.lmc on every end port). */
export function assignLids(fabric: Fabric, opts: LidOptions): LidAssignment {
  if (!Number.isInteger(opts.lmc) || opts.lmc < 0 || opts.lmc > 7) throw new RangeError(`LMC must be 0..7, got ${opts.lmc}`);
  const ports = endPorts(fabric, opts.lmc, opts.lmcSwitch);
  const smIdx = ports.findIndex((p) => p.node === opts.smNode && (opts.smPort === undefined || p.port === opts.smPort));
  if (smIdx > 0) ports.unshift(...ports.splice(smIdx, 1));

  const used = new Uint8Array(MAX_UNICAST_LID + 1);
  used[0] = 1;
  const result = new Map<bigint, LidRange>();
  const assigned: (number | undefined)[] = new Array(ports.length);

  const free = (base: number, n: number): boolean => {
    if (base < 1 || base + n - 1 > MAX_UNICAST_LID || base % n !== 0) return false;
    for (let l = base; l < base + n; l++) if (used[l]) return false;
    return true;
  };
  const take = (i: number, base: number, n: number): void => {
    for (let l = base; l < base + n; l++) used[l] = 1;
    assigned[i] = base;
  };

  // 1. persisted, 2. current
  for (const pass of ['existing', 'current'] as const) {
    if (pass === 'current' && opts.keepCurrent === false) continue;
    ports.forEach((p, i) => {
      if (assigned[i] !== undefined) return;
      const n = 1 << p.lmc;
      const want = pass === 'existing' ? opts.existing?.get(p.guid)?.base : p.current;
      if (want !== undefined && free(want, n)) take(i, want, n);
    });
  }
  // 3. fresh ranges, lowest first (not over a LID a vport holds)
  if (opts.reserved) for (const l of opts.reserved) if (l > 0 && l <= MAX_UNICAST_LID) used[l] = 1;
  let cursor = 1;
  ports.forEach((p, i) => {
    if (assigned[i] !== undefined) return;
    const n = 1 << p.lmc;
    let base = Math.ceil(cursor / n) * n;
    while (base + n - 1 <= MAX_UNICAST_LID && !free(base, n)) base += n;
    if (base + n - 1 > MAX_UNICAST_LID) throw new LidSpaceExhausted(`no free unicast LID range of ${n} left for port GUID ${formatGuid(p.guid)}`);
    take(i, base, n);
    if (n === 1) cursor = base + 1;
  });

  let maxLid = 0;
  let changed = 0;
  ports.forEach((p, i) => {
    const base = assigned[i]!;
    const port = fabric.nodes[p.node]!.ports[p.port]!;
    if (base !== p.current || (port.lmc ?? 0) !== p.lmc) changed++;
    port.lid = base;
    port.lmc = p.lmc;
    result.set(p.guid, { base, lmc: p.lmc });
    maxLid = Math.max(maxLid, base + (1 << p.lmc) - 1);
  });
  return { maxLid, byGuid: result, changed };
}

export class Guid2LidError extends IbsmFileError {
  override readonly name = 'Guid2LidError';
}

/** Where the LIDs of each master sweep are kept across restarts (guid2lid). `save` is called
 * from the sweep with the new map and returns at once: a store doing I/O does it later (the file
 * store, api/guid2lid-file.ts, writes in the background, the latest map winning) and logs and
 * counts its own failures. A `save` that throws is logged and counted by the sweep, never fatal. */
export interface Guid2LidStore {
  save(map: ReadonlyMap<bigint, LidRange>): void;
}

/** Parse OpenSM's guid2lid file: one `0x<port guid> 0x<min lid> 0x<max lid>` per line.
 *
 * Duplicates are resolved as OpenSM resolves them, each one said in `dropped` (file:line and why):
 * a GUID given twice keeps its later line (osm_db's restore: ERR 6106, the earlier value removed);
 * then, in file order, a range that overlaps one already taken is dropped and its port gets a LID
 * as if it had no entry (the LID manager's check of the file: ERR 0314 "was previously used"). */
export function parseGuid2Lid(text: string, file = 'guid2lid', dropped?: string[]): Map<bigint, LidRange> {
  const read = new Map<bigint, LidRange & { line: number }>();
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) return;
    const m = /^(0x[0-9a-fA-F]{1,16})\s+(0x[0-9a-fA-F]{1,4}|\d+)\s+(0x[0-9a-fA-F]{1,4}|\d+)$/.exec(line);
    if (!m) throw new Guid2LidError(`${file}:${i + 1}: expected "0x<port guid> 0x<min lid> 0x<max lid>", got "${raw.trim()}"`);
    const guid = BigInt(m[1]!);
    const min = Number(m[2]);
    const max = Number(m[3]);
    const n = max - min + 1;
    if (min < 1 || max > MAX_UNICAST_LID || n < 1 || (n & (n - 1)) !== 0 || n > 128 || min % n !== 0) {
      throw new Guid2LidError(`${file}:${i + 1}: LID range 0x${min.toString(16)}-0x${max.toString(16)} is not an aligned unicast range of 2^LMC LIDs`);
    }
    const before = read.get(guid);
    if (before) {
      dropped?.push(`${file}:${before.line}: port GUID ${formatGuid(guid)} is given again at line ${i + 1}: the later line is used`);
      read.delete(guid); // the later line takes the GUID's place in file order
    }
    read.set(guid, { base: min, lmc: Math.log2(n), line: i + 1 });
  });
  const byLine = [...read].sort((x, y) => x[1].line - y[1].line);
  const owner = new Map<number, { guid: bigint; line: number }>();
  const out = new Map<bigint, LidRange>();
  for (const [guid, r] of byLine) {
    let clash: { guid: bigint; line: number } | undefined;
    for (let l = r.base; l < r.base + (1 << r.lmc) && !clash; l++) clash = owner.get(l);
    if (clash) {
      dropped?.push(`${file}:${r.line}: port GUID ${formatGuid(guid)}: LID 0x${r.base.toString(16)} is already port GUID ${formatGuid(clash.guid)}'s (line ${clash.line}): this entry is not used, the port gets a free LID`);
      continue;
    }
    for (let l = r.base; l < r.base + (1 << r.lmc); l++) owner.set(l, { guid, line: r.line });
    out.set(guid, { base: r.base, lmc: r.lmc });
  }
  return out;
}


export function formatGuid2Lid(map: ReadonlyMap<bigint, LidRange>): string {
  const hex4 = (n: number): string => '0x' + n.toString(16).padStart(4, '0');
  return [...map]
    .sort((a, b) => a[1].base - b[1].base)
    .map(([g, r]) => `${formatGuid(g)} ${hex4(r.base)} ${hex4(r.base + (1 << r.lmc) - 1)}\n`)
    .join('');
}
