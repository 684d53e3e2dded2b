/** planPortInfo builds each PortInfo Set in place (locals, then the reported PortInfo's bytes
 * patched through the view). Witness: the planner as it was (a decoded copy of the reported
 * PortInfo per port, changed and encoded whole; planActivation likewise), kept below verbatim as the reference; on a
 * fabric brought up by the SM, with every port's reported PortInfo perturbed at random
 * (fast-check: states, LIDs, MTUs, VLs, M_Keys, enforcement, HOQ, ClientReregister, ...) and random
 * settings (M_Key or none, QoS, reregister, LMC, SM LID), both give the same writes, byte for byte. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { DEFAULT_GID_PREFIX, MgmtClass, Method, NodeType, PortState, SmpAttr } from '../src/wire/mad.js';
import { PortCap, PortInfo } from '../src/wire/sma.js';
import { portInfoMod } from '../src/wire/modifiers.js';
import { SubnetManager } from '../src/sm/sm.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { drive } from './helpers/drive.js';
import { enforces, planActivation, planPortInfo, type PortSettings } from '../src/sm/plan-ports.js';
import type { SmpWrite } from '../src/sm/programmed.js';
import type { DiscoveredNode, DiscoveryResult, Snapshot } from '../src/model/snapshot.js';
import type { FabricNode } from '../src/model/fabric.js';
import { portInfoValue } from '../src/model/port-info.js';

const HOQ_LIFE_SWITCH = 0x12;
const HOQ_LIFE_LEAF = 0x10;
const VL_STALL_COUNT = 7;
function asSet(cur: PortInfo): PortInfo {
  return { ...portInfoValue(cur), portPhysicalState: 0, linkDownDefaultState: 0, linkWidthEnabled: 0, linkSpeedEnabled: 0, linkSpeedExtEnabled: 0 };
}
function portPath(n: FabricNode, d: DiscoveredNode, pn: number): readonly number[] | undefined {
  return n.type === NodeType.Switch ? d.path : d.portPaths[pn];
}

// The planner before it built Sets in place (src/sm/plan-ports.ts as of de1900e).
function referencePlan(disc: DiscoveryResult, s: PortSettings): SmpWrite[] {
  const { fabric, nodes } = disc;
  const out: SmpWrite[] = [];
  fabric.nodes.forEach((n, ni) => {
    const d = nodes[ni]!;
    const sw = n.type === NodeType.Switch;
    n.ports.forEach((p, pn) => {
      if (!p) return;
      const cur = d.portInfo[pn];
      const path = portPath(n, d, pn);
      if (!cur || !path) return;
      const isEnd = !sw || pn === 0;
      if (pn !== 0 && !p.peer) return;
      if (!sw && !p.peer) return;
      const want = asSet(cur);
      want.portState = cur.portState === PortState.Init && pn !== 0 ? PortState.Armed : PortState.NoChange;
      if (isEnd) {
        want.gidPrefix = s.gidPrefix ?? DEFAULT_GID_PREFIX;
        want.lid = p.lid ?? 0;
        want.lmc = sw ? 0 : s.lmc;
        want.masterSmLid = s.smLid;
        want.subnetTimeout = s.subnetTimeout ?? 18;
        if (s.mkey !== undefined) {
          want.mkey = s.mkey;
          want.mkeyProtectBits = s.mkeyProtectBits ?? 0;
          want.mkeyLeasePeriod = s.mkeyLeasePeriod ?? 0;
        } else {
          // No M_Key of its own: the SM never raises protection. A Set of it only lands where the
          // port's key is 0 or read with protection off, so echoing protect bits from a read would
          // protect nothing from this SM, and from a corrupt read would lock the port out of it.
          want.mkeyProtectBits = 0;
        }
        want.clientReregister = s.reregister && !sw && cur.capabilityMask & PortCap.IsClientReregistrationSupported ? 1 : 0;
      }
      if (p.peer && pn !== 0) {
        const peerInfo = nodes[p.peer.node]!.portInfo[p.peer.port];
        if (peerInfo) {
          want.neighborMtu = Math.min(cur.mtuCap, peerInfo.mtuCap) || cur.neighborMtu;
          const vls = Math.min(cur.vlCap, peerInfo.vlCap, s.maxOpVls ?? 5);
          want.operationalVls = vls || cur.operationalVls;
        }
      }
      // Head-of-queue lifetime and VL stall count on switch ports, OpenSM's defaults: packets
      // toward an end port may wait less (leaf 0x10) than toward another switch (0x12).
      if (sw && pn !== 0 && p.peer) {
        want.hoqLife = fabric.nodes[p.peer.node]!.type === NodeType.Switch ? (s.hoqLife ?? HOQ_LIFE_SWITCH) : (s.leafHoqLife ?? HOQ_LIFE_LEAF);
        want.vlStallCount = VL_STALL_COUNT;
      }
      if (s.qosVl && (pn === 0 || p.peer)) want.vlHighLimit = s.qosVl.highLimit;
      // Never echo a NeighborMTU above what the port can do (the SMA would reject the whole Set).
      if (cur.mtuCap) want.neighborMtu = Math.min(want.neighborMtu || cur.mtuCap, cur.mtuCap);
      if (sw && pn !== 0) {
        const enforce = enforces(disc, n, d, p) ? 1 : 0;
        want.partitionEnforcementInbound = enforce;
        want.partitionEnforcementOutbound = enforce;
      }
      const needs =
        want.clientReregister === 1 ||
        want.partitionEnforcementInbound !== cur.partitionEnforcementInbound ||
        want.partitionEnforcementOutbound !== cur.partitionEnforcementOutbound ||
        want.portState !== PortState.NoChange ||
        (isEnd && (cur.lid !== want.lid || cur.lmc !== want.lmc || cur.masterSmLid !== want.masterSmLid || cur.subnetTimeout !== want.subnetTimeout)) ||
        (isEnd && s.mkey !== undefined && (cur.mkey !== want.mkey || cur.mkeyProtectBits !== want.mkeyProtectBits || cur.mkeyLeasePeriod !== want.mkeyLeasePeriod)) ||
        want.neighborMtu !== cur.neighborMtu ||
        want.gidPrefix !== cur.gidPrefix ||
        want.hoqLife !== cur.hoqLife ||
        want.vlStallCount !== cur.vlStallCount ||
        want.vlHighLimit !== cur.vlHighLimit ||
        want.operationalVls !== cur.operationalVls;
      if (!needs) return;
      out.push({ path, attr: SmpAttr.PortInfo, mod: portInfoMod(pn), data: PortInfo.encode(want), effect: { kind: 'portInfo', node: ni, port: pn } });
    });
  });
  return out;
}


function referenceActivation(disc: DiscoveryResult): SmpWrite[] {
  const { fabric, nodes } = disc;
  const out: SmpWrite[] = [];
  fabric.nodes.forEach((n, ni) => {
    const d = nodes[ni]!;
    n.ports.forEach((p, pn) => {
      if (!p?.peer || pn === 0) return;
      const cur = d.portInfo[pn];
      const path = portPath(n, d, pn);
      if (!cur || !path || cur.portState !== PortState.Armed) return;
      const peer = nodes[p.peer.node]!.portInfo[p.peer.port];
      if (peer && peer.portState < PortState.Armed) return;
      const want = { ...asSet(cur), portState: PortState.Active };
      out.push({ path, attr: SmpAttr.PortInfo, mod: portInfoMod(pn), data: PortInfo.encode(want), effect: { kind: 'portInfo', node: ni, port: pn } });
    });
  });
  return out;
}

async function upSnapshot(): Promise<Snapshot> {
  const clock = new VirtualClock();
  const sim = new SimFabric(loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=4'), { clock, seed: 3 });
  const ep = sim.attach(0);
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
  ep.register(MgmtClass.SubnDirected, 1);
  const rpc = new MadRpc(ep, clock, { timeoutMs: 50, window: 64 });
  const sm = new SubnetManager({ smp: smpClientOf(rpc), clock, log: new Logger(new MemorySink(), 'warn'), routing: ['minhop'], lmc: 0, sweepIntervalMs: 0 });
  await drive(clock, sm.start());
  return sm.current!;
}

const bytes = (ws: SmpWrite[]) => ws.map((w) => ({ path: [...w.path], attr: w.attr, mod: w.mod, effect: w.effect, mkey: w.mkey, data: [...w.data] }));

describe('planPortInfo and planActivation in place', () => {
  it('gives the writes of the reference planner, byte for byte, on perturbed PortInfos and settings', async () => {
    const snap = await upSnapshot();
    const base = snap.discovery;
    const ports: Array<[number, number]> = [];
    base.nodes.forEach((d, ni) => d.portInfo.forEach((pi, pn) => pi && ports.push([ni, pn])));
    const perturb = fc.record({
      portState: fc.constantFrom(PortState.Down, PortState.Init, PortState.Armed, PortState.Active),
      lid: fc.integer({ min: 0, max: 40 }),
      lmc: fc.integer({ min: 0, max: 3 }),
      masterSmLid: fc.integer({ min: 0, max: 3 }),
      subnetTimeout: fc.constantFrom(0, 18, 20),
      neighborMtu: fc.integer({ min: 0, max: 5 }),
      mtuCap: fc.integer({ min: 0, max: 5 }),
      vlCap: fc.integer({ min: 0, max: 4 }),
      operationalVls: fc.integer({ min: 0, max: 4 }),
      hoqLife: fc.constantFrom(0x10, 0x12, 0x1f),
      vlStallCount: fc.constantFrom(0, 7),
      vlHighLimit: fc.constantFrom(0, 4),
      mkey: fc.constantFrom(0n, 5n, 0x1234n),
      mkeyProtectBits: fc.integer({ min: 0, max: 3 }),
      mkeyLeasePeriod: fc.constantFrom(0, 60),
      clientReregister: fc.integer({ min: 0, max: 1 }),
      reregCap: fc.boolean(),
      peIn: fc.integer({ min: 0, max: 1 }),
      peOut: fc.integer({ min: 0, max: 1 }),
      gidPrefix: fc.constantFrom(DEFAULT_GID_PREFIX, 0xfe80000000000001n),
      linkWidthEnabled: fc.integer({ min: 0, max: 3 }),
      keep: fc.boolean(),
    });
    const settings = fc.record({
      lmc: fc.integer({ min: 0, max: 2 }),
      smLid: fc.integer({ min: 1, max: 3 }),
      mkey: fc.option(fc.constantFrom(5n, 0x99n), { nil: undefined }),
      mkeyProtectBits: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
      mkeyLeasePeriod: fc.option(fc.constantFrom(0, 60), { nil: undefined }),
      maxOpVls: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
      qosVl: fc.option(fc.record({ highLimit: fc.integer({ min: 0, max: 4 }) }), { nil: undefined }),
      reregister: fc.boolean(),
      subnetTimeout: fc.option(fc.constantFrom(18, 19), { nil: undefined }),
      hoqLife: fc.option(fc.constantFrom(0x12, 0x14), { nil: undefined }),
    });
    let sets = 0;
    let activations = 0;
    fc.assert(
      fc.property(fc.array(perturb, { minLength: ports.length, maxLength: ports.length }), settings, (ps, st) => {
        const disc: DiscoveryResult = { ...base, nodes: base.nodes.map((d) => ({ ...d, portInfo: [...d.portInfo] })) };
        ports.forEach(([ni, pn], i) => {
          const q = ps[i]!;
          if (q.keep) return;
          const cur = disc.nodes[ni]!.portInfo[pn]!;
          disc.nodes[ni]!.portInfo[pn] = {
            ...portInfoValue(cur), // a swept PortInfo is a view (model/port-info.ts): its fields are not own properties
            portState: q.portState,
            lid: q.lid,
            lmc: q.lmc,
            masterSmLid: q.masterSmLid,
            subnetTimeout: q.subnetTimeout,
            neighborMtu: q.neighborMtu,
            mtuCap: q.mtuCap,
            vlCap: q.vlCap,
            operationalVls: q.operationalVls,
            hoqLife: q.hoqLife,
            vlStallCount: q.vlStallCount,
            vlHighLimit: q.vlHighLimit,
            mkey: q.mkey,
            mkeyProtectBits: q.mkeyProtectBits,
            mkeyLeasePeriod: q.mkeyLeasePeriod,
            clientReregister: q.clientReregister,
            capabilityMask: q.reregCap ? cur.capabilityMask | PortCap.IsClientReregistrationSupported : cur.capabilityMask & ~PortCap.IsClientReregistrationSupported,
            partitionEnforcementInbound: q.peIn,
            partitionEnforcementOutbound: q.peOut,
            gidPrefix: q.gidPrefix,
            linkWidthEnabled: q.linkWidthEnabled,
          };
        });
        const s = st as PortSettings;
        const want = referencePlan(disc, s);
        const got = planPortInfo(disc, s);
        sets += got.length;
        expect(bytes(got)).toEqual(bytes(want));
        const act = planActivation(disc);
        activations += act.length;
        expect(bytes(act)).toEqual(bytes(referenceActivation(disc)));
      }),
      { numRuns: 300 },
    );
    expect(sets).toBeGreaterThan(0);
    expect(activations).toBeGreaterThan(0);
  });
});
