/** The random regular graph generator (model/generators.ts): `random:switches=16,degree=4`. */
import type { Fabric } from '../fabric.js';
import { FabricBuilder, checkRadix, hostName, type GeneratorArgs } from './builder.js';
import { Rng } from '../../util/rng.js';

export function randomRegular(a: GeneratorArgs): Fabric {
  const n = a.int('switches', undefined, 2);
  const degree = a.int('degree', undefined, 1);
  const hosts = a.int('hosts', 1, 0);
  const seed = a.has('seed') ? a.int('seed') : (a.seed ?? 1);
  if (degree >= n) a.fail(`degree=${degree} must be less than switches=${n}`);
  if ((n * degree) % 2) a.fail(`switches × degree (${n}×${degree}) must be even`);
  if (degree === 1 && n > 2) a.fail('degree=1 cannot connect more than 2 switches');
  const np = hosts + degree;
  checkRadix(a, 'a switch', np);
  const rng = new Rng(seed);
  const rnd = (): number => rng.next();
  const pick = (k: number): number => rng.int(k);
  let edges: Array<[number, number]> = [];
  const key = (x: number, y: number): number => (x < y ? x * n + y : y * n + x);
  if (degree === 2) {
    // A connected 2-regular graph is one cycle: a random cyclic order.
    const order = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = pick(i + 1);
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    for (let i = 0; i < n; i++) edges.push([order[i]!, order[(i + 1) % n]!]);
  } else {
    // Start from a connected circulant graph, then randomise it with degree-preserving edge swaps.
    for (let i = 0; i < n; i++) for (let o = 1; o <= Math.floor(degree / 2); o++) edges.push([i, (i + o) % n]);
    if (degree % 2) for (let i = 0; i < n / 2; i++) edges.push([i, i + n / 2]);
    const present = new Set(edges.map(([x, y]) => key(x, y)));
    const swaps = (count: number): void => {
      for (let t = 0; t < count; t++) {
        const i = pick(edges.length);
        const j = pick(edges.length);
        if (i === j) continue;
        const [p, q] = edges[i]!;
        let [r, s] = edges[j]!;
        if (rnd() < 0.5) [r, s] = [s, r];
        if (p === s || r === q || present.has(key(p, s)) || present.has(key(r, q))) continue;
        present.delete(key(p, q));
        present.delete(key(r, s));
        present.add(key(p, s));
        present.add(key(r, q));
        edges[i] = [p, s];
        edges[j] = [r, q];
      }
    };
    const connected = (): boolean => {
      const adj: number[][] = Array.from({ length: n }, () => []);
      for (const [x, y] of edges) {
        adj[x]!.push(y);
        adj[y]!.push(x);
      }
      const seen = new Uint8Array(n);
      const stack = [0];
      seen[0] = 1;
      let count = 1;
      while (stack.length) {
        for (const y of adj[stack.pop()!]!) {
          if (!seen[y]) {
            seen[y] = 1;
            count++;
            stack.push(y);
          }
        }
      }
      return count === n;
    };
    swaps(10 * edges.length);
    for (let round = 0; !connected(); round++) {
      if (round === 50) a.fail(`could not make a connected random ${degree}-regular graph of ${n} switches`);
      swaps(edges.length);
    }
    edges = edges.map(([x, y]): [number, number] => (x < y ? [x, y] : [y, x])).sort((e, f) => e[0] - f[0] || e[1] - f[1]);
  }
  const b = new FabricBuilder();
  const sw = Array.from({ length: n }, (_, i) => b.addSwitch(`sw-${i}`, a.has('radix') ? a.int('radix') : np));
  const next = new Array<number>(n).fill(hosts + 1);
  for (const [x, y] of edges) b.link(sw[x]!, next[x]!++, sw[y]!, next[y]!++);
  let h = 0;
  for (const s of sw) for (let k = 0; k < hosts; k++) b.link(b.addCa(hostName(h++)), 1, s, k + 1);
  return b.build();
}
