/** Precompiled codecs (start-up, #16): the bundle carries the generated encoders, decoders and view
 * classes one SM run uses as real functions (scripts/build-bundle.mjs), which codegen.ts's
 * generatedFactory takes instead of `new Function` only when the function's source is exactly the
 * text it generated. Checked on the tsc build in a fresh process each: the recording names what
 * a use generates; an exact function under its key is used (no `new Function`); an impostor
 * under the same key is refused (and the codec compiled as ever, bytes identical). */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');
const SMA = pathToFileURL(path.join(ROOT, 'dist/wire/sma.js')).href;

/** Run `setup` (before the wire modules load), then encode and decode a NodeInfo and view it; prints JSON. */
function probe(setup: string): { keys: string[]; texts: string[]; newFunctions: number; bytes: number[]; decoded: string; viewed: number } {
  const src = `
    let newFunctions = 0;
    const F = Function;
    globalThis.Function = new Proxy(F, { construct(t, a) { newFunctions++; return Reflect.construct(t, a); } });
    ${setup}
    const { NodeInfo } = await import(${JSON.stringify(SMA)});
    const { defineView } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'dist/wire/view.js')).href)});
    const b = NodeInfo.encode({ baseVersion: 1, classVersion: 1, nodeType: 2, numPorts: 36, nodeGuid: 0x1234n, portGuid: 0x5678n, partitionCap: 8, deviceId: 0xc738, revision: 7, localPortNum: 3, vendorId: 0x2c9 });
    const decoded = JSON.stringify(NodeInfo.decode(b), (k, x) => (typeof x === 'bigint' ? x.toString() : x));
    const viewed = defineView(NodeInfo).over(b).numPorts;
    const rec = globalThis.__ibsmCodegenRecord ?? [];
    console.log(JSON.stringify({ keys: rec.map((r) => r[0]), texts: rec.map((r) => r[1]), newFunctions, bytes: [...b], decoded, viewed }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', src], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

describe('precompiled codecs', () => {
  it('uses a precompiled factory only when its source is exactly the generated text', () => {
    const plain = probe('globalThis.__ibsmCodegenRecord = [];');
    // NodeInfo's encoder, its decoder and its view class: generated, recorded, compiled
    expect(plain.keys.length).toBe(3);
    expect(plain.newFunctions).toBe(3);
    expect(plain.viewed).toBe(36);

    const entries = plain.keys.map((k, i) => [k, plain.texts[i]!]);
    // exact functions under their keys (made by eval of the same text, as the bundle holds them)
    const exact = probe(`globalThis.__ibsmCodecs = new Map(${JSON.stringify(entries)}.map(([k, t]) => [k, (0, eval)('(' + t + ')')]));`);
    expect(exact.newFunctions).toBe(0);
    expect(exact.bytes).toEqual(plain.bytes);
    expect(exact.decoded).toBe(plain.decoded);
    expect(exact.viewed).toBe(36);

    // an impostor under each key (a different source) is not used: compiled as ever, same bytes
    const impostor = probe(`globalThis.__ibsmCodecs = new Map(${JSON.stringify(plain.keys)}.map((k) => [k, function () { return function () { throw new Error('impostor'); }; }]));`);
    expect(impostor.newFunctions).toBe(3);
    expect(impostor.bytes).toEqual(plain.bytes);
    expect(impostor.decoded).toBe(plain.decoded);
    expect(impostor.viewed).toBe(36);
  });
});
