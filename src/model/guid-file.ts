/** GUID files (OpenSM's root_guid_file, cn_guid_file, io_guid_file): one GUID per line, `#`
 * comments. Pure. */

import { IbsmFileError } from '../util/errors.js';
import { parseHexGuid } from '../util/guid.js';

/** A GUID file that does not parse: the message names the file and line. */
export class GuidFileError extends IbsmFileError {
  override readonly name = 'GuidFileError';
}

export function parseGuidFile(text: string, file: string): bigint[] {
  const out: bigint[] = [];
  text.split('\n').forEach((l, i) => {
    const t = l.replace(/#.*/, '').trim();
    if (!t) return;
    const g = parseHexGuid(t);
    if (g === undefined) throw new GuidFileError(`${file}:${i + 1}: "${t}" is not a GUID (hex, e.g. 0x0002c90000000001)`);
    out.push(g);
  });
  return out;
}
