/** The PortInfo a sweep keeps for every port (`DiscoveredNode.portInfo`), compact: the attribute's
 * 64 wire bytes in a shared arena, read through the view generated from the one PortInfo field
 * table (wire/view.ts), instead of a decoded object of ~50 properties, which on a large fabric
 * held a good part of the JS heap (scripts/bench/README.md, "Figures behind source comments"); the kept form is a view and its 64-byte window plus 64
 * bytes in the arena per port.
 *
 * A kept PortInfo is a `PortInfo` to every reader (each field is a property; assigning one writes
 * its bits). What copies own properties (object spread, `Object.assign`) must go through
 * `portInfoValue`, which gives the decoded value. */
import { PortInfo } from '../wire/sma.js';
import { DecodeError } from '../wire/errors.js';
import { defineView } from '../wire/view.js';

const PortInfoView = defineView(PortInfo);
const SIZE = PortInfo.byteLength;
/** PortInfos per arena chunk (16 KB): a chunk lives while any of its PortInfos does, so chunks are
 * kept small; a heavy sweep fills them in a row. */
const PER_CHUNK = 256;

let chunk = new Uint8Array(0);
let used = PER_CHUNK;

/** Keep the PortInfo an SMA answered (the SMP data area, or at least its first 64 bytes): a copy of
 * its bytes, read through a view. Throws DecodeError when `data` is shorter than a PortInfo (as
 * `PortInfo.decode` does). */
export function keepPortInfo(data: Uint8Array): PortInfo {
  if (data.length < SIZE) throw new DecodeError(PortInfo.name, '', 0, `needs ${SIZE} bytes, ${data.length} available`);
  if (used === PER_CHUNK) {
    chunk = new Uint8Array(SIZE * PER_CHUNK);
    used = 0;
  }
  const at = used++ * SIZE;
  const bytes = chunk.subarray(at, at + SIZE);
  bytes.set(data.length === SIZE ? data : data.subarray(0, SIZE));
  // A view of its own 64 bytes: two kept PortInfos compare equal (toEqual, structuredClone) by
  // their bytes, not by the whole chunk.
  return PortInfoView.over(bytes, 0);
}

/** The PortInfo an SMA answered, kept over `pi` when `pi` is a kept PortInfo: its 64 bytes written
 * with the answer's (the same object, no new arena slot), else as `keepPortInfo`. Only for a
 * PortInfo nothing but its sweep's view holds: whoever kept a reference to `pi` reads the answer.
 * A heavy sweep's Sets acknowledge ~2 PortInfos per port; each kept anew left its old slot in a
 * chunk that lives on (10k nodes: 3.4 MB more arena, issue #32). */
export function rekeepPortInfo(pi: PortInfo | undefined, data: Uint8Array): PortInfo {
  const k = pi && keptPortInfoBytes(pi);
  if (!k || data.length < SIZE) return keepPortInfo(data);
  k.buf.set(data.length === SIZE ? data : data.subarray(0, SIZE), k.offset);
  return pi!;
}

/** A kept PortInfo's bytes (its view's window: `buf` at `offset`); undefined for a plain decoded
 * value. */
export function keptPortInfoBytes(pi: PortInfo): { buf: Uint8Array; offset: number } | undefined {
  const v = pi as Partial<{ decode(): PortInfo; buf: Uint8Array; offset: number }>;
  return typeof v.decode === 'function' && v.buf instanceof Uint8Array && typeof v.offset === 'number' ? { buf: v.buf, offset: v.offset } : undefined;
}

/** `pi` as a plain decoded value (own properties: what a spread copies); a plain value is returned
 * as it is. */
export function portInfoValue(pi: PortInfo): PortInfo {
  const k = keptPortInfoBytes(pi);
  return k ? PortInfo.decode(k.buf, k.offset) : pi;
}
