/** The SM through the native addon and real libibumad, on ibsim, with the real diagnostic tools
 * as witnesses: ibnetdiscover, smpquery, ibroute, ibtracert. No other SM runs. */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startIbsim, runPreloaded, startPreloaded, IBSIM_EXAMPLES, type Ibsim, type PreloadedProcess } from './helpers/ibsim.js';
import { parseIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { formatIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { loadFabricSpec } from '../src/model/load.js';
import { diffFabrics } from '../src/model/json.js';
import { verifyRoutes } from '../src/routing/verify.js';
import { NodeType } from '../src/wire/mad.js';
import { cloneFabric, type Fabric } from '../src/model/fabric.js';
import { graphOf } from './helpers/graph.js';
import { logRe } from './helpers/log-lines.js';

/** The witness compares topologies edited by hand (a link removed): ignore rates left on unlinked ports. */
const LINKS_ONLY = { ignoreUnlinkedRates: true };

const CLI = path.resolve('dist/cli/main.js');
const TIMEOUT = 60_000;


async function tool(ib: Ibsim, cmd: string, args: string[]): Promise<string> {
  const r = await runPreloaded(cmd, args, { ibsim: ib, timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** The LFT a switch holds, from `ibroute <lid>` output. */
function parseIbroute(text: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const m of text.matchAll(/^0x([0-9a-f]{4}) (\d{3}) :/gm)) out.set(parseInt(m[1]!, 16), Number(m[2]));
  return out;
}

/** Check everything with the real tools; returns the fabric ibnetdiscover saw (with LIDs). */
async function witness(ib: Ibsim, topo: Fabric, smLid: number, opts: { tracePairs?: number } = {}): Promise<Fabric> {
  const seen = parseIbnetdiscover(await tool(ib, 'ibnetdiscover', []));
  expect(diffFabrics(graphOf(seen, LINKS_ONLY), graphOf(topo, LINKS_ONLY))).toEqual([]);
  // Every end port has a LID; LIDs are unique.
  const lids = new Set<number>();
  for (const n of seen.nodes) {
    for (const [pn, p] of n.ports.entries()) {
      if (!p || (n.type === NodeType.Switch ? pn !== 0 : !p.peer)) continue;
      expect(p.lid, `${n.desc} port ${pn} has a LID`).toBeGreaterThan(0);
      expect(lids.has(p.lid!)).toBe(false);
      lids.add(p.lid!);
    }
  }
  // smpquery: every CA port ACTIVE with our SM LID; every cabled switch port ACTIVE.
  for (const n of seen.nodes) {
    if (n.type === NodeType.Switch) {
      const swLid = n.ports[0]!.lid!;
      for (const [pn, p] of n.ports.entries()) {
        if (pn === 0 || !p?.peer) continue;
        const out = await tool(ib, 'smpquery', ['portinfo', String(swLid), String(pn)]);
        expect(out, `${n.desc} port ${pn}`).toMatch(/^LinkState:\.+Active$/m);
      }
      const p0 = await tool(ib, 'smpquery', ['portinfo', String(swLid), '0']);
      expect(p0).toMatch(new RegExp(`^SMLid:\\.+${smLid}$`, 'm'));
    } else {
      for (const p of n.ports) {
        if (!p?.peer) continue;
        const out = await tool(ib, 'smpquery', ['portinfo', String(p.lid)]);
        expect(out).toMatch(/^LinkState:\.+Active$/m);
        expect(out).toMatch(new RegExp(`^SMLid:\\.+${smLid}$`, 'm'));
      }
    }
  }
  // ibroute: the LFT dumps reach every LID, loop-free (checked by our verifier).
  const lfts = new Map<number, Uint8Array>();
  let maxLid = 0;
  for (const l of lids) maxLid = Math.max(maxLid, l);
  for (const [i, n] of seen.nodes.entries()) {
    if (n.type !== NodeType.Switch) continue;
    const table = parseIbroute(await tool(ib, 'ibroute', [String(n.ports[0]!.lid)]));
    const lft = new Uint8Array(maxLid + 1).fill(255);
    for (const [lid, port] of table) if (lid <= maxLid) lft[lid] = port;
    lfts.set(i, lft);
  }
  const rep = verifyRoutes(seen, lfts);
  expect(rep.failures).toEqual([]);
  expect(rep.ok).toBe(true);
  // ibtracert between CA ports (all pairs on small fabrics, a sample on larger ones).
  const caLids = seen.nodes.filter((n) => n.type !== NodeType.Switch).flatMap((n) => n.ports.filter((p) => p?.peer).map((p) => p!.lid!));
  const pairs: Array<[number, number]> = [];
  for (const a of caLids) for (const b of caLids) if (a !== b) pairs.push([a, b]);
  const limit = opts.tracePairs ?? pairs.length;
  const step = Math.max(1, Math.floor(pairs.length / limit));
  for (let k = 0; k < pairs.length; k += step) {
    const [a, b] = pairs[k]!;
    const out = await tool(ib, 'ibtracert', [String(a), String(b)]);
    expect(out).toMatch(new RegExp(`To ca .* lid ${b}-${b} `));
  }
  return seen;
}

function lidsByGuid(f: Fabric): Map<bigint, number> {
  const m = new Map<bigint, number>();
  for (const n of f.nodes) for (const p of n.ports) if (p?.lid) m.set(p.guid, p.lid);
  return m;
}

describe('ibsm run --umad on ibsim, checked with the real tools', () => {
  for (const name of ['net', 'net.2sw2path', 'net.2sw2path4hca', 'net.2sw2path4hca2port']) {
    it(
      `${name}: SUBNET UP, every port ACTIVE, LFTs complete and loop-free, ibtracert between every CA pair`,
      async () => {
        const file = path.join(IBSIM_EXAMPLES, name);
        const ib = await startIbsim(file);
        try {
          const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-run-'));
          const g2l = path.join(dir, 'guid2lid');
          const r = await runPreloaded(process.execPath, [CLI, 'run', '--umad', '--once', '--guid2lid', g2l], { ibsim: ib, timeoutMs: TIMEOUT });
          expect(r.stderr).toMatch(logRe('IBSM-1001'));
          expect(r.code).toBe(0);
          const seen = await witness(ib, loadFabricSpec(file), 1);
          // guid2lid holds exactly what the fabric shows
          expect(readFileSync(g2l, 'utf8').trim().split('\n').length).toBe(lidsByGuid(seen).size);
        } finally {
          await ib.stop();
        }
      },
      TIMEOUT * 3,
    );
  }

  it(
    'runs with its port on a CA (SIM_HOST=Hca2): the SM LID is the CA port, every port ACTIVE, routes complete',
    async () => {
      const file = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca');
      const ib = await startIbsim(file);
      try {
        const r = await runPreloaded(process.execPath, [CLI, 'run', '--umad', '--once'], { ibsim: ib, simHost: 'Hca2', timeoutMs: TIMEOUT });
        expect(r.stderr).toMatch(logRe('IBSM-1001'));
        expect(r.code).toBe(0);
        const seen = await witness(ib, loadFabricSpec(file), 1);
        const hca2 = seen.nodes.find((n) => n.desc === 'Hca2')!;
        expect(hca2.ports.find((p) => p?.peer)!.lid).toBe(1);
      } finally {
        await ib.stop();
      }
    },
    TIMEOUT * 3,
  );

  it(
    'a generated fat tree of 48 hosts: every port ACTIVE, LFTs complete and loop-free, sampled ibtracert pairs',
    async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-gen-'));
      const file = path.join(dir, 'fattree.net');
      const topo = loadFabricSpec('gen:fattree2:leaves=6,spines=3,hosts=8');
      writeFileSync(file, formatIbnetdiscover(topo, { timestamp: 'x' }));
      const ib = await startIbsim(file);
      try {
        const r = await runPreloaded(process.execPath, [CLI, 'run', '--umad', '--once', '--routing', 'ftree'], { ibsim: ib, timeoutMs: TIMEOUT });
        expect(r.stderr).toMatch(logRe('IBSM-1001', 'engine=ftree'));
        expect(r.code).toBe(0);
        await witness(ib, topo, 1, { tracePairs: 40 });
      } finally {
        await ib.stop();
      }
    },
    TIMEOUT * 5,
  );

  it(
    'keeps every LID across a restart (guid2lid), even on a fabric whose LIDs were cleared',
    async () => {
      const file = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca2port');
      const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-run-'));
      const g2l = path.join(dir, 'guid2lid');
      let first: Map<bigint, number>;
      {
        const ib = await startIbsim(file);
        try {
          const r = await runPreloaded(process.execPath, [CLI, 'run', '--umad', '--once', '--guid2lid', g2l], { ibsim: ib, timeoutMs: TIMEOUT });
          expect(r.code).toBe(0);
          first = lidsByGuid(parseIbnetdiscover(await tool(ib, 'ibnetdiscover', [])));
        } finally {
          await ib.stop();
        }
      }
      // Rewrite the file so the persisted LIDs differ from what a cold start would pick.
      const lines = readFileSync(g2l, 'utf8').trim().split('\n');
      const rotated = lines.map((l, i) => `${l.split(' ')[0]} ${lines[(i + 1) % lines.length]!.split(' ').slice(1).join(' ')}`);
      writeFileSync(g2l, rotated.join('\n') + '\n');
      const want = new Map(rotated.map((l) => [BigInt(l.split(' ')[0]!), Number(l.split(' ')[1])]));
      expect(want).not.toEqual(first);
      const ib = await startIbsim(file); // a cold fabric again: every LID 0
      try {
        const r = await runPreloaded(process.execPath, [CLI, 'run', '--umad', '--once', '--guid2lid', g2l], { ibsim: ib, timeoutMs: TIMEOUT });
        expect(r.code).toBe(0);
        const smLid = want.get(0x200000n)!; // the SM runs on Switch1's port 0
        const seen = await witness(ib, loadFabricSpec(file), smLid);
        expect(lidsByGuid(seen)).toEqual(want);
      } finally {
        await ib.stop();
      }
    },
    TIMEOUT * 3,
  );

  it(
    'handles Unlink and ReLink through trap 128 and light sweeps; routes are complete and loop-free after each',
    async () => {
      const file = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca');
      const ib = await startIbsim(file);
      let sm: PreloadedProcess | undefined;
      try {
        sm = startPreloaded(process.execPath, [CLI, 'run', '--umad', '--sweep-interval', '1'], { ibsim: ib, timeoutMs: TIMEOUT * 3 });
        // The SM logs to stderr; the harness collects stdout, so wait on the fabric instead.
        const topo = loadFabricSpec(file);
        await waitFor(async () => (await tool(ib, 'ibnetdiscover', [])).includes('lid 1 '), 30_000);
        await witness(ib, topo, 1);
        // Take one of the two parallel switch-to-switch links down.
        await ib.console('Unlink "Switch1"[3]');
        const without = cloneFabric(topo);
        const s1 = without.nodes.findIndex((n) => n.desc === 'Switch1');
        const peer = without.nodes[s1]!.ports[3]!.peer!;
        without.nodes[s1]!.ports[3]!.peer = undefined;
        without.nodes[peer.node]!.ports[peer.port]!.peer = undefined;
        // Wait until the switch-to-switch routes no longer use the dead port.
        await waitFor(async () => !/ 003 : \(Channel Adapter.*Hca2/.test(await tool(ib, 'ibroute', ['1'])), 30_000);
        await witness(ib, without, 1);
        await ib.console('ReLink "Switch1"[3]');
        await waitFor(async () => / 003 : /.test(await tool(ib, 'ibroute', ['1'])), 30_000);
        await witness(ib, topo, 1);
      } finally {
        if (sm) {
          const r = await sm.stop('SIGTERM');
          expect(r.code).toBe(0);
          expect(r.stderr).toMatch(logRe('IBSM-1001'));
          expect(r.stderr).toMatch(logRe('IBSM-3001', 'trap=128'));
        }
        await ib.stop();
      }
    },
    TIMEOUT * 4,
  );
});

describe('ibsm discover --umad on ibsim', () => {
  let ib: Ibsim | undefined;
  afterAll(async () => {
    await ib?.stop();
  });
  for (const name of ['net', 'net.1', 'net.2sw2path', 'net.2sw2path4hca', 'net.2sw2path4hca2port']) {
    it(`prints what ibnetdiscover prints for ${name} (parallel switch links, multi-port HCAs)`, async () => {
      ib = await startIbsim(path.join(IBSIM_EXAMPLES, name));
      try {
        const ours = await runPreloaded(process.execPath, [CLI, 'discover', '--umad'], { ibsim: ib, timeoutMs: TIMEOUT });
        expect(ours.code).toBe(0);
        const theirs = await tool(ib, 'ibnetdiscover', []);
        const strip = (s: string): string => s.replace(/^# Topology file: generated on .*$/m, '');
        expect(strip(ours.stdout)).toBe(strip(theirs));
        // and it is the graph `ibsm discover --sim` reports for the same file
        expect(diffFabrics(graphOf(parseIbnetdiscover(ours.stdout), LINKS_ONLY), graphOf(loadFabricSpec(path.join(IBSIM_EXAMPLES, name)), LINKS_ONLY))).toEqual([]);
      } finally {
        await ib.stop();
        ib = undefined;
      }
    }, TIMEOUT);
  }
  it('matches ibnetdiscover on a generated fat tree written for ibsim', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-gen-'));
    const file = path.join(dir, 'fattree.net');
    writeFileSync(file, formatIbnetdiscover(loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=4'), { timestamp: 'x' }));
    ib = await startIbsim(file);
    try {
      const ours = await runPreloaded(process.execPath, [CLI, 'discover', '--umad'], { ibsim: ib, timeoutMs: TIMEOUT });
      expect(ours.code).toBe(0);
      const theirs = await tool(ib, 'ibnetdiscover', []);
      expect(diffFabrics(graphOf(parseIbnetdiscover(ours.stdout), LINKS_ONLY), graphOf(parseIbnetdiscover(theirs), LINKS_ONLY))).toEqual([]);
    } finally {
      await ib.stop();
      ib = undefined;
    }
  }, TIMEOUT);
});

async function waitFor(pred: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if (await pred()) return;
    } catch {
      /* the fabric may be mid-sweep */
    }
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 250));
  }
}



