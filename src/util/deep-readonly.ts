/** A value's type with every property, array, map and set below it read-only: what the API hands
 * out of the SM's own state (`IbsmSm.snapshot`, event payloads) so that a program using the package
 * cannot change the SM's view by mistake (`snap.fabric.nodes[0].desc = 'x'` and `.push(…)` do not
 * compile). Functions and primitives are kept as they are; typed arrays (the LFT blocks) keep their
 * methods with their elements read-only. Types only: nothing is frozen at run time. */
export type DeepReadonly<T> = T extends ((...args: never[]) => unknown) | string | number | bigint | boolean | symbol | null | undefined
  ? T
  : T extends ReadonlyMap<infer K, infer V>
    ? ReadonlyMap<DeepReadonly<K>, DeepReadonly<V>>
    : T extends ReadonlySet<infer V>
      ? ReadonlySet<DeepReadonly<V>>
      : T extends ArrayBufferView
        ? Readonly<T>
        : { readonly [K in keyof T]: DeepReadonly<T[K]> }; // arrays and tuples become readonly ones
