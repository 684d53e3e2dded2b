/** The health state as it is kept across a restart (issue #33 item 2) and handed to a standby
 * (sa/sync.ts): the isolations of every source but the expected topology's (which the first
 * comparison recomputes). Pure: the text of the state file (JSON, one isolation a line), and its
 * parse; `since` is written as wall-clock time (Unix ms), since the SM's clock starts at 0 with
 * the process: `wall` converts (sm/health-phase.ts HealthStore, api/health-store-file.ts).
 *
 * An isolation read back is held whatever its source's policy says now: with the policy on, its
 * quiet time starts again (flapping: no change for QUIET_S; unresponsive: its probe answering for
 * QUIET_S); with the policy off (or manual), only `ibsm release` releases it. */
import type { Isolation, MismatchEnd } from '../model/topology-classes.js';
import { IbsmError, IbsmFileError } from '../util/errors.js';

export class HealthStateError extends IbsmFileError {
  override readonly name = 'HealthStateError';
}

/** One isolation row (the state file's, or the SA sync's from the master) that does not decode:
 * the message names the field. */
export class HealthRowError extends IbsmError {
  override readonly name = 'HealthRowError';
}

/** The isolations worth keeping (not the expected topology's). */
export const kept = <T extends Isolation>(isolated: readonly T[]): T[] => isolated.filter((i) => i.source !== 'topology');

const endJson = (e: MismatchEnd): Record<string, unknown> => ({ guid: '0x' + e.guid.toString(16).padStart(16, '0'), desc: e.desc, port: e.port, ...(e.type !== undefined ? { type: e.type } : {}) });

/** The ports an unresponsive node was last seen linked through (sm/health-unresponsive.ts Face):
 * kept with its isolation so that an SM that restarts or takes over does not probe it through
 * them in each discovery either. */
export interface Via {
  guid: bigint;
  port: number;
}

/** An isolation as kept: with the ports it is reached through, when known. */
export type KeptIsolation = Isolation & { via?: readonly Via[] };

/** One isolation as a JSON row (the file's, and a sync entry's), `since` as `sinceWall(since)`. */
export function isolationRow(i: KeptIsolation, sinceWall: (since: number) => number): string {
  const via = i.via?.length ? { via: i.via.map((v) => ({ guid: '0x' + v.guid.toString(16), port: v.port })) } : {};
  return JSON.stringify({ key: i.key, kind: i.kind, a: endJson(i.a), ...(i.b ? { b: endJson(i.b) } : {}), cls: i.cls, source: i.source, reason: i.reason, since: Math.round(sinceWall(i.since)), ...via });
}

/** The isolations without their `via`, and the `via` of each node (by GUID). */
export function splitVia(kept: readonly KeptIsolation[]): { isolated: Isolation[]; via: Map<bigint, readonly Via[]> } {
  const via = new Map<bigint, readonly Via[]>();
  const isolated = kept.map(({ via: v, ...i }) => (v?.length && via.set(i.a.guid, v), i));
  return { isolated, via };
}

/** The file's text: `sinceWall(i.since)` is the wall-clock time the isolation began. */
export function formatHealthState(isolated: readonly KeptIsolation[], sinceWall: (since: number) => number): string {
  const rows = kept(isolated).map((i) => isolationRow(i, sinceWall));
  return `{"version": 1, "isolated": [${rows.length ? '\n' + rows.join(',\n') + '\n' : ''}]}\n`;
}

function endOf(v: unknown, what: string): MismatchEnd {
  const e = v as Record<string, unknown> | undefined;
  if (!e || typeof e.guid !== 'string' || !/^0x[0-9a-f]{1,16}$/i.test(e.guid) || typeof e.port !== 'number') throw new HealthRowError(`${what}: expected {guid: "0x…", desc, port}`);
  return { guid: BigInt(e.guid), desc: typeof e.desc === 'string' ? e.desc : '', port: e.port, ...(typeof e.type === 'number' ? { type: e.type } : {}) };
}

/** Parse the file's text: the isolations with `since` in wall-clock ms. Throws HealthStateError
 * naming the file and the entry. */
export function parseHealthState(text: string, file = 'health state'): KeptIsolation[] {
  let doc: { version?: unknown; isolated?: unknown };
  try {
    doc = JSON.parse(text) as typeof doc;
  } catch (e) {
    throw new HealthStateError(`${file}: not JSON: ${(e as Error).message}`, { file });
  }
  if (doc.version !== 1 || !Array.isArray(doc.isolated)) throw new HealthStateError(`${file}: expected {"version": 1, "isolated": [...]}`, { file });
  return doc.isolated.map((v, k) => {
    try {
      return isolationOf(v);
    } catch (e) {
      throw new HealthStateError(`${file}: isolation ${k + 1}: ${(e as Error).message}`, { file });
    }
  });
}

/** An isolation from its row's value (`since` as written). Throws HealthRowError naming what is wrong. */
export function isolationOf(v: unknown): KeptIsolation {
  const r = v as Record<string, unknown>;
  if (r?.kind !== 'node' && r?.kind !== 'link') throw new HealthRowError('kind is node or link');
  if (typeof r.key !== 'string' || typeof r.source !== 'string' || typeof r.since !== 'number') throw new HealthRowError('key, source and since are needed');
  const b = r.kind === 'link' ? endOf(r.b, 'b') : undefined;
  const via = Array.isArray(r.via) ? { via: r.via.map((x, k) => endOf(x, `via ${k + 1}`)).map((e) => ({ guid: e.guid, port: e.port })) } : {};
  return { key: r.key, kind: r.kind, a: endOf(r.a, 'a'), ...(b ? { b } : {}), cls: typeof r.cls === 'string' ? r.cls : r.source, source: r.source, reason: typeof r.reason === 'string' ? r.reason : '', since: r.since, ...via };
}
