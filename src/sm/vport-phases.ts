/**
 * The vport steps of the sweeps (sm/pipeline.ts phases, writes through the one apply step via
 * sm/sweep-writes.ts), over the state of sm/vport-mgr.ts:
 *
 * - heavy sweep: discover (every capable port's vports read) … apply (virtualization enabled,
 *   VPortStateChange cleared, each vport's P_Key table from the partition plan, every vport ACTIVE
 *   with its LID; its LFT entries went out with the routes' LFT blocks);
 * - after a light sweep that found nothing else (`vportPass`): discover (one VirtualizationInfo
 *   per capable port; VPortState and the new vports' VPortInfo only where VPortStateChange is
 *   set) → plan (the new vports' LIDs, their LFT entries on every switch: only the blocks holding
 *   them differ from what is programmed) → apply (SwitchInfo where LinearFDBTop grows, those LFT
 *   blocks, the vports' P_Keys and VPortInfo, VPortStateChange cleared) → verify (the cleared
 *   ports' VPortState read again: a vport that changed between the read and the clearing marks its
 *   port for the next pass). No heavy sweep, and no other LFT entry written. A fabric without
 *   virtualization: no SMP.
 */
import { PortState } from '../wire/mad.js';
import { VirtualizationInfo, VPortAttr, VPortInfo, VPortPKeyTable, vportBlockMod, vportIndexMod } from '../wire/vport.js';
import { PKEY_BLOCK_SIZE } from '../wire/sma.js';
import type { Snapshot } from '../model/snapshot.js';
import type { Logger } from '../util/log.js';
import { runPhases, type Phase, type SweepRun } from './pipeline.js';
import type { SmpWrite } from './programmed.js';
import type { SweepWrites } from './sweep-writes.js';
import { planLfts } from './plan-tables.js';
import type { Programmed } from './programmed.js';
import type { VirtDelta, VirtPortRec, VPortManager, VPortRec } from './vport-mgr.js';
import type { SmpClient } from './smp-client.js';

/** The writes that enable virtualization and clear VPortStateChange where needed, and bring every
 * pending vport ACTIVE with its LID. */
export function planVportWrites(mgr: VPortManager, pkeysOf: PkeysOf, ports?: ReadonlySet<VirtPortRec>, reregister = false): Array<{ w: SmpWrite; v?: VPortRec; p: VirtPortRec; sig?: string }> {
  const out: Array<{ w: SmpWrite; v?: VPortRec; p: VirtPortRec; sig?: string }> = [];
  // each vport's P_Key table: its partitions (partitions.conf names vport GUIDs like port GUIDs)
  for (const [p, v] of mgr.all()) {
    if (ports && !ports.has(p)) continue;
    const pkeys = pkeysOf(v.guid);
    const sig = pkeys.join(',');
    if (v.pkeySig === sig) continue;
    const blocks = Math.max(1, Math.ceil(pkeys.length / PKEY_BLOCK_SIZE));
    for (let b = 0; b < blocks; b++) {
      const data = VPortPKeyTable.encode({ pkeys: Array.from({ length: PKEY_BLOCK_SIZE }, (_, i) => pkeys[b * PKEY_BLOCK_SIZE + i] ?? 0) });
      out.push({ p, v, sig, w: { path: p.path, attr: VPortAttr.VPortPKeyTable, mod: vportBlockMod(v.index, b), data, effect: { kind: 'vport', portGuid: p.portGuid, index: v.index } } });
    }
  }
  for (const p of mgr.ports.values()) {
    if (ports && !ports.has(p)) continue;
    if (!p.enabled || p.stateChange) {
      const data = VirtualizationInfo.encode({ virtualizationEnable: 1, vportStateChange: p.stateChange ? 1 : 0 });
      out.push({ p, w: { path: p.path, attr: VPortAttr.VirtualizationInfo, mod: 0, data, effect: { kind: 'vport', portGuid: p.portGuid, index: -1 } } });
    }
  }
  // with `reregister` (a new master whose SA holds no registrations, as PortInfo:ClientReregister
  // on the physical ports): every vport, its clients asked to re-register; else the pending ones
  const pendingNow = mgr.pending();
  const isPending = new Set(pendingNow.map(([, v]) => v));
  const pending = reregister ? [...mgr.all()].filter(([, v]) => v.index !== 0 || isPending.has(v)) : pendingNow;
  for (const [p, v] of pending) {
    if (ports && !ports.has(p)) continue;
    const data = VPortInfo.encode({ vportState: PortState.Active, clientReregister: reregister && v.index !== 0 ? 1 : 0, vportLid: v.lidRequired ? v.lid : 0, lidRequired: v.lidRequired ? 1 : 0, lidByVPortIndex: v.lidByVPortIndex, portGuid: v.guid });
    out.push({ p, v, w: { path: p.path, attr: VPortAttr.VPortInfo, mod: vportIndexMod(v.index), data, effect: { kind: 'vport', portGuid: p.portGuid, index: v.index } } });
  }
  return out;
}

/** A vport's P_Key table by its GUID (the partition plan's, sm/vport-phases.ts callers). */
export type PkeysOf = (guid: bigint) => number[];

/** Send the vport writes through the sweep's apply step; what was acknowledged is what the manager
 * now believes. Returns the vports activated; `cleared` collects the ports whose VPortStateChange
 * was cleared (the manager's `recheck` reads them again: a change in between lost its flag). */
export async function applyVportWrites(writes: SweepWrites, planned: ReturnType<typeof planVportWrites>, cleared?: Set<VirtPortRec>): Promise<number> {
  if (!planned.length) return 0;
  const res = await writes.run(planned.map((x) => x.w));
  const failed = new Set(res.failed.map((f) => f.write));
  const pkeyFailed = new Set(planned.filter((x) => x.sig !== undefined && failed.has(x.w)).map((x) => x.v));
  let activated = 0;
  for (const { w, v, p, sig } of planned) {
    if (failed.has(w)) continue;
    if (sig !== undefined) {
      v!.pkeySig = pkeyFailed.has(v) ? undefined : sig;
    } else if (!v) {
      p.enabled = true;
      if (p.stateChange) cleared?.add(p);
      p.stateChange = false;
    } else {
      if (v.state !== PortState.Active || (v.lidRequired && v.wireLid !== v.lid)) activated++;
      v.state = PortState.Active;
      v.wireLid = v.lidRequired ? v.lid : 0;
    }
  }
  return activated;
}

/** The heavy sweep's vport phases (sm/sweep.ts puts them in its table). */
export function heavyVportPhases(mgr: VPortManager, log: Logger, pkeysOf: PkeysOf): { discover: Phase<SweepRun>; apply: Phase<SweepRun> } {
  return {
    discover: { kind: 'discover', name: 'vports', run: (r) => mgr.discover(r.view!.disc) },
    apply: {
      kind: 'apply',
      name: 'vports',
      run: async (r) => {
        if (!mgr.ports.size) return;
        const cleared = new Set<VirtPortRec>();
        const reregister = r.go?.reregister ?? false;
        const activated = await applyVportWrites(r.writes!, planVportWrites(mgr, pkeysOf, undefined, reregister), cleared);
        const recheck = await mgr.recheck(cleared);
        const c = mgr.counts();
        log.info('vports', { ports: c.ports, vports: c.vports, active: c.active, withLid: c.withLid, activated, recheck, ...(reregister ? { clientReregister: c.vports } : {}) });
      },
    },
  };
}

/** One vport pass after a light sweep. */
interface VportRun {
  snap: Snapshot;
  delta: Map<VirtPortRec, VirtDelta>;
  added: VPortRec[];
  lftWrites?: { switchInfo: SmpWrite[]; lft: SmpWrite[] };
  writes?: SweepWrites;
  cleared: Set<VirtPortRec>;
  recheck: number;
  activated: number;
  lftBlocks: number;
}

export interface VportPassDeps {
  mgr: VPortManager;
  smp: SmpClient;
  log: Logger;
  lmc: number;
  programmed: Programmed;
  writesFor: (snap: Snapshot) => SweepWrites;
  pkeysOf: PkeysOf;
  /** The guid2lid map changed (new vports' LIDs, gone vports' released). */
  save: (map: ReadonlyMap<bigint, { base: number; lmc: number }>) => void;
}

/** The light sweep's vport pass: the SMPs it sent. */
export async function vportPass(d: VportPassDeps, snap: Snapshot): Promise<{ smps: number; activated: number; added: number; removed: number; lftBlocks: number }> {
  const s0 = d.smp.sent;
  if (!d.mgr.ports.size) return { smps: 0, activated: 0, added: 0, removed: 0, lftBlocks: 0 };
  const r: VportRun = { snap, delta: new Map(), added: [], cleared: new Set(), recheck: 0, activated: 0, lftBlocks: 0 };
  const phases: Phase<VportRun>[] = [
    {
      kind: 'discover',
      name: 'VPortStateChange polled',
      run: async (run) => {
        await Promise.all(
          [...d.mgr.ports.values()].map(async (p) => {
            try {
              const delta = await d.mgr.readPort(p, false);
              if (p.stateChange || delta.added.length || delta.removed.length) run.delta.set(p, delta);
            } catch (e) {
              d.log.warn('vports not polled', { guid: '0x' + p.portGuid.toString(16), port: p.port, error: (e as Error).message });
            }
          }),
        );
        for (const dl of run.delta.values()) run.added.push(...dl.added);
        return run.delta.size > 0;
      },
    },
    {
      kind: 'plan',
      name: 'new vports: LIDs and LFT entries',
      run: (run) => {
        const fabric = run.snap.discovery.fabric;
        const top = d.mgr.assignNew(run.added, fabric, d.lmc);
        d.mgr.resolveLids(fabric);
        const removed = [...run.delta.values()].some((x) => x.removed.length > 0);
        if (top || removed) d.save(d.mgr.lidMap);
        if (!top) return;
        const maxLid = d.mgr.extendRoutes(run.snap.routing, fabric, Math.max(run.snap.maxLid, top), new Set(run.added));
        (run.snap as { maxLid: number }).maxLid = maxLid;
        run.lftWrites = planLfts(run.snap.discovery, run.snap.routing, maxLid, d.programmed);
      },
    },
    {
      kind: 'apply',
      name: 'LFT entries, VPortInfo, VPortStateChange cleared',
      run: async (run) => {
        run.writes = d.writesFor(run.snap);
        if (run.lftWrites) {
          await run.writes.run(run.lftWrites.switchInfo);
          run.lftBlocks = await run.writes.ok(run.lftWrites.lft);
        }
        run.activated = await applyVportWrites(run.writes, planVportWrites(d.mgr, d.pkeysOf, new Set(run.delta.keys())), run.cleared);
      },
    },
    {
      kind: 'verify',
      name: 'vports re-read after VPortStateChange was cleared; pass logged',
      run: async (run) => {
        run.writes?.finish();
        // a vport created between this pass's VPortState read and the clearing lost its flag:
        // read the cleared ports again so the next pass (not the next heavy sweep) takes it
        run.recheck = await d.mgr.recheck(run.cleared);
        const removed = [...run.delta.values()].reduce((k, x) => k + x.removed.length, 0);
        d.log.info('vports changed: handled without a heavy sweep', { ports: run.delta.size, added: run.added.length, removed, activated: run.activated, lftBlocks: run.lftBlocks, recheck: run.recheck, smps: d.smp.sent - s0 });
      },
    },
  ];
  await runPhases(phases, r);
  const removed = [...r.delta.values()].reduce((k, x) => k + x.removed.length, 0);
  return { smps: d.smp.sent - s0, activated: r.activated, added: r.added.length, removed, lftBlocks: r.lftBlocks };
}
