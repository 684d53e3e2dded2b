/** Typed errors of the wire layer. Decoders of untrusted bytes throw only DecodeError. */
import { IbsmError } from '../util/errors.js';

export class DecodeError extends IbsmError {
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

export class EncodeError extends IbsmError {
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
export class LayoutError extends IbsmError {
  override readonly name = 'LayoutError';
  constructor(
    readonly structure: string,
    readonly detail: string,
  ) {
    super(`layout ${structure}: ${detail}`);
  }
}

/** A component name a layout does not have (`PathRecord.mask('dgid')`: the names are the layout's
 * field paths, `layout.components` lists them). */
export class ComponentMaskError extends IbsmError {
  override readonly name = 'ComponentMaskError';
  constructor(
    readonly structure: string,
    readonly component: string,
  ) {
    super(`layout ${structure} has no component ${component}`);
  }
}
