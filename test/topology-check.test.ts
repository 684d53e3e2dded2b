/** `ibsm check --topology FILE` through the CLI (issue #33): exit 0 when the fabric matches, 1 on a
 * mismatch (each named, both ends), 2 on usage or file errors; and the file forms it reads. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main } from '../src/cli/main.js';
import { loadFabricSpec } from '../src/model/load.js';
import { parseCablingPlan, parseExpectedTopology } from '../src/model/topology-file.js';
import { compareTopology } from '../src/model/topology-compare.js';
import { TopologyError } from '../src/model/errors.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(args, { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } });
  return { code, out, err };
}

const SPEC = 'gen:fattree2:leaves=3,spines=2,hosts=2';
const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-check-'));

describe('ibsm check', () => {
  it('exits 0 against what ibsm discover wrote of the same fabric, 1 against another, naming the mismatches', async () => {
    const d = await cli(['discover', '--sim', SPEC]);
    expect(d.code).toBe(0);
    const file = path.join(dir, 'pinned.topo');
    writeFileSync(file, d.out);
    const same = await cli(['check', '--topology', file, '--sim', SPEC]);
    expect(same.err).toBe('');
    expect(same.code).toBe(0);
    expect(same.out).toMatch(/the fabric matches/);
    const other = await cli(['check', '--topology', file, '--sim', 'gen:fattree2:leaves=3,spines=3,hosts=2', '--json']);
    expect(other.code).toBe(1);
    const j = JSON.parse(other.out) as { mismatches: Array<{ class: string; a: { description: string; guid: string; port: number } }> };
    expect(j.mismatches.length).toBeGreaterThan(0);
    expect(j.mismatches.map((m) => m.class)).toContain('extra-node');
    for (const m of j.mismatches) expect(m.a.guid).toMatch(/^0x[0-9a-f]{16}$/);
  });

  it('exits 2 without --topology, with a file that is not there, or one that does not parse', async () => {
    expect((await cli(['check', '--sim', SPEC])).code).toBe(2);
    const gone = await cli(['check', '--topology', path.join(dir, 'none'), '--sim', SPEC]);
    expect(gone.code).toBe(2);
    expect(gone.err).toMatch(/expected topology/);
    const bad = path.join(dir, 'bad.plan');
    writeFileSync(bad, 'leaf-01 1 spine-01\n');
    const b = await cli(['check', '--topology', bad, '--sim', SPEC]);
    expect(b.code).toBe(2);
    expect(b.err).toMatch(/bad\.plan:1/);
    // ibsm config --check names the file and line too, and refuses the configuration
    const c = await cli(['config', '--check', '--sim', SPEC, '--guid2lid', 'none', '--topology', bad]);
    expect(c.code).toBe(2);
    expect(c.out).toMatch(/^problem: .*bad\.plan:1: a link is NODE PORT NODE PORT/m);
    expect((await cli(['config', '--check', '--sim', SPEC, '--guid2lid', 'none', '--topology-action', 'width=drop'])).code).toBe(2);
  });

  it('reads a cabling plan by NodeDescription: the fabric it describes matches, a swapped pair does not', () => {
    const f = loadFabricSpec(SPEC);
    const lines = f.nodes.flatMap((n, i) => n.ports.flatMap((p, pn) => (p?.peer && pn > 0 && (i < p.peer.node || (i === p.peer.node && pn < p.peer.port)) ? [`"${n.desc}" ${pn} "${f.nodes[p.peer.node]!.desc}" ${p.peer.port} 4x SDR`] : [])));
    const plan = parseExpectedTopology(lines.join('\n') + '\n', 'plan');
    expect(compareTopology(plan, f)).toEqual([]);
    // swap the leaf ports of two hosts in the plan
    const swapped = lines.map((l) => l.replace(/^"sw-l1-1" 1 /, '"sw-l1-1" X ').replace(/^"sw-l1-1" 2 /, '"sw-l1-1" 1 ').replace(/^"sw-l1-1" X /, '"sw-l1-1" 2 '));
    expect(compareTopology(parseCablingPlan(swapped.join('\n'), 'plan'), f).map((m) => m.cls)).toEqual(['wrong-port', 'wrong-port']);
    // a plan that wants NDR: every link is slower
    const ndr = parseCablingPlan(lines.map((l) => l.replace('SDR', 'NDR')).join('\n'), 'plan');
    expect(new Set(compareTopology(ndr, f).map((m) => m.cls))).toEqual(new Set(['speed']));
    expect(() => parseCablingPlan('a 1 b 1 5x', 'p')).toThrow(TopologyError);
    expect(() => parseCablingPlan('a 1 b 1\na 1 c 1', 'p')).toThrow(/cabled twice/);
  });
});

describe('the health seen by a person: status, dump health, topo, events, metrics', () => {
  it('a running SM with an extra spine isolated lists it, draws it, counts it and said so as an event', async () => {
    const { openSm } = await import('../src/api/sm.js');
    const { controlTargetOf } = await import('../src/cli/ops.js');
    const { renderMetrics } = await import('../src/api/metrics.js');
    const { Logger, MemorySink } = await import('../src/util/log.js');
    const d = await cli(['discover', '--sim', SPEC]);
    const file = path.join(dir, 'two-spines.topo');
    writeFileSync(file, d.out);
    // the fabric has a third spine the file does not: an extra node, isolated; and its links
    const sm = await openSm({ sim: 'gen:fattree2:leaves=3,spines=3,hosts=2', topology: file, topologyAction: 'extra-node=isolate', sweepIntervalS: 0, guid2lid: 'none', log: new Logger(new MemorySink(), 'info') });
    const events: unknown[] = [];
    sm.events.on('healthChanged', (e) => events.push(e));
    try {
      await sm.start();
      expect(events.length).toBe(1);
      expect(events[0]).toMatchObject({ found: [{ class: 'extra-node' }], isolated: [{ kind: 'node', class: 'extra-node', source: 'topology' }], isolatedNow: 1 });
      const t = controlTargetOf(sm);
      const st = t.status() as { health: { mismatches: number; isolated: number; isolatedList: string[] } };
      expect(st.health.isolated).toBe(1);
      expect(st.health.isolatedList[0]).toMatch(/^node "sw-l2-2" \(0x[0-9a-f]{16}\) \(extra-node, topology\)$/);
      const dump = String(await t.dump('health'));
      expect(dump).toMatch(/^isolated: 1\n  node "sw-l2-2"/);
      expect(dump).toMatch(/extra-node: "sw-l2-2"/);
      const picture = JSON.parse(String(await t.topo('json'))) as { nodes: Array<{ desc: string; isolated?: string }>; links: Array<{ health?: string }> };
      expect(picture.nodes.find((n) => n.desc === 'sw-l2-2')?.isolated).toMatch(/isolated \(extra-node\)/);
      const svg = String(await t.topo('svg'));
      expect(svg).toMatch(/class="node switch isolated"/);
      const m = renderMetrics(sm.subnet, sm.backend.rpc);
      expect(m).toMatch(/^ibsm_topology_mismatches\{class="extra-node"\} 1$/m);
      expect(m).toMatch(/^ibsm_isolated\{kind="node"\} 1$/m);
      // a reload without the file: the next sweep releases the spine (ACTIVE, routed), said as an event
      const res = await sm.reload({ sim: 'gen:fattree2:leaves=3,spines=3,hosts=2', sweepIntervalS: 0, guid2lid: 'none' });
      expect(res.applied).toContain('topology');
      await sm.subnet.sm.sweep('heavy');
      expect(sm.subnet.sm.health.state).toEqual({ mismatches: [], isolated: [] });
      expect(events.at(-1)).toMatchObject({ released: [{ kind: 'node', class: 'extra-node' }], isolatedNow: 0 });
      expect(sm.snapshot!.fabric.nodes.some((n) => n.desc === 'sw-l2-2')).toBe(true);
      // and with it again (warn only this time): found again, nothing isolated
      await sm.reload({ sim: 'gen:fattree2:leaves=3,spines=3,hosts=2', sweepIntervalS: 0, guid2lid: 'none', topology: file });
      await sm.subnet.sm.sweep('heavy');
      expect(sm.subnet.sm.health.state.mismatches.map((x) => x.cls)).toEqual(['extra-node']);
      expect(sm.subnet.sm.health.state.isolated).toEqual([]);
    } finally {
      await sm.stop();
    }
  });
});
