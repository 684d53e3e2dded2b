/** Manual isolate/release (issue #33 item 2) through the CLI (`ibsm isolate`, `ibsm release`,
 * `ibsm status`, `ibsm dump health`) over the control socket of a running SM on the in-process
 * fabric. The witnesses are the simulated fabric's: the ports' PortState in the SMAs and the LFTs
 * the switches hold (no entry out of an isolated port; the route verifier over them clean). */
import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSm, type IbsmSm } from '../src/api/sm.js';
import { serveControl } from '../src/cli/control.js';
import { controlTargetOf } from '../src/cli/ops.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { NodeType, PortState } from '../src/wire/mad.js';
import { verifyRoutes } from '../src/routing/verify.js';
import { formatGuid } from '../src/util/guid.js';
import { runCli } from './helpers/cli.js';

function lftsOf(sm: IbsmSm): Map<number, Uint8Array> {
  const snap = sm.snapshot!;
  const lfts = new Map<number, Uint8Array>();
  snap.fabric.nodes.forEach((n, i) => n.type === NodeType.Switch && lfts.set(i, sm.sim!.lft(n.guid)));
  return lfts;
}

function routesAvoid(sm: IbsmSm, guid: bigint, port: number): void {
  const snap = sm.snapshot!;
  const lfts = lftsOf(sm);
  const i = snap.fabric.nodes.findIndex((n) => n.guid === guid);
  const used = [...lfts.get(i)!.subarray(1, snap.maxLid + 1)].filter((p) => p === port).length;
  expect(used).toBe(0);
  const rep = verifyRoutes(snap.fabric, lfts);
  expect(rep.failures).toEqual([]);
  expect(rep.loopEntries).toBe(0);
}

describe('ibsm isolate / release on the running SM', () => {
  it('a leaf uplink isolated by hand (INIT, routed around, listed with source manual), then released (ACTIVE, routed)', async () => {
    const sm = await openSm({ sim: 'gen:fattree2:leaves=3,spines=2,hosts=2', seed: 1, sweepIntervalS: 0, log: new Logger(new MemorySink(), 'warn') });
    const sock = path.join(mkdtempSync(path.join(os.tmpdir(), 'ibsm-isolate-')), 'sm.sock');
    try {
      await sm.start();
      const server = await serveControl(sock, controlTargetOf(sm), new Logger(new MemorySink()));
      try {
        const f = sm.snapshot!.fabric;
        const leaf = f.nodes.find((n) => n.desc === 'sw-l1-1')!;
        const up = leaf.ports.findIndex((p, pn) => pn > 0 && p?.peer && f.nodes[p.peer.node]!.type === NodeType.Switch);
        const peer = leaf.ports[up]!.peer!;
        const spine = f.nodes[peer.node]!;
        expect(sm.sim!.portInfo(leaf.guid, up).portState).toBe(PortState.Active);
        const used0 = [...lftsOf(sm).get(f.nodes.indexOf(leaf))!.subarray(1, sm.snapshot!.maxLid + 1)].filter((p) => p === up).length;
        expect(used0).toBeGreaterThan(0); // the uplink carried routes before

        const iso = await runCli(['isolate', `sw-l1-1:${up}`, '--socket', sock]);
        expect(iso.err).toBe('');
        expect(iso.code).toBe(0);
        expect(iso.out).toMatch(/isolated: link "sw-l1-1" .* - .*\(manual, manual\)/);
        expect(sm.sim!.portInfo(leaf.guid, up).portState).toBe(PortState.Init);
        expect(sm.sim!.portInfo(spine.guid, peer.port).portState).toBe(PortState.Init);
        routesAvoid(sm, leaf.guid, up);
        const status = JSON.parse((await runCli(['status', '--socket', sock, '--json'])).out) as { health: { isolated: number; isolatedList: string[] } };
        expect(status.health.isolated).toBe(1);
        expect(status.health.isolatedList[0]).toMatch(/manual\)$/);
        const dump = await runCli(['dump', 'health', '--socket', sock]);
        expect(dump.out).toMatch(/manual/);
        expect(dump.out).toContain(formatGuid(leaf.guid));

        // a second isolate of the same link: nothing new
        expect((await runCli(['isolate', `${formatGuid(leaf.guid)}:${up}`, '--socket', sock, '--json'])).out).toMatch(/"new":false/);
        // a node by description: the host's link held too
        const host = f.nodes.find((n) => n.type !== NodeType.Switch && n.desc !== f.nodes[sm.snapshot!.discovery.smNode]!.desc && n.ports.some((p) => p?.peer && f.nodes[p.peer.node] === leaf))!;
        const hostPort = host.ports.findIndex((p) => p?.peer);
        expect((await runCli(['isolate', formatGuid(host.guid), '--socket', sock])).code).toBe(0);
        expect(sm.sim!.portInfo(host.guid, hostPort).portState).toBe(PortState.Init);
        expect(sm.subnet.sm.health.state.isolated.map((i) => `${i.kind} ${i.source}`)).toEqual(['link manual', 'node manual']);

        // errors name what is wrong, exit non-zero
        const bad = await runCli(['isolate', 'no-such-node', '--socket', sock]);
        expect(bad.code).not.toBe(0);
        expect(bad.err).toMatch(/no node "no-such-node"/);
        const none = await runCli(['release', 'sw-l2-0:1', '--socket', sock]);
        expect(none.code).not.toBe(0);
        expect(none.err).toMatch(/nothing isolated at/);

        // released: ACTIVE and routed again
        const rel = await runCli(['release', `sw-l1-1:${up}`, '--socket', sock]);
        expect(rel.code).toBe(0);
        expect(rel.out).toMatch(/released:/);
        expect(sm.sim!.portInfo(leaf.guid, up).portState).toBe(PortState.Active);
        expect((await runCli(['release', host.desc, '--socket', sock])).code).toBe(0);
        expect(sm.subnet.sm.health.state.isolated).toEqual([]);
        expect(sm.sim!.portInfo(host.guid, hostPort).portState).toBe(PortState.Active);
        const snap = sm.snapshot!;
        const li = snap.fabric.nodes.findIndex((n) => n.guid === leaf.guid);
        expect(snap.fabric.nodes[li]!.ports[up]!.peer).toBeDefined();
        const rep = verifyRoutes(snap.fabric, lftsOf(sm));
        expect(rep.failures).toEqual([]);
      } finally {
        server.close();
      }
    } finally {
      await sm.stop();
    }
  }, 120_000);
});
