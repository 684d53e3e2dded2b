/** Torus and mesh generators (model/generators.ts): `torus:4x4x4`, `mesh:3x3`. */
import type { Fabric } from '../fabric.js';
import { FabricBuilder, checkRadix, hostName, type GeneratorArgs } from './builder.js';

export function grid(a: GeneratorArgs, wrap: boolean): Fabric {
  const dimsText = a.positional ?? a.values.get('dims');
  if (!dimsText) a.fail('missing the dimensions, e.g. 4x4x4');
  if (!/^\d+(x\d+)*$/.test(dimsText)) a.fail(`dimensions "${dimsText}": expected sizes joined by "x", e.g. 4x4 or 4x4x4`);
  const dims = dimsText.split('x').map((d) => parseInt(d, 10));
  if (dims.some((d) => d < 1)) a.fail(`dimensions "${dimsText}": every size must be at least 1`);
  const hosts = a.int('hosts', 1, 0);
  const count = dims.reduce((x, y) => x * y, 1);
  if (count > 1_000_000) a.fail(`${count} switches is too many`);
  const np = hosts + 2 * dims.length;
  checkRadix(a, 'a switch', np);
  const b = new FabricBuilder();
  const coord = (i: number): number[] => {
    const c: number[] = [];
    for (const d of dims) {
      c.push(i % d);
      i = Math.floor(i / d);
    }
    return c;
  };
  const sw = Array.from({ length: count }, (_, i) => b.addSwitch(`sw-${coord(i).join('-')}`, a.has('radix') ? a.int('radix') : np));
  let stride = 1;
  dims.forEach((d, k) => {
    for (let i = 0; i < count; i++) {
      const c = Math.floor(i / stride) % d;
      if (c + 1 < d || (wrap && d > 1)) {
        const j = c + 1 < d ? i + stride : i - c * stride;
        b.link(sw[i]!, hosts + 2 * k + 1, sw[j]!, hosts + 2 * k + 2);
      }
    }
    stride *= d;
  });
  let n = 0;
  for (const s of sw) for (let h = 0; h < hosts; h++) b.link(b.addCa(hostName(n++)), 1, s, h + 1);
  return b.build();
}
