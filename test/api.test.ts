/** The package API (src/index.ts) on the in-process fabric: an SM+SA opened with `ibsm run`'s
 * options, its typed events, the snapshot and routes, the SA client, the simulated fabric's faults. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileLogSink, Logger, NodeType, openSaClient, openSm, routeBetween, type IbsmSm, type PortStateChange, type TopologyChange } from '../src/index.js';
import { createSimFabric } from '../src/entry/sim.js';
import { JoinState } from '../src/entry/wire.js';
import { parseGuidFile } from '../src/entry/config.js';
import { MemorySink } from '../src/util/log.js';
import { hasCode } from './helpers/log-lines.js';


const SPEC = 'gen:fattree2:leaves=2,spines=2,hosts=2';

async function up(extra: Parameters<typeof openSm>[0] = {}): Promise<{ sm: IbsmSm; sink: MemorySink }> {
  const sink = new MemorySink();
  const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, log: new Logger(sink, 'info'), ...extra });
  const subnetUp = sm.events.next('subnetUp');
  const states: string[] = [];
  sm.events.on('smStateChanged', (t) => states.push(`${t.from}->${t.to}`));
  const sweeps: number[] = [];
  sm.events.on('sweep', (s) => sweeps.push(s.smps));
  await sm.start();
  const e = await subnetUp;
  expect(e.snapshot).toBe(sm.snapshot);
  expect(e.stats.kind).toBe('heavy');
  expect(states).toEqual(['notActive->discovering', 'discovering->master']);
  expect(sweeps).toEqual([e.stats.smps]);
  expect(hasCode(sink.lines, 'IBSM-1001')).toBe(true);
  return { sm, sink };
}

/** Host node indices of the SM's snapshot, the SM's own node excluded. */
function hosts(sm: IbsmSm): number[] {
  const snap = sm.snapshot!;
  return snap.fabric.nodes.map((n, i) => (n.type !== NodeType.Switch && i !== snap.discovery.smNode ? i : -1)).filter((i) => i >= 0);
}

describe('package API', () => {
  it('opens an SM on a generated fabric: subnet up, sweep stats, snapshot, routes that match the switches', async () => {
    const { sm } = await up();
    try {
      const snap = sm.snapshot!;
      expect(snap.fabric.nodes.length).toBe(2 + 2 + 4);
      expect(sm.sweeps[0]!.nodes).toBe(8);
      const [a, b] = hosts(sm);
      const pa = snap.fabric.nodes[a!]!.ports.find((p) => p?.peer)!;
      const pb = snap.fabric.nodes[b!]!.ports.find((p) => p?.peer)!;
      const r = sm.route(pa.guid, pb.guid);
      expect(r.dlid).toBe(pb.lid);
      expect(r.hops[0]!.nodeGuid).toBe(snap.fabric.nodes[a!]!.guid);
      expect(r.hops.at(-1)!.nodeGuid).toBe(snap.fabric.nodes[b!]!.guid);
      // Independent witness: the LFTs the simulated switches hold (programmed through SMPs).
      for (const h of r.hops.slice(1, -1)) {
        const simNode = sm.sim!.nodes.find((n) => n.guid === h.nodeGuid)!;
        expect(simNode.type).toBe(NodeType.Switch);
        expect(sm.sim!.lft(simNode.idx)[r.dlid]).toBe(h.outPort);
      }
      // The same route by LID and by description.
      expect(routeBetween(snap, pa.lid!, snap.fabric.nodes[b!]!.desc).hops).toEqual(r.hops);
    } finally {
      await sm.stop();
    }
  });

  it('SA client: PathRecord, multicast create/join/leave as events, services, InformInfo reports; a link down is a topology change naming the port', async () => {
    const { sm } = await up();
    const sa = await openSaClient({ sm });
    try {
      const snap = sm.snapshot!;
      const served: string[] = [];
      sm.events.on('saRequest', (e) => served.push(e.attribute));
      const [, , far] = hosts(sm);
      const farNode = snap.fabric.nodes[far!]!;
      const farPort = farNode.ports.findIndex((p) => p?.peer);
      const fp = farNode.ports[farPort]!;
      const prs = await sa.pathRecords({ sgid: sa.portGid(), dgid: (0xfe80000000000000n << 64n) | fp.guid });
      expect(prs.length).toBeGreaterThan(0);
      expect(prs[0]!.dlid).toBe(fp.lid);
      expect(prs[0]!.slid).toBe(snap.fabric.nodes.flatMap((n) => n.ports).find((p) => p?.guid === sa.rpc.transport.local.portGuid)!.lid);
      expect(served).toContain('PathRecord');
      expect((await sa.nodes()).length).toBe(snap.fabric.nodes.length);

      const created = sm.events.next('multicastGroupCreated');
      const g = await sa.join(0n, { create: { qKey: 0x1234, pKey: 0xffff } });
      expect((await created).mgid).toBe(g.mgid);
      expect(g.joinState).toBe(JoinState.FullMember);
      const deleted = sm.events.next('multicastGroupDeleted');
      await sa.leave(g.mgid);
      expect((await deleted).mlid).toBe(g.mlid);

      await sa.registerService({ serviceId: 0x1000n, serviceName: 'api-test' });
      expect((await sa.services()).some((s) => s.serviceId === 0x1000n && s.serviceName === 'api-test')).toBe(true);
      await sa.deleteService(0x1000n);
      expect((await sa.services()).some((s) => s.serviceId === 0x1000n)).toBe(false);

      await sa.subscribe(65); // GID out of service
      const report = sa.events.next('report');
      const changed = sm.events.next('topologyChanged');
      const states: PortStateChange[] = [];
      sm.events.on('portStateChanged', (c) => states.push(c));
      const trap = sm.events.next('trap');
      sm.sim!.linkDown(sm.sim!.nodes.findIndex((n) => n.guid === farNode.guid), farPort);
      expect((await trap).trapNumber).toBe(128);
      const c: TopologyChange = await changed;
      expect(c.nodesRemoved.map((n) => n.guid)).toEqual([farNode.guid]);
      expect(c.nodesRemoved[0]!.description).toBe(farNode.desc);
      expect(c.portsRemoved.some((p) => p.portGuid === fp.guid && p.portNum === farPort && p.nodeDescription === farNode.desc)).toBe(true);
      const link = c.linksRemoved.find((l) => l.a.portGuid === fp.guid || l.b.portGuid === fp.guid)!;
      const sw = link.a.portGuid === fp.guid ? link.b : link.a;
      expect(sw.nodeGuid).toBe(snap.fabric.nodes[fp.peer!.node]!.guid);
      expect(sw.portNum).toBe(fp.peer!.port);
      expect(states.some((s) => s.port.nodeGuid === sw.nodeGuid && s.port.portNum === sw.portNum && s.from === 'Active' && s.to === 'Down')).toBe(true);
      const n = await report;
      expect(n.trapNumber).toBe(65);
    } finally {
      await sa.close();
      await sm.stop();
    }
  });

  it('takes the daemon options: roots from a GUID file, HoQ and packet lifetimes, subnet prefix, max VLs, SM port by GUID', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-api-'));
    const probe = createSimFabric(SPEC, { seed: 1 });
    const spine = probe.nodes.filter((n) => n.type === NodeType.Switch).at(-1)!;
    const host = probe.nodes.filter((n) => n.type !== NodeType.Switch).at(-1)!;
    const hostPortGuid = host.ports.find((p) => p?.peer)!.guid;
    probe.close();
    const rootFile = path.join(dir, 'roots');
    writeFileSync(rootFile, `# the spine\n0x${spine.guid.toString(16)}\n`);
    expect(parseGuidFile(`# c\n${spine.guid.toString(16)}\n\n`, 'x')).toEqual([spine.guid]);
    expect(() => parseGuidFile('0x1\nnope\n', 'f')).toThrow(/f:2: "nope" is not a GUID/);
    const { sm } = await up({ routing: ['updn'], rootGuidFile: rootFile, hoqLife: 0x11, leafHoqLife: 0x0e, packetLife: 0x10, subnetPrefix: 0xfe80000000001234n, maxOpVls: 2, guid: hostPortGuid });
    try {
      const snap = sm.snapshot!;
      expect(sm.backend.transport.local.portGuid).toBe(hostPortGuid);
      expect(snap.routing.roots).toEqual([spine.guid]);
      const sim = sm.sim!;
      for (const n of sim.nodes) {
        if (n.type === NodeType.Switch) {
          expect(sim.switchInfo(n.idx).lifeTimeValue).toBe(0x10);
          n.ports.forEach((p, pn) => {
            if (!p?.peer || pn === 0) return;
            const toSwitch = p.peer.node.type === NodeType.Switch;
            expect(sim.portInfo(n.idx, pn).hoqLife).toBe(toSwitch ? 0x11 : 0x0e);
          });
        } else {
          const pn = n.ports.findIndex((p) => p?.peer);
          const pi = sim.portInfo(n.idx, pn);
          expect(pi.gidPrefix).toBe(0xfe80000000001234n);
          expect(pi.operationalVls).toBe(2);
        }
      }
    } finally {
      await sm.stop();
    }
  });

  it('a log file is appended to and rotated to FILE.1 when it passes log-max-size: at most twice that on disk', () => {
    const f = path.join(mkdtempSync(path.join(os.tmpdir(), 'ibsm-log-')), 'ibsm.log');
    writeFileSync(f, 'before\n');
    const sink = fileLogSink(f, 1);
    sink.write('first');
    expect(readFileSync(f, 'utf8')).toBe('before\nfirst\n');
    const line = 'x'.repeat(999);
    for (let i = 0; i < 1100; i++) sink.write(`${i} ${line}`);
    sink.close();
    const text = readFileSync(f, 'utf8');
    expect(statSync(f).size).toBeLessThanOrEqual(1024 * 1024);
    expect(text).not.toContain('before');
    expect(text.trimEnd().split('\n').at(-1)).toBe(`1099 ${line}`);
    // the lines before the rotation are in FILE.1, the previous FILE.1 replaced
    const old = readFileSync(`${f}.1`, 'utf8');
    expect(old.startsWith('before\nfirst\n')).toBe(true);
    expect(statSync(`${f}.1`).size).toBeLessThanOrEqual(1024 * 1024);
    expect(text.split('\n')[0]!.startsWith(`${old.trimEnd().split('\n').length - 2} `)).toBe(true);
    const unbounded = fileLogSink(f, 0);
    for (let i = 0; i < 1100; i++) unbounded.write(line);
    unbounded.close();
    expect(statSync(f).size).toBeGreaterThan(1024 * 1024);
  });

  it('a listener that throws is counted and logged; the SM carries on', async () => {
    const sink = new MemorySink();
    const sm = await openSm({ sim: SPEC, sweepIntervalS: 0, log: new Logger(sink, 'info') });
    try {
      sm.events.on('sweep', () => {
        throw new Error('listener bug');
      });
      const up = sm.events.next('subnetUp');
      await sm.start();
      await up;
      expect(sm.events.listenerErrors).toBe(1);
      expect(hasCode(sink.lines, 'IBSM-6001', 'event=sweep error="listener bug"')).toBe(true);
      expect(hasCode(sink.lines, 'IBSM-1001')).toBe(true);
    } finally {
      await sm.stop();
    }
  });
});
