/** guid_routing_order_file and guid_routing_order_no_scatter (#28): the opensm.conf keys and the
 * options, `ibsm config --check` and `ibsm route` with file:line errors, and the SM: the order
 * used by its routing, a WARN (IBSM-4030) for an engine of the chain that does not take it, a
 * file that cannot be read refused at start and, at a reload, logged (IBSM-4031) with the routes
 * computed without an order, as OpenSM does. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runConfig } from '../src/cli/main.js';
import { runCli } from './helpers/cli.js';
import { setting } from '../src/config/file.js';
import { openSm, type IbsmSm } from '../src/api/sm.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { indexFabric } from '../src/routing/graph.js';
import type { ReadonlySnapshot } from '../src/model/snapshot.js';

const SPEC = 'gen:fattree2:leaves=3,spines=3,hosts=3';
const tmp = (): string => mkdtempSync(path.join(tmpdir(), 'ibsm-order-'));
const ibsm = (...argv: string[]): ReturnType<typeof runCli> => runCli(argv);

describe('the opensm.conf keys and the options', () => {
  it('guid_routing_order_file and guid_routing_order_no_scatter are read into the options', () => {
    const dir = tmp();
    const conf = path.join(dir, 'opensm.conf');
    writeFileSync(conf, `routing_engine minhop\nguid_routing_order_file ${dir}/order\nguid_routing_order_no_scatter TRUE\n`);
    const c = runConfig(['--config', conf]).config;
    expect(setting(c, 'guid-routing-order-file')).toBe(`${dir}/order`);
    expect(setting(c, 'guid-routing-order-no-scatter')).toBe(true);
    // OpenSM's defaults: no file, scatter
    writeFileSync(conf, 'guid_routing_order_file (null)\nguid_routing_order_no_scatter FALSE\n');
    const d = runConfig(['--config', conf]).config;
    expect(setting(d, 'guid-routing-order-file')).toBeUndefined();
    expect(setting(d, 'guid-routing-order-no-scatter')).toBe(false);
    // the command line
    const e = runConfig(['--guid-routing-order-file', '/x/order', '--guid-routing-order-no-scatter']).config;
    expect([setting(e, 'guid-routing-order-file'), setting(e, 'guid-routing-order-no-scatter')]).toEqual(['/x/order', true]);
  });

  it('ibsm config --check: a good file counted; a bad line with file:line and the key that named it; a missing file', async () => {
    const dir = tmp();
    const order = path.join(dir, 'order');
    writeFileSync(order, '# hosts first\n0x0002c90000000001 node-1\n0x0002c90000000002\n');
    const good = await ibsm('config', '--check', '--guid-routing-order-file', order);
    expect(good.code, good.out).toBe(0);
    expect(good.out).toContain(`guid-routing-order-file ${order}: good (2 GUIDs)`);
    writeFileSync(order, '0x0002c90000000001\n\n0x00z2\n');
    const conf = path.join(dir, 'opensm.conf');
    writeFileSync(conf, `lmc 0\nguid_routing_order_file ${order}\n`);
    const bad = await ibsm('config', '--check', '--config', conf);
    expect(bad.code).toBe(2);
    expect(bad.out).toContain(`problem: ${order}:3: "0x00z2" is not a GUID (hex, e.g. 0x0002c90000000001) (guid_routing_order_file at ${conf}:2: the port GUIDs minhop, updn and dfsssp route first, in order)`);
    const missing = await ibsm('config', '--check', '--guid-routing-order-file', path.join(dir, 'nope'));
    expect(missing.out).toContain(`problem: --guid-routing-order-file ${path.join(dir, 'nope')} (the port GUIDs minhop, updn and dfsssp route first, in order): does not exist`);
  });

  it('ibsm route: the order used (a note), an engine without it said, a bad file exit 2 with file:line', async () => {
    const dir = tmp();
    const order = path.join(dir, 'order');
    writeFileSync(order, '0x1\n0x0\n');
    const r = await ibsm('route', SPEC, '--engine', 'minhop', '--guid-routing-order-file', order, '--json');
    expect(r.code, r.err).toBe(0);
    expect((JSON.parse(r.out) as { notes: string[] }).notes.join('\n')).toMatch(/guid routing order: \d+ destination port\(s\) routed first/);
    const f = await ibsm('route', SPEC, '--engine', 'ftree', '--guid-routing-order-file', order, '--json');
    expect((JSON.parse(f.out) as { notes: string[] }).notes).toContain('ftree routes in its own order: --guid-routing-order-file is not used by it (only minhop, updn, dfsssp take it)');
    writeFileSync(order, '0x1\nnot-a-guid\n');
    const bad = await ibsm('route', SPEC, '--guid-routing-order-file', order);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(`${order}:2: "not-a-guid" is not a GUID`);
  });
});

/** The SM's snapshot: a leaf (the first with hosts), its uplinks in port order, the hosts on the
 * other leaves with their LIDs, and the leaf's port for a LID. */
function leafView(snap: ReadonlySnapshot): { up: number[]; remote: Array<{ guid: bigint; lid: number }>; port: (lid: number) => number } {
  const ix = indexFabric(snap.fabric as never);
  const leaf = ix.ends.find((e) => !e.isSwitch)!.sw;
  const up: number[] = [];
  for (let e = ix.adjStart[leaf]!; e < ix.adjStart[leaf + 1]!; e++) up.push(ix.adjPort[e]!);
  up.sort((a, b) => a - b);
  const remote = ix.ends.filter((e) => !e.isSwitch && e.sw !== leaf).map((e) => ({ guid: e.guid, lid: e.lid }));
  const lft = snap.routing.lfts.get(ix.swNode[leaf]!)!;
  return { up, remote, port: (lid) => lft[lid]! };
}

describe('the SM routes in the order', () => {
  it('minhop: the listed remote hosts take a leaf uplinks in turn; ftree in the chain warned (IBSM-4030); a file gone at a reload: IBSM-4031, routed without it', async () => {
    const dir = tmp();
    const order = path.join(dir, 'order');
    // Learn the hosts' GUIDs from a first run, then list the remote ones of a leaf in reverse.
    const probe = await openSm({ sim: SPEC, sweepIntervalS: 0, guid2lid: 'none', routing: ['minhop'], log: new Logger(new MemorySink(), 'info') });
    await probe.start();
    const first = leafView(probe.snapshot!);
    await probe.stop();
    const listed = [...first.remote].reverse();
    writeFileSync(order, listed.map((h) => `0x${h.guid.toString(16)} host\n`).join(''));

    const sink = new MemorySink();
    const opts = { sim: SPEC, sweepIntervalS: 0, guid2lid: 'none', routing: ['minhop', 'ftree'], guidRoutingOrderFile: order };
    let sm: IbsmSm | undefined;
    try {
      sm = await openSm({ ...opts, log: new Logger(sink, 'info', 'json') });
      await sm.start();
      const v = leafView(sm.snapshot!);
      const lidOf = new Map(v.remote.map((h) => [h.guid, h.lid]));
      expect(listed.map((h) => v.port(lidOf.get(h.guid)!))).toEqual(listed.map((_, i) => v.up[i % v.up.length]));
      // without the order the first remote host (in the engine's order) took the first uplink instead
      expect(v.port(lidOf.get(listed[0]!.guid)!)).not.toBe(first.port(first.remote.find((h) => h.guid === listed[0]!.guid)!.lid));
      const lines = sink.lines.map((l) => JSON.parse(l) as Record<string, string>);
      expect(lines.filter((l) => l.code === 'IBSM-4030').map((l) => [l.level, l.engine])).toEqual([['warn', 'ftree']]);

      // At a reload, the file gone: logged, the routes computed without an order, the reload applied.
      rmSync(order);
      const swept = sm.events.next('sweep', (s) => s.kind === 'heavy');
      const r = await sm.reload({ ...opts, guidRoutingOrderNoScatter: true });
      expect(r.applied).toEqual(['guidRoutingOrderNoScatter']);
      await swept;
      const err = sink.lines.map((l) => JSON.parse(l) as Record<string, string>).find((l) => l.code === 'IBSM-4031')!;
      expect(err).toMatchObject({ level: 'error', file: order });
      expect(err.error).toContain('does not exist');
      const w = leafView(sm.snapshot!);
      expect(w.remote.map((h) => w.port(h.lid))).toEqual(first.remote.map((h) => first.port(h.lid)));
    } finally {
      await sm?.stop();
    }
  });

  it('at start a configured file that cannot be read is refused (the option and its role named)', async () => {
    await expect(openSm({ sim: SPEC, sweepIntervalS: 0, guid2lid: 'none', guidRoutingOrderFile: '/nonexistent/order', log: new Logger(new MemorySink(), 'info') })).rejects.toThrow('--guid-routing-order-file /nonexistent/order (the port GUIDs minhop, updn and dfsssp route first, in order): does not exist');
  });
});
