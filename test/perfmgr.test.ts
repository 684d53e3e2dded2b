/** PerfMgr: 64-bit totals from narrow saturating counters (pure), and sweeps of the in-process
 * fabric's PMAs: traffic counted, injected errors logged with the port named, counters cleared
 * before they saturate, clears by someone else noticed without losing the total. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { GSI_QKEY } from '../src/wire/mad.js';
import { MgmtClass, Method, NodeType } from '../src/wire/mad.js';
import { PMA_CLASS_VERSION, PmaAttr, PortCounters, pmaData, pmaRequest } from '../src/wire/pma.js';
import { Subnet } from '../src/subnet.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { renderMetrics } from '../src/api/metrics.js';
import { accumulate, cleared, counterMetricName, zeroCounters } from '../src/sm/perf-counters.js';
import { PerfMgr } from '../src/sm/perfmgr.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { drive } from './helpers/drive.js';
import { withCode } from './helpers/log-lines.js';

const reading = (v: Partial<PortCounters>): PortCounters => ({ ...PortCounters.zero(), ...v });

describe('PerfMgr arithmetic', () => {
  it('accumulates deltas, keeps the total past the hardware width, and asks to clear past half range', () => {
    let r = accumulate(undefined, { counters: reading({ symbolErrors: 10, xmitData: 100 }) });
    expect(r.state.totals.symbolErrors).toBe(10n);
    expect(r.clear).toEqual({ counterSelect: 0, counterSelect2: 0 });
    r = accumulate(r.state, { counters: reading({ symbolErrors: 40_000, xmitData: 300 }) });
    expect(r.delta.symbolErrors).toBe(39_990n);
    expect(r.delta.xmitData).toBe(200n);
    expect(r.clear.counterSelect).toBe(0x0001); // SymbolErrorCounter is CounterSelect bit 0
    const s = cleared(r.state, r.clear);
    expect(s.last.symbolErrors).toBe(0n);
    expect(s.last.xmitData).toBe(300n);
    r = accumulate(s, { counters: reading({ symbolErrors: 65_535, xmitData: 300 }) });
    expect(r.state.totals.symbolErrors).toBe(40_000n + 65_535n);
    expect(r.saturated).toEqual(['symbolErrors']);
  });

  it('a reading below the last one is a clear by someone else: the reading is what was counted since', () => {
    let r = accumulate(undefined, { counters: reading({ linkDowned: 7 }) });
    r = accumulate(r.state, { counters: reading({ linkDowned: 2 }) });
    expect(r.clearedByOther).toEqual(['linkDowned']);
    expect(r.state.totals.linkDowned).toBe(9n);
  });

  it('PortXmitWait and QP1Dropped clear through CounterSelect2; 64-bit extended counters are never cleared', () => {
    const base = accumulate(undefined, { counters: reading({}) }).state;
    const r = accumulate(base, {
      counters: reading({ xmitWait: 0xf000_0000, qp1Dropped: 0xf000, xmitData: 0xffff_ffff }),
      extended: { ...(zeroCounters() as never), portSelect: 1, counterSelect: 0, counterSelect2: 0, xmitData: 5n * 2n ** 40n, rcvData: 0n, xmitPkts: 0n, rcvPkts: 0n, unicastXmitPkts: 0n, unicastRcvPkts: 0n, multicastXmitPkts: 0n, multicastRcvPkts: 0n, reserved0: 0 } as never,
    });
    expect(r.clear).toEqual({ counterSelect: 0, counterSelect2: 0x03 });
    expect(r.state.totals.xmitData).toBe(5n * 2n ** 40n);
  });

  it('metric names are perfquery labels in snake case', () => {
    expect(counterMetricName('xmitData')).toBe('xmit_data_bytes');
    expect(counterMetricName('rcvPkts')).toBe('rcv_packets');
    expect(counterMetricName('symbolErrors')).toBe('symbol_error_counter');
    expect(counterMetricName('rcvRemotePhysErrors')).toBe('rcv_remote_physical_errors');
    expect(counterMetricName('qp1Dropped')).toBe('qp1_dropped');
  });
});

async function bringUp() {
  const clock = new VirtualClock();
  const sim = new SimFabric(loadFabricSpec('gen:fattree2:leaves=2,spines=2,hosts=2'), { clock, seed: 5 });
  const ep = sim.attach(0);
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
  ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
  const rpc = new MadRpc(ep, clock, { timeoutMs: 50, window: 64 });
  const sink = new MemorySink();
  const log = new Logger(sink, 'debug');
  const subnet = new Subnet({ rpc, portGuid: ep.local.portGuid, smp: smpClientOf(rpc), clock, log, routing: ['ftree', 'minhop'], lmc: 0, sweepIntervalMs: 0, saServer: { schedule: (fn) => queueMicrotask(fn) } });
  await drive(clock, subnet.start());
  const pm = new PerfMgr({ rpc, log });
  return { clock, sim, subnet, rpc, sink, pm, snap: subnet.sm.current! };
}

describe('PerfMgr on the in-process fabric', () => {
  it('reads every linked port, names the port whose error counters rose, and keeps totals past a clear', async () => {
    const r = await bringUp();
    const first = await drive(r.clock, r.pm.sweep(r.snap.fabric));
    const linked = r.snap.fabric.nodes.reduce((a, n) => a + n.ports.filter((p) => p && p.num > 0 && p.peer).length, 0);
    expect(first).toMatchObject({ ports: linked, failed: 0 });
    // the SM's sweep crossed links: the leaf port that faces a host transmitted to it
    const host = r.snap.fabric.nodes.find((n) => n.type !== NodeType.Switch)!;
    const peer = host.ports[1]!.peer!;
    const leaf = r.snap.fabric.nodes[peer.node]!;
    const facing = r.pm.port(leaf.guid, peer.port)!;
    expect(facing.counters.totals.xmitPkts).toBeGreaterThan(0n);
    expect(facing.counters.totals.xmitData).toBe(facing.counters.totals.xmitPkts * 72n);
    // the metrics: one "port" in the name, data in bytes (4-octet words × 4), the unit in HELP
    const text = renderMetrics(r.subnet, r.rpc, r.pm);
    const g = `0x${leaf.guid.toString(16).padStart(16, '0')}`;
    const sample = (name: string): number => Number(new RegExp(`^${name}\\{node_guid="${g}",port_num="${peer.port}"[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(text).not.toMatch(/ibsm_port_port_/);
    expect(sample('ibsm_port_xmit_data_bytes_total')).toBe(Number(facing.counters.totals.xmitData) * 4);
    expect(sample('ibsm_port_xmit_packets_total')).toBe(Number(facing.counters.totals.xmitPkts));
    expect(text).toMatch(/^# HELP ibsm_port_xmit_data_bytes_total .*bytes \(the PMA counts 4-octet words: × 4\)/m);

    r.sim.addPortCounts(leaf.guid, peer.port, { symbolErrors: 5, linkErrorRecovery: 1 });
    const before = r.sink.lines.length;
    const second = await drive(r.clock, r.pm.sweep(r.snap.fabric));
    expect(second.errorPorts).toBe(1);
    const line = withCode(r.sink.lines.slice(before), 'IBSM-7005')[0];
    expect(line).toContain(`node=${/\s/.test(leaf.desc) ? JSON.stringify(leaf.desc) : leaf.desc}`);
    expect(line).toContain(`guid=0x${leaf.guid.toString(16).padStart(16, '0')}`);
    expect(line).toContain(`port=${peer.port}`);
    expect(line).toContain('symbolErrors+5');
    expect(line).toContain('linkErrorRecovery+1');
    expect(line).toContain(`lid=${leaf.ports[0]!.lid}`);

    // past half its 16-bit range the PerfMgr clears SymbolErrorCounter; the total keeps counting
    r.sim.addPortCounts(leaf.guid, peer.port, { symbolErrors: 40_000 });
    const third = await drive(r.clock, r.pm.sweep(r.snap.fabric));
    expect(third.clears).toBe(1);
    r.sim.addPortCounts(leaf.guid, peer.port, { symbolErrors: 40_000 });
    await drive(r.clock, r.pm.sweep(r.snap.fabric));
    expect(r.pm.port(leaf.guid, peer.port)!.counters.totals.symbolErrors).toBe(80_005n);
  });

  it('notices a clear by another client and does not lose the total', async () => {
    const r = await bringUp();
    const [host, otherHost] = r.snap.fabric.nodes.filter((n) => n.type !== NodeType.Switch);
    const portNum = host!.ports.find((p) => p && p.num > 0 && p.peer)!.num;
    r.sim.addPortCounts(host!.guid, portNum, { rcvErrors: 9 });
    await drive(r.clock, r.pm.sweep(r.snap.fabric));
    expect(r.pm.port(host!.guid, portNum)!.counters.totals.rcvErrors).toBe(9n);
    // someone else (perfquery -R) clears every counter of that port
    const other = r.sim.attach(otherHost!.guid);
    other.register(MgmtClass.Perf, PMA_CLASS_VERSION);
    const orpc = new MadRpc(other, r.clock, { timeoutMs: 50 });
    const resp = await drive(
      r.clock,
      orpc.request(pmaRequest(Method.Set, PmaAttr.PortCounters, PortCounters.encode({ portSelect: portNum, counterSelect: 0xffff, counterSelect2: 0x03 })), { lid: host!.ports[portNum]!.lid!, qpn: 1, qkey: GSI_QKEY }),
    );
    expect(PortCounters.decode(pmaData(resp.data), 0).rcvErrors).toBe(0);
    r.sim.addPortCounts(host!.guid, portNum, { rcvErrors: 2 });
    const s = await drive(r.clock, r.pm.sweep(r.snap.fabric));
    expect(s.clearedByOthers).toBeGreaterThan(0);
    expect(r.pm.port(host!.guid, portNum)!.counters.totals.rcvErrors).toBe(11n);
  });
});
