/** Typed errors of the wire layer. Decoders of untrusted bytes throw only DecodeError. */

export class DecodeError extends Error {
  override readonly name = 'DecodeError';
  constructor(
    /** The structure being decoded, e.g. "PortInfo". */
    readonly structure: string,
    /** The field that could not be decoded ("" for the structure as a whole). */
    readonly field: string,
    /** Byte offset (from the start of the buffer handed to the decoder) where the problem is. */
    readonly offset: number,
    readonly detail: string,
  ) {
    super(`cannot decode ${structure}${field ? '.' + field : ''} at byte ${offset}: ${detail}`);
  }
}

export class EncodeError extends Error {
  override readonly name = 'EncodeError';
  constructor(
    readonly structure: string,
    readonly field: string,
    readonly detail: string,
  ) {
    super(`cannot encode ${structure}${field ? '.' + field : ''}: ${detail}`);
  }
}

/** A layout table that does not describe its structure (a field out of bounds, a gap, an overlap):
 * a programming error, thrown by defineLayout when the layout is defined. */
export class LayoutError extends Error {
  override readonly name = 'LayoutError';
  constructor(
    readonly structure: string,
    readonly detail: string,
  ) {
    super(`layout ${structure}: ${detail}`);
  }
}
