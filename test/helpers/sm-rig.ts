/** One SM on the in-process fabric on a virtual clock, and the fabric itself as the witness of
 * what it programmed (port states, LIDs, the LFTs the simulated switches hold). */
import { expect } from 'vitest';
import { VirtualClock } from '../../src/util/clock.js';
import { SimFabric, type SimFabricOptions } from '../../src/sim/fabric.js';
import { MadRpc, type MadRpcOptions } from '../../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType, PortState } from '../../src/wire/mad.js';
import { SubnetManager, type SmOptions } from '../../src/sm/sm.js';
import { smpClientOf, type SmpClient } from '../../src/sm/smp-client.js';
import { installSmHandlers } from '../../src/sm/handlers.js';
import { Logger, MemorySink, type Level } from '../../src/util/log.js';
import { verifyRoutes, type VerifyReport } from '../../src/routing/verify.js';
import type { Fabric } from '../../src/model/fabric.js';
import { withCode, type Codes } from './log-lines.js';

export interface SmRig {
  clock: VirtualClock;
  sim: SimFabric;
  rpc: MadRpc;
  sm: SubnetManager;
  sink: MemorySink;
  /** The log lines of a code (or of any of several), with `then` further on the line (helpers/log-lines.ts). */
  lines(code: Codes, then?: string): string[];
}

export function smRig(fabric: Fabric, o: { sm?: Partial<SmOptions>; rpc?: MadRpcOptions; sim?: Partial<SimFabricOptions>; attach?: number; wrapSmp?: (s: SmpClient) => SmpClient; traps?: boolean; level?: Level } = {}): SmRig {
  const clock = new VirtualClock();
  const sim = new SimFabric(fabric, { clock, seed: 7, ...o.sim });
  const ep = sim.attach(o.attach ?? 0);
  // traps: false: the SM's port serves no Trap, so every trap is lost (the SM learns only by sweeping)
  ep.register(MgmtClass.SubnLid, 1, { methods: o.traps === false ? [] : [Method.Trap] });
  ep.register(MgmtClass.SubnDirected, 1);
  const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 3, window: 64, perDestinationWindow: 8, ...o.rpc });
  const sink = new MemorySink();
  const sm = new SubnetManager({ smp: (o.wrapSmp ?? ((x) => x))(smpClientOf(rpc)), clock, log: new Logger(sink, o.level ?? 'debug'), routing: ['ftree', 'updn', 'minhop'], lmc: 0, sweepIntervalMs: 0, ...o.sm });
  installSmHandlers(rpc, sm, { portGuid: ep.local.portGuid, log: new Logger(sink, o.level ?? 'debug') });
  return { clock, sim, rpc, sm, sink, lines: (code, then) => withCode(sink.lines, code, then) };
}

/** The tables the simulated switches hold, verified over the SM's last snapshot (isolated links
 * cut from it): no failure, no loop. For tests where not every cabled port is ACTIVE. */
export function routesClean(r: Pick<SmRig, 'sm' | 'sim'>): void {
  const snap = r.sm.current!;
  const lfts = new Map<number, Uint8Array>();
  snap.fabric.nodes.forEach((n, i) => n.type === NodeType.Switch && lfts.set(i, r.sim.lft(n.guid)));
  const rep = verifyRoutes(snap.fabric, lfts);
  expect(rep.failures).toEqual([]);
  expect(rep.loopEntries).toBe(0);
}

/** The fabric as the SM's last snapshot says it is: every cabled port of every node in it
 * ACTIVE, LIDs and SM LID as programmed, LFTs complete and loop-free. Returns the route report. */
export function checkFabric(r: SmRig): VerifyReport {
  const snap = r.sm.current!;
  const lfts = new Map<number, Uint8Array>();
  snap.fabric.nodes.forEach((n, i) => {
    n.ports.forEach((p, pn) => {
      if (!p) return;
      const pi = r.sim.portInfo(n.guid, pn);
      if (n.type === NodeType.Switch && pn === 0) {
        expect(pi.lid, `switch ${n.desc} LID`).toBe(p.lid);
        return;
      }
      if (!p.peer) return;
      expect(pi.portState, `${n.desc} port ${pn} state`).toBe(PortState.Active);
      if (n.type !== NodeType.Switch) {
        expect(pi.lid).toBe(p.lid);
        expect(pi.masterSmLid).toBe(snap.smLid);
      }
    });
    if (n.type === NodeType.Switch) lfts.set(i, r.sim.lft(n.guid));
  });
  const rep = verifyRoutes(snap.fabric, lfts);
  expect(rep.failures).toEqual([]);
  expect(rep.ok).toBe(true);
  return rep;
}
