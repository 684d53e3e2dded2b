#!/usr/bin/env node
// SHA-1 of every LFT (and the SLs: nue's per destination LID, dfsssp's and torus's per source and destination; torus's per-port SL2VL; the VL count and the notes)
// per (fabric, engine), so a change meant to keep the tables (a speed-up) can be checked against a
// copy of the build before it. Prints one "case engine[/maxVls] sha1" line each; asserts nothing.
//
//   node scripts/bench/routing-hash.mjs [ROOT] [CASE_REGEX] > after.txt   (ROOT/dist is loaded;
//   default: this checkout; ENG=REGEX limits the engines), then diff with the same run on a copy.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
const [rootArg, filter] = process.argv.slice(2);
const root = rootArg || path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = (p) => pathToFileURL(path.join(root, 'dist', p)).href;
const { loadFabricSpec } = await import(dist('model/load.js'));
const { assignLids } = await import(dist('sm/lids.js'));
const { getEngine } = await import(dist('routing/index.js'));
const isSw = (n) => n.type === 2;
function unlink(f, desc, nth = 0) {
  const i = f.nodes.findIndex((n) => n.desc === desc);
  const ports = f.nodes[i].ports.filter((p) => p?.peer && isSw(f.nodes[p.peer.node]));
  const p = ports[nth];
  delete f.nodes[p.peer.node].ports[p.peer.port].peer;
  delete p.peer;
}
function removeSwitch(f, desc) {
  const i = f.nodes.findIndex((n) => n.desc === desc);
  for (const p of f.nodes[i].ports) if (p?.peer) delete f.nodes[p.peer.node].ports[p.peer.port].peer;
  f.nodes.splice(i, 1);
  for (const n of f.nodes) for (const p of n.ports) if (p?.peer && p.peer.node > i) p.peer.node--;
}
const T = ['ftree', 'nue', 'updn', 'minhop'];
const cases = [
  ['10k', 'gen:fattree3:radix=36', 0, null, T],
  ['50k', 'gen:fattree3:pods=48,leaves=24,spines=24,cores=576,hosts=40', 0, null, T],
  ['ft2', 'gen:fattree2:radix=8', 0, null, T],
  ['ft2-links2', 'gen:fattree2:leaves=4,spines=2,hosts=3,links=2', 0, null, T],
  ['ft2-over', 'gen:fattree2:leaves=6,spines=3,hosts=9', 0, null, T],
  ['ft3-over', 'gen:fattree3:pods=4,leaves=4,spines=2,cores=2,hosts=6', 0, null, T],
  ['ft3-large', 'gen:fattree3:pods=8,leaves=16,spines=8,cores=32,hosts=12', 0, null, T],
  ['ft3-lmc1', 'gen:fattree3:radix=8', 1, null, T],
  ['ft2-lmc2', 'gen:fattree2:radix=8', 2, null, T],
  ['ft3-r12-lmc1', 'gen:fattree3:radix=12', 1, null, T],
  ['deg-leaflink', 'gen:fattree3:radix=8', 0, (f) => unlink(f, 'sw-l1-0'), T],
  ['deg-spinecore', 'gen:fattree3:radix=8', 0, (f) => unlink(f, 'sw-l2-3', 2), T],
  ['deg-spine', 'gen:fattree3:radix=8', 0, (f) => removeSwitch(f, 'sw-l2-1'), T],
  ['deg-core-large', 'gen:fattree3:pods=8,leaves=16,spines=8,cores=32,hosts=12', 0, (f) => removeSwitch(f, 'sw-l3-5'), T],
  ['deg-multi', 'gen:fattree2:radix=8', 0, (f) => (unlink(f, 'sw-l1-0'), unlink(f, 'sw-l1-3', 1), removeSwitch(f, 'sw-l2-2')), T],
  ['torus444', 'gen:torus:4x4x4,hosts=2', 0, null, ['nue', 'updn', 'minhop', 'dfsssp', 'torus']],
  ['torus666', 'gen:torus:6x6x6,hosts=4', 0, null, ['nue', 'updn', 'dfsssp', 'torus']],
  ['torus-lmc1', 'gen:torus:4x4x4,hosts=2', 1, null, ['nue', 'updn', 'dfsssp', 'torus']],
  ['mesh', 'gen:mesh:5x5,hosts=2', 0, null, ['nue', 'updn', 'dfsssp', 'torus']],
  ['rrg200', 'gen:random:switches=200,degree=8,hosts=8,seed=3', 0, null, ['nue', 'updn', 'minhop', 'dfsssp']],
  ['rrg-lmc1', 'gen:random:switches=40,degree=5,hosts=3,seed=7', 1, null, ['nue', 'updn', 'dfsssp']],
  ['ft3-io', 'gen:fattree3:radix=8', 0, null, ['ftree'], (f) => ({ ioGuids: f.nodes.filter((n) => n.type !== 2).filter((_, i) => i % 3 === 1).map((n) => n.ports[1].guid) })],
  ['10k-io', 'gen:fattree3:radix=36', 0, null, ['ftree'], (f) => ({ ioGuids: f.nodes.filter((n) => n.type !== 2).filter((_, i) => i % 7 === 1).map((n) => n.ports[1].guid) })],
  ['ft3-roots', 'gen:fattree3:radix=8', 0, null, ['ftree', 'updn', 'nue'], (f) => ({ roots: f.nodes.filter((n) => n.type === 2 && /l3/.test(n.desc)).map((n) => n.guid) })],
  ['ft3-roots-spines', 'gen:fattree3:radix=8', 0, null, ['ftree', 'updn', 'nue'], (f) => ({ roots: f.nodes.filter((n) => n.type === 2 && /l2-[0-3]$/.test(n.desc)).map((n) => n.guid) })],
  ['10k-lmc1', 'gen:fattree3:radix=36', 1, null, ['ftree']],
  ['ft2-nohost-leaf', 'gen:fattree2:radix=8', 0, (f) => { const i = f.nodes.findIndex((n) => n.type !== 2); const n = f.nodes[i]; const p = n.ports[1]; delete f.nodes[p.peer.node].ports[p.peer.port].peer; delete p.peer; }, ['ftree', 'updn', 'nue']],
  ['ft2-emptyleaf', 'gen:fattree2:radix=8', 0, (f) => { const sw = f.nodes.find((n) => n.desc === 'sw-l1-0'); for (const p of sw.ports) if (p?.peer && f.nodes[p.peer.node].type !== 2) { delete f.nodes[p.peer.node].ports[p.peer.port].peer; delete p.peer; } }, ['ftree', 'updn', 'nue']],
  ['ft2-emptyleaf-roots', 'gen:fattree2:radix=8', 0, (f) => { const sw = f.nodes.find((n) => n.desc === 'sw-l1-0'); for (const p of sw.ports) if (p?.peer && f.nodes[p.peer.node].type !== 2) { delete f.nodes[p.peer.node].ports[p.peer.port].peer; delete p.peer; } }, ['ftree'], (f) => ({ roots: f.nodes.filter((n) => n.type === 2 && /l2/.test(n.desc)).map((n) => n.guid) })],
  ['dragonfly', 'gen:dragonfly:a=4,p=2,h=2', 0, null, ['nue', 'updn', 'dfsssp']],
  ['ft3-large-dfsssp', 'gen:fattree3:pods=8,leaves=16,spines=8,cores=32,hosts=12', 0, null, ['dfsssp']],
  ['deg-multi-dfsssp', 'gen:fattree2:radix=8', 0, (f) => (unlink(f, 'sw-l1-0'), unlink(f, 'sw-l1-3', 1), removeSwitch(f, 'sw-l2-2')), ['dfsssp']],
];
for (const [name, spec, lmc, edit, engines, extra] of cases) {
  if (filter && !new RegExp(filter).test(name)) continue;
  for (const eng of engines) {
    if (process.env.ENG && !new RegExp(process.env.ENG).test(eng)) continue;
    for (const maxVls of eng === 'nue' || eng === 'dfsssp' || eng === 'torus' ? [8, 2, 1] : [undefined]) {
      if (maxVls !== undefined && maxVls !== 8 && /^(10k|50k)$/.test(name)) continue;
      const f = loadFabricSpec(spec);
      edit?.(f);
      assignLids(f, { lmc });
      let r;
      try {
        r = getEngine(eng).route(f, { lmc, ...(maxVls ? { maxVls } : {}), ...(extra ? extra(f) : {}) });
      } catch (e) {
        console.log(`${name} ${eng}${maxVls ? '/' + maxVls : ''} ${e.name}: ${e.message.slice(0, 60)}`);
        continue;
      }
      const h = createHash('sha1');
      for (const k of [...r.lfts.keys()].sort((a, b) => a - b)) {
        h.update(String(k));
        h.update(r.lfts.get(k));
      }
      if (r.sl) {
        // by source too where the SL depends on it (dfsssp: per source switch), on fabrics small enough
        const sources = r.slBySourceSwitch && !r.slByDestination && r.maxLid <= 2048 ? r.maxLid + 1 : 1;
        const sl = new Uint8Array((r.maxLid + 1) * sources);
        for (let s = 0; s < sources; s++) for (let d = 0; d <= r.maxLid; d++) sl[s * (r.maxLid + 1) + d] = r.sl(s, d);
        h.update('sl');
        h.update(sl);
      }
      // torus: the per-port SL2VL tables of its datelines
      for (const [n, t] of [...(r.sl2vlByPorts ?? [])].sort((a, b) => a[0] - b[0])) {
        h.update(`sl2vl ${n} ${t.stride}`);
        h.update(t.vl);
      }
      h.update(JSON.stringify({ v: r.vlsUsed, df: r.deadlockFree, notes: r.notes }));
      console.log(`${name} ${eng}${maxVls ? '/' + maxVls : ''} ${h.digest('hex')}`);
    }
  }
}
