/**
 * OpenSM's prefix-routes.conf (opensm(8), PREFIX ROUTES): each line a 64-bit prefix and the
 * 64-bit GUID of the local router port that handles it, white-space separated, hex with an
 * optional 0x, `*` for either; `#` starts a comment; first match wins; a prefix may repeat (the
 * first available router of the matching lines is used); `* *` sends every off-subnet DGID to the
 * first available router. Parsing is pure; errors name the file and line.
 */

import { IbsmFileError } from '../util/errors.js';
import { parseHexGuid } from '../util/guid.js';

/** A line of prefix-routes.conf that does not parse. */
export class PrefixRoutesError extends IbsmFileError {
  override readonly name = 'PrefixRoutesError';
}

export interface PrefixRoute {
  /** undefined: `*` (any prefix). */
  prefix?: bigint;
  /** undefined: `*` (any router). */
  guid?: bigint;
  line: number;
}

export function parsePrefixRoutes(text: string, file: string): PrefixRoute[] {
  const out: PrefixRoute[] = [];
  text.split('\n').forEach((raw, i) => {
    const t = raw.replace(/#.*/, '').trim();
    if (!t) return;
    const words = t.split(/\s+/);
    if (words.length !== 2) throw new PrefixRoutesError(`${file}:${i + 1}: expected "<prefix> <router port GUID>" (hex or *), got "${t}"`);
    const val = (w: string, what: string): bigint | undefined => {
      if (w === '*') return undefined;
      const v = parseHexGuid(w);
      if (v === undefined) throw new PrefixRoutesError(`${file}:${i + 1}: ${what} "${w}" is not a 64-bit hex number or *`);
      return v;
    };
    const prefix = val(words[0]!, 'prefix');
    const guid = val(words[1]!, 'GUID');
    out.push({ ...(prefix !== undefined ? { prefix } : {}), ...(guid !== undefined ? { guid } : {}), line: i + 1 });
  });
  return out;
}

/** The router port for an off-subnet prefix: the first matching line whose router is available
 * (`available`: router port GUIDs of this subnet, in GUID order); undefined: the query fails. */
export function matchPrefixRoute(routes: readonly PrefixRoute[], prefix: bigint, available: readonly bigint[]): bigint | undefined {
  for (const r of routes) {
    if (r.prefix !== undefined && r.prefix !== prefix) continue;
    if (r.guid === undefined) {
      if (available.length) return available[0];
      continue;
    }
    if (available.includes(r.guid)) return r.guid;
  }
  return undefined;
}
