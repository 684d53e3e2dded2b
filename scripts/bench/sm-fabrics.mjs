// The fabrics the SM benches run on ibsim (sm-vs-opensm.mjs, rss-timeline.mjs), by name, and one
// made ready for ibsim: a generator spec written as ibnetdiscover text, the host the SM attaches
// at, ibsim's limits raised to fit.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ibsimLimits } from './ibsim-limits.mjs';

const EXAMPLES = '/usr/share/doc/ibsim-utils/net-examples';

/** The fabrics by name; `large` is the spec given (sm-vs-opensm's --large). ibsim's default limits
 * (2048 nodes, 256 switches, 13312 ports) are raised for every fabric. */
export function benchFabrics(large = 'gen:fattree3:radix=24') {
  return {
    small: { label: `small: ibsim example net.2sw2path4hca`, source: path.join(EXAMPLES, 'net.2sw2path4hca') },
    400: { label: '~400 hosts: gen:fattree3:radix=12', source: 'gen:fattree3:radix=12' },
    large: { label: `large: ${large}`, source: large },
    'ft3-large': { label: 'ft3-large: gen:fattree3:pods=8,leaves=16,spines=8,cores=32,hosts=12', source: 'gen:fattree3:pods=8,leaves=16,spines=8,cores=32,hosts=12' },
    torus: { label: 'torus 6x6x6: gen:torus:6x6x6,hosts=4', source: 'gen:torus:6x6x6,hosts=4' },
    rrg: { label: 'rrg-200: gen:random:switches=200,degree=8,hosts=8,seed=1', source: 'gen:random:switches=200,degree=8,hosts=8,seed=1' },
    // The fabrics of issue #32 (ibsim's limits raised): 5,536 and 10,242 nodes.
    '5k': { label: '5k: gen:fattree3:pods=16,leaves=16,spines=8,cores=32,hosts=20', source: 'gen:fattree3:pods=16,leaves=16,spines=8,cores=32,hosts=20' },
    '10k': { label: '10k: gen:fattree3:pods=18,leaves=18,spines=9,cores=36,hosts=30', source: 'gen:fattree3:pods=18,leaves=18,spines=9,cores=36,hosts=30' },
    '20k': { label: '20k: gen:fattree3:pods=24,leaves=24,spines=12,cores=48,hosts=36', source: 'gen:fattree3:pods=24,leaves=24,spines=12,cores=48,hosts=36' },
    // 60 hosts and 4 switches: LIDs 1..64, the top LID a multiple of 64 (ibroute's skipped block).
    lid64: { label: 'lid64: gen:fattree2:leaves=2,spines=2,hosts=30', source: 'gen:fattree2:leaves=2,spines=2,hosts=30' },
  };
}

/** Fabric `key` of `fabrics` ready for ibsim: a generated one written to `dir` as ibnetdiscover
 * text. `mods`: dist's model/load.js and model/ibnetdiscover.js (loadFabricSpec,
 * formatIbnetdiscover). */
export function prepareFabric(fabrics, key, dir, mods) {
  const f = fabrics[key];
  if (!f) throw new Error(`unknown fabric "${key}" (${Object.keys(fabrics).join(', ')})`);
  let netFile = f.source;
  const fabric = mods.loadFabricSpec(f.source);
  if (f.source.startsWith('gen:')) {
    netFile = path.join(dir, `${key}.net`);
    writeFileSync(netFile, mods.formatIbnetdiscover(fabric, { timestamp: 'sm-vs-opensm' }));
  }
  const sw = fabric.nodes.filter((n) => n.type === 2);
  const hosts = fabric.nodes.filter((n) => n.type !== 2);
  // SMs attach at a host (as on a real cluster): the first CA of the topology file.
  const text = readFileSync(netFile, 'utf8');
  const simHost = /^(?:Ca|Hca)\s+\d+\s+"([^"]+)"/m.exec(text)?.[1];
  const limits = ibsimLimits(fabric);
  return { ...f, key, netFile, simHost, limits, topo: fabric, nodes: fabric.nodes.length, switches: sw.length, hosts: hosts.length };
}
