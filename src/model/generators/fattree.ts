/** Fat-tree generators (model/generators.ts): two levels (`fattree2`) and three (`fattree3`). */
import type { Fabric } from '../fabric.js';
import { FabricBuilder, checkRadix, hostName, ports, type GeneratorArgs } from './builder.js';

/** `radix=` (even, at least 2) and half of it, or both undefined when not given. */
function evenRadix(a: GeneratorArgs): { radix: number | undefined; half: number | undefined } {
  const radix = a.has('radix') ? a.int('radix', undefined, 2) : undefined;
  if (radix !== undefined && radix % 2) a.fail(`radix=${radix} must be even`);
  const half = radix !== undefined ? radix / 2 : undefined;
  return { radix, half };
}

export function fatTree2(a: GeneratorArgs): Fabric {
  const { radix, half } = evenRadix(a);
  const leaves = a.int('leaves', radix, 1);
  const spines = a.int('spines', half, 1);
  const hosts = a.int('hosts', half, 0);
  const links = a.int('links', 1, 1);
  const leafPorts = hosts + spines * links;
  const spinePorts = leaves * links;
  checkRadix(a, 'a leaf', leafPorts);
  checkRadix(a, 'a spine', spinePorts);
  const np = radix ?? ports(leafPorts, spinePorts);
  const b = new FabricBuilder();
  const leaf = Array.from({ length: leaves }, (_, i) => b.addSwitch(`sw-l1-${i}`, np));
  const spine = Array.from({ length: spines }, (_, i) => b.addSwitch(`sw-l2-${i}`, np));
  for (let i = 0; i < leaves; i++) {
    for (let j = 0; j < spines; j++) {
      for (let k = 0; k < links; k++) b.link(leaf[i]!, hosts + j * links + k + 1, spine[j]!, i * links + k + 1);
    }
  }
  let n = 0;
  for (let i = 0; i < leaves; i++) for (let h = 0; h < hosts; h++) b.link(b.addCa(hostName(n++)), 1, leaf[i]!, h + 1);
  return b.build();
}

export function fatTree3(a: GeneratorArgs): Fabric {
  const { radix, half } = evenRadix(a);
  const pods = a.int('pods', radix, 1);
  const leaves = a.int('leaves', half, 1);
  const spines = a.int('spines', half, 1);
  const cores = a.int('cores', half !== undefined ? half * half : undefined, 1);
  const hosts = a.int('hosts', half, 0);
  if (cores % spines) a.fail(`cores=${cores} must be a multiple of spines=${spines} (each spine of a pod reaches its own group of cores)`);
  const group = cores / spines;
  const leafPorts = hosts + spines;
  const spinePorts = leaves + group;
  const corePorts = pods;
  checkRadix(a, 'a leaf', leafPorts);
  checkRadix(a, 'a spine', spinePorts);
  checkRadix(a, 'a core switch', corePorts);
  const np = radix ?? ports(leafPorts, spinePorts, corePorts);
  const b = new FabricBuilder();
  const leaf: number[] = [];
  const spine: number[] = [];
  for (let p = 0; p < pods; p++) for (let i = 0; i < leaves; i++) leaf.push(b.addSwitch(`sw-l1-${p * leaves + i}`, np));
  for (let p = 0; p < pods; p++) for (let j = 0; j < spines; j++) spine.push(b.addSwitch(`sw-l2-${p * spines + j}`, np));
  const core = Array.from({ length: cores }, (_, c) => b.addSwitch(`sw-l3-${c}`, np));
  for (let p = 0; p < pods; p++) {
    for (let i = 0; i < leaves; i++) {
      for (let j = 0; j < spines; j++) b.link(leaf[p * leaves + i]!, hosts + j + 1, spine[p * spines + j]!, i + 1);
    }
    for (let j = 0; j < spines; j++) {
      for (let k = 0; k < group; k++) b.link(spine[p * spines + j]!, leaves + k + 1, core[j * group + k]!, p + 1);
    }
  }
  let n = 0;
  for (const l of leaf) for (let h = 0; h < hosts; h++) b.link(b.addCa(hostName(n++)), 1, l, h + 1);
  return b.build();
}
