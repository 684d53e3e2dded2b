/**
 * The field table vocabulary of the layout engine (layout.ts): the field kinds, the constructors
 * the layouts are written with, and the Layout interface they compile to.
 *
 * Bit numbering follows the IBA spec: bit 0 is the most significant bit of byte 0.
 */
import { LayoutError } from './errors.js';
export type Radix = 'dec' | 'hex';

interface FieldCommon {
  /** Big-endian bit offset from the start of the enclosing structure. */
  readonly bit: number;
  /** Width in bits. */
  readonly width: number;
  /** Label in dumps (the smpquery/saquery name); defaults to the field name. */
  readonly label?: string;
  /** Number of SA component-mask bits this field takes (default 1; 0: none of its own, it is
   * part of the component of the field before it). */
  readonly cm?: number;
}

export interface UintField extends FieldCommon {
  readonly kind: 'uint';
  readonly radix?: Radix;
  /** Symbolic names for values, shown by dump. */
  readonly names?: Readonly<Record<number, string>>;
}
export interface U64Field extends FieldCommon {
  readonly kind: 'u64';
}
export interface GidField extends FieldCommon {
  readonly kind: 'gid';
}
export interface BytesField extends FieldCommon {
  readonly kind: 'bytes';
}
export interface StringField extends FieldCommon {
  readonly kind: 'string';
}
export interface ReservedField extends FieldCommon {
  readonly kind: 'reserved';
}
export interface ArrayField<E extends ElemField = ElemField> extends FieldCommon {
  readonly kind: 'array';
  readonly elem: E;
  readonly count: number;
  /** Distance in bits between consecutive elements. */
  readonly stride: number;
}
export interface StructField<L extends AnyLayout = AnyLayout> extends FieldCommon {
  readonly kind: 'struct';
  readonly layout: L;
}

export type ElemField = UintField | U64Field | GidField | StructField;
export type FieldSpec = UintField | U64Field | GidField | BytesField | StringField | ReservedField | ArrayField | StructField;
export type FieldTable = Readonly<Record<string, FieldSpec>>;

export type FieldValue<F> = F extends UintField
  ? number
  : F extends U64Field
    ? bigint
    : F extends GidField
      ? bigint
      : F extends BytesField
        ? Uint8Array
        : F extends StringField
          ? string
          : F extends ArrayField<infer E>
            ? FieldValue<E>[]
            : F extends StructField<infer L>
              ? LayoutValue<L>
              : never;

export type ValueOf<T extends FieldTable> = {
  -readonly [K in keyof T as T[K] extends ReservedField ? never : K]: FieldValue<T[K]>;
};
export type DeepPartial<V> = V extends Uint8Array | bigint | number | string
  ? V
  : V extends (infer E)[]
    ? DeepPartial<E>[]
    : { [K in keyof V]?: DeepPartial<V[K]> };

/** One SA component: a bit range of the encoded record. */
export interface Component {
  readonly index: number;
  /** Dotted path of the field, e.g. "portInfo.lid". */
  readonly path: string;
  readonly bit: number;
  readonly width: number;
}

export interface Layout<V> {
  readonly name: string;
  readonly byteLength: number;
  readonly fields: FieldTable;
  /** Decode `byteLength` bytes at `offset`. Throws only DecodeError. */
  decode(buf: Uint8Array, offset?: number): V;
  /** Encode into `buf` at `offset` (a new zeroed buffer when none is given). Every byte of the
   * structure is written (reserved bits as zero). Throws EncodeError for out-of-range values. */
  encode(value: DeepPartial<V>, buf?: Uint8Array, offset?: number): Uint8Array;
  /** The all-zero value. */
  zero(): V;
  /** smpquery-style dump, one "Label:.....value" line per field. */
  dump(value: V, indent?: string): string;
  /** Flattened SA components in component-mask bit order. */
  readonly components: readonly Component[];
  /** Component-mask bits of the named fields (dotted paths for embedded structures). */
  mask(...paths: string[]): bigint;
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyLayout = Layout<any>;
export type LayoutValue<L> = L extends Layout<infer V> ? V : never;
/** The layout of a field table, the table's own type kept (views are generated from it). */
export type TableLayout<T extends FieldTable> = Omit<Layout<ValueOf<T>>, 'fields'> & { readonly fields: T };

// ---------- field builders ----------
type Opts<F> = Omit<F, 'kind' | 'bit' | 'width'>;
type CommonOpts = Pick<FieldCommon, 'label' | 'cm'>;

export function uint(bit: number, width: number, opts: Opts<UintField> = {}): UintField {
  if (width < 1 || width > 32) throw new LayoutError(`uint field at bit ${bit}`, `uint width ${width} out of 1..32`);
  return { kind: 'uint', bit, width, ...opts };
}
export function hex(bit: number, width: number, opts: Opts<UintField> = {}): UintField {
  return uint(bit, width, { radix: 'hex', ...opts });
}
export function u64(bit: number, width = 64, opts: Opts<U64Field> = {}): U64Field {
  if (width < 1 || width > 64) throw new LayoutError(`u64 field at bit ${bit}`, `u64 width ${width} out of 1..64`);
  return { kind: 'u64', bit, width, ...opts };
}
export function gid(bit: number, opts: Opts<GidField> = {}): GidField {
  return { kind: 'gid', bit, width: 128, ...opts };
}
export function bytes(bit: number, byteCount: number, opts: Opts<BytesField> = {}): BytesField {
  if (bit % 8) throw new LayoutError(`bytes field at bit ${bit}`, 'bytes fields must be byte aligned');
  return { kind: 'bytes', bit, width: byteCount * 8, ...opts };
}
export function str(bit: number, byteCount: number, opts: Opts<StringField> = {}): StringField {
  if (bit % 8) throw new LayoutError(`string field at bit ${bit}`, 'string fields must be byte aligned');
  return { kind: 'string', bit, width: byteCount * 8, ...opts };
}
export function reserved(bit: number, width: number, opts: Opts<ReservedField> = {}): ReservedField {
  return { kind: 'reserved', bit, width, ...opts };
}
/** `count` elements; `elem.bit` is the first element's offset, `stride` bits apart (default elem width). */
export function array<E extends ElemField>(elem: E, count: number, stride: number = elem.width, opts: CommonOpts = {}): ArrayField<E> {
  return { kind: 'array', bit: elem.bit, width: stride * (count - 1) + elem.width, elem, count, stride, ...opts };
}
export function struct<L extends AnyLayout>(bit: number, layout: L, opts: CommonOpts = {}): StructField<L> {
  if (bit % 8) throw new LayoutError(`struct field at bit ${bit}`, 'struct fields must be byte aligned');
  return { kind: 'struct', bit, width: layout.byteLength * 8, layout, ...opts };
}
