/** What-if (routing/what-if.ts) against the running SM: for random switch-to-switch links of a
 * fabric, the what-if's tables and verdict equal what the in-process SM does when that link
 * fails in the simulated fabric. Witnesses: the LFTs the simulated switches hold (read from the
 * fabric, not the SM), the LFT blocks the SM wrote, and the verifier over the SM's tables. */
import { Rng } from '../src/util/rng.js';
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { isSwitch, type Fabric } from '../src/model/fabric.js';
import { NO_ROUTE } from '../src/routing/types.js';
import { verifyRoutes } from '../src/routing/verify.js';
import { failCase, linkCases, parseWhatIf, whatIfSteps, type WhatIfCaseResult, type WhatIfSummary } from '../src/routing/what-if.js';
import { routeWithFallback } from '../src/routing/registry.js';
import { assignLids } from '../src/sm/lids.js';
import { drive } from './helpers/drive.js';
import { smRig, type SmRig } from './helpers/sm-rig.js';
import { runCli } from './helpers/cli.js';

const ENGINES = ['ftree', 'updn', 'minhop'];

/** The LFTs the simulated switches hold, by switch GUID, up to maxLid. */
function simLfts(r: SmRig, f: Fabric, maxLid: number): Map<bigint, Uint8Array> {
  const m = new Map<bigint, Uint8Array>();
  for (const n of f.nodes) if (isSwitch(n)) m.set(n.guid, Uint8Array.from(r.sim.lft(n.guid)).subarray(0, maxLid + 1));
  return m;
}

function tablesByGuid(f: Fabric, lfts: Map<number, Uint8Array>, maxLid: number): Map<bigint, Uint8Array> {
  const m = new Map<bigint, Uint8Array>();
  for (const [i, t] of lfts) {
    const out = new Uint8Array(maxLid + 1).fill(NO_ROUTE);
    out.set(t.subarray(0, maxLid + 1));
    m.set(f.nodes[i]!.guid, out);
  }
  return m;
}

function run(f: Fabric, spec: string): { results: WhatIfCaseResult[]; summary: WhatIfSummary } {
  assignLids(f, { lmc: 0 });
  const routed = routeWithFallback(f, ENGINES, { lmc: 0 });
  const g = whatIfSteps(f, routed.result, parseWhatIf(f, spec), { engines: ENGINES, routing: { lmc: 0 } });
  const results: WhatIfCaseResult[] = [];
  for (;;) {
    const s = g.next();
    if (s.done) return { results, summary: s.value };
    results.push(s.value);
  }
}

describe('what-if', () => {
  it('20 random links (and 2 host links) of a 250-host fat tree: the same LFT changes and verifier report as the SM when the link fails', async () => {
    const r = smRig(loadFabricSpec('gen:fattree3:radix=10'), { sm: { routing: ENGINES, sweepIntervalMs: 1000 } });
    await drive(r.clock, r.sm.start(), 600_000);
    const base = r.sm.current!;
    const f0 = base.fabric;
    const maxLid = base.maxLid;
    const all = linkCases(f0);
    const pick = new Rng(33);
    const chosen = new Set<number>();
    while (chosen.size < 20) chosen.add(pick.int(all.length));
    // And two host links: the host is dropped, its LID's column emptied.
    const hosts = f0.nodes.filter((n) => !isSwitch(n) && n.guid !== f0.nodes[base.discovery.smNode]!.guid);
    const cases = [...[...chosen].map((i) => all[i]!), ...parseWhatIf(f0, `0x${hosts[5]!.guid.toString(16)}:1,0x${hosts[77]!.guid.toString(16)}:1`)];
    const g = whatIfSteps(f0, base.routing, cases, { engines: ENGINES, routing: { lmc: 0 }, anchor: f0.nodes[base.discovery.smNode]!.guid, keepTables: true });
    const before = simLfts(r, f0, maxLid);
    let incremental = 0;
    for (const c of cases) {
      const w = g.next().value as WhatIfCaseResult;
      const { guid, port } = c.links[0]!;
      const n = r.sm.stats.length;
      r.sim.linkDown(guid, port);
      await r.clock.runUntil(() => r.sm.stats.length > n, 10_000);
      const down = r.sm.stats.at(-1)!;
      const f1 = r.sm.current!.fabric;
      expect(w.reroute, c.name).toBe(down.reroute);
      if (w.reroute === 'incremental' && all.some((x) => x.name === c.name)) incremental++;
      // The same tables: the what-if's entries equal what the simulated switches now hold.
      const held = simLfts(r, f1, maxLid);
      const predicted = tablesByGuid(w.fabric!, w.routing!.lfts, maxLid);
      expect([...predicted.keys()].sort()).toEqual([...held.keys()].sort());
      for (const [gd, t] of held) expect(Buffer.compare(t, predicted.get(gd)!), `${c.name}: switch ${gd.toString(16)}`).toBe(0);
      // The same LFT blocks written, and the same verifier report.
      expect(w.lft.blocks, c.name).toBe(down.lftBlocksWritten);
      expect(w.report, c.name).toEqual(verifyRoutes(f1, r.sm.current!.routing));
      // Back up: the SM returns to the intact tables, the baseline of the next case.
      const m = r.sm.stats.length;
      r.sim.linkUp(guid, port);
      await r.clock.runUntil(() => r.sm.stats.length > m, 10_000);
      // A full re-route became the SM's intact routing: an operator's re-route returns it to the
      // baseline's (the engine routes the same fabric the same way).
      if (down.reroute === 'full') await drive(r.clock, r.sm.reroute(), 600_000);
      const back = simLfts(r, r.sm.current!.fabric, maxLid);
      expect(back.size, `back after ${c.name}`).toBe(before.size);
      for (const [gd, t] of before) expect(Buffer.compare(t, back.get(gd)!), `back after ${c.name}`).toBe(0);
    }
    // Both ways the SM re-routes are among them (the balance bound sends some to the engine chain).
    expect(incremental).toBeGreaterThan(0);
    expect(incremental).toBeLessThan(20);
    r.sm.stop();
  }, 600_000);

  it('a leaf switch that goes: its hosts are lost, the rest re-routed in full and verified', () => {
    const f = loadFabricSpec('gen:fattree2:leaves=4,spines=3,hosts=4');
    const { results, summary } = run(f, 'sw-l1-1');
    expect(results).toHaveLength(1);
    const c = results[0]!;
    expect(c.reroute).toBe('full');
    expect(c.lostEndPorts).toBe(4);
    // 16 hosts, 7 switch LIDs: each of the 12 hosts left loses the 4 hosts (the leaf's own LID is
    // not counted: it went with the leaf); the 4 hosts lose their 22 destinations.
    expect(c.lostPairs).toBe(12 * 4 + 4 * 22);
    expect(c.ok).toBe(true);
    expect(summary.losing).toBe(1);
    expect(summary.worst.lostPairs[0]!.case).toBe(c.case);
  });

  it('a set failing together, and links by GUID:PORT; a link whose loss cuts a host off', () => {
    const f = loadFabricSpec('gen:fattree2:leaves=4,spines=3,hosts=4');
    const leaf = f.nodes.find((n) => n.desc === 'sw-l1-0')!;
    const up = leaf.ports.findIndex((p, i) => i > 0 && p?.peer && isSwitch(f.nodes[p.peer.node]!));
    const host = leaf.ports.findIndex((p, i) => i > 0 && p?.peer && !isSwitch(f.nodes[p.peer.node]!));
    const { results } = run(f, `0x${leaf.guid.toString(16)}:${up},0x${leaf.guid.toString(16)}:${host}`);
    expect(results).toHaveLength(2);
    expect(results[0]!.lostPairs).toBe(0);
    expect(results[0]!.ok).toBe(true);
    expect(results[1]!.lostEndPorts).toBe(1);
    // Every uplink of the leaf together: its hosts are cut off (the rest is the larger part).
    const ups = leaf.ports.flatMap((p, i) => (i > 0 && p?.peer && isSwitch(f.nodes[p.peer.node]!) ? [`${leaf.guid.toString(16)}:${i}`] : []));
    const cut = failCase(f, parseWhatIf(f, ups.join('+'))[0]!);
    expect(cut.dropped.map((n) => n.desc).sort()).toEqual(['sw-l1-0', ...f.nodes.filter((n) => n.ports.some((p) => p?.peer && f.nodes[p.peer.node] === leaf) && !isSwitch(n)).map((n) => n.desc)].sort());
    expect(() => parseWhatIf(f, 'no-such-node')).toThrow(/no node "no-such-node"/);
  });

  it('ibsm route --what-if: text, JSON, exit status, usage errors', async () => {
    const spec = 'gen:fattree2:leaves=4,spines=3,hosts=4';
    const j = await runCli(['route', spec, '--what-if', 'links', '--json']);
    expect(j.code).toBe(0);
    const doc = JSON.parse(j.out) as { cases: Array<{ reroute: string; ok: boolean }>; summary: { cases: number; failed: number } };
    expect(doc.cases).toHaveLength(12);
    expect(doc.summary).toMatchObject({ cases: 12, failed: 0 });
    const t = await runCli(['route', spec, '--what-if', 'sw-l1-2']);
    expect(t.code).toBe(1);
    expect(t.out).toMatch(/lost 136 pairs \(4 end ports\)/);
    expect(t.out).toMatch(/worst by pairs lost:\n +136 +switch 0x[0-9a-f]{16} "sw-l1-2"/);
    const bad = await runCli(['route', spec, '--what-if', 'sw-l1-2:99']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/port 99 has no link/);
    expect((await runCli(['route', spec, '--what-if', 'links', '--traffic', 'ebb'])).code).toBe(2);
  });
});
