/** The dragonfly generator (model/generators.ts): `dragonfly:a=4,p=2,h=2,g=9`. */
import type { Fabric } from '../fabric.js';
import { FabricBuilder, checkRadix, hostName, type GeneratorArgs } from './builder.js';

export function dragonfly(a: GeneratorArgs): Fabric {
  const sw = a.int('a', undefined, 1);
  const p = a.int('p', undefined, 0);
  const h = a.int('h', undefined, 1);
  const g = a.int('g', sw * h + 1, 2);
  if (g > sw * h + 1) a.fail(`g=${g} groups cannot all be joined: at most a*h+1 = ${sw * h + 1}`);
  const np = p + (sw - 1) + h;
  checkRadix(a, 'a switch', np);
  const b = new FabricBuilder();
  const node = (grp: number, i: number): number => grp * sw + i;
  for (let grp = 0; grp < g; grp++) for (let i = 0; i < sw; i++) b.addSwitch(`sw-g${grp}-${i}`, a.has('radix') ? a.int('radix') : np);
  // Local: all-to-all inside a group. Port of x towards y: p + 1 + (index of y among the others).
  for (let grp = 0; grp < g; grp++) {
    for (let x = 0; x < sw; x++) {
      for (let y = x + 1; y < sw; y++) b.link(node(grp, x), p + 1 + (y - 1), node(grp, y), p + 1 + x);
    }
  }
  // Global: slot k of a group is switch floor(k/h), global port k%h. Pairs of groups are joined
  // round-robin until the slots run out (exactly one link per pair when g = a*h+1).
  const slots = sw * h;
  const used = new Array<number>(g).fill(0);
  const globalPort = (k: number): number => p + (sw - 1) + (k % h) + 1;
  for (let added = true; added; ) {
    added = false;
    for (let x = 0; x < g; x++) {
      for (let y = x + 1; y < g; y++) {
        if (used[x]! < slots && used[y]! < slots) {
          const kx = used[x]!++;
          const ky = used[y]!++;
          b.link(node(x, Math.floor(kx / h)), globalPort(kx), node(y, Math.floor(ky / h)), globalPort(ky));
          added = true;
        }
      }
    }
  }
  let n = 0;
  for (let s = 0; s < g * sw; s++) for (let k = 0; k < p; k++) b.link(b.addCa(hostName(n++)), 1, s, k + 1);
  return b.build();
}
