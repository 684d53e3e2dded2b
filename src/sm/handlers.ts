/** The SM's unsolicited-MAD handlers: traps (repress, then re-sweep on link/port changes) and
 * SMInfo Get and Set from other SMs. A malformed MAD is answered where it can be and logged, never thrown. */
import { MadHeaderView, MgmtClass, Method, SmpAttr, SMP_DATA_OFFSET, MAD_SIZE } from '../wire/mad.js';
import { readMkey, smpResponse, trapRepress } from '../wire/builders.js';
import { PortCap, SMInfo } from '../wire/sma.js';
import { decodeNotice, TrapNumber, type NoticeSmp } from '../wire/notice.js';
import type { MadRpc } from '../rpc/madrpc.js';
import type { ReceivedMad } from '../transport/types.js';
import type { Logger } from '../util/log.js';
import type { SubnetManager } from './sm.js';
import { snapshotPorts } from '../model/snapshot.js';
import { TrapDamper } from './trap-damper.js';
import type { TimerHandle } from '../util/clock.js';

/** The longest an SMInfo Get waits for a handover decision (below OpenSM's 200 ms SMP timeout). */
const SMINFO_HOLD_MS = 150;

/** Traps that mean the topology or a port's state changed. */
const RESWEEP_TRAPS = new Set([128, 129, 130, 131, 144, 145]);

export interface SmHandlerOptions {
  portGuid: bigint;
  log: Logger;
  /** The M_Key this SM programs: a requester presenting it is trusted with the SM_Key. */
  mkey?: bigint;
  /** Every well-formed trap, e.g. for the SA to forward to subscribers (not those of a damped
   * trap storm). */
  onNotice?: (n: NoticeSmp) => void;
  /** Trap storm damping (sm/trap-damper.ts). */
  damping?: { windowMs?: number; limit?: number };
}

export function installSmHandlers(rpc: MadRpc, sm: SubnetManager, o: SmHandlerOptions): () => void {
  const damper = new TrapDamper(o.damping);
  /** Who is behind a LID, as the last snapshot knows it. */
  const whoIs = (lid: number): Record<string, unknown> => {
    const snap = sm.current;
    const ep = snap ? snapshotPorts(snap).byLid(lid) : undefined;
    const n = ep && snap!.fabric.nodes[ep.node];
    return n ? { node: n.desc, guid: ep!.guid, port: ep!.port, lid } : { lid };
  };
  const offTrap = rpc.onUnsolicited(
    MgmtClass.SubnLid,
    (m: ReceivedMad) => {
      let trap = -1;
      let notice: NoticeSmp | undefined;
      let decodeError: unknown;
      let refusedRepress = false;
      let d0: ReturnType<typeof decodeNotice> | undefined;
      try {
        const d = (d0 = decodeNotice(m.data, SMP_DATA_OFFSET, 'smp'));
        notice = d.notice;
        trap = notice.isGeneric ? notice.trapNumber : -1;
        // A bad-M_Key trap about a TrapRepress: the port refuses our repress (its M_Key is not
        // ours), so another repress would only be refused and trapped again, 1 µs later, forever.
        refusedRepress = d.details?.trap === TrapNumber.BadMKey && d.details.value.method === Method.TrapRepress;
      } catch (e) {
        decodeError = e;
      }
      // Every other trap is repressed (IBA 13.4.9), a storm's included: the SMA stops repeating it.
      if (!refusedRepress) rpc.respond(m, trapRepress(m.data));
      const verdict = damper.admit(m.addr.lid, rpc.clock.now());
      const remote = o.log.from(m.addr.lid);
      if (verdict === 'storm') remote.warn('trap storm: traps from this port damped (repressed, not logged, no sweep) until it calms down', { ...whoIs(m.addr.lid), limit: damper.limit, windowMs: damper.windowMs });
      if (verdict !== 'pass') return;
      if (!notice) {
        remote.warn('malformed trap ignored', { from: m.addr.lid, error: (decodeError as Error).message });
        return;
      }
      if (refusedRepress) remote.warn('TrapRepress refused for a bad M_Key: not repressed again (the port repeats its trap on its own schedule)', whoIs(m.addr.lid));
      remote.info('trap received', { trap, from: m.addr.lid });
      o.onNotice?.(notice);
      // Trap 144 may announce a new SM (its port's IsSM bit): a full sweep reads every SM's SMInfo
      // at once, so a better SM still discovering is handed the subnet before it stands by.
      const reason = `trap ${trap} from LID ${m.addr.lid}`;
      if (trap === 144 && d0?.details?.trap === 144 && d0.details.value.capabilityMask & PortCap.IsSM) void sm.smAnnounced(m.addr.lid, reason);
      // A quarantined link's bounce counts for the flapping policy (health hook: flap), a change a
      // local sweep already read (the other end's trap) is settled: neither sweeps (sm/sm.ts trap128)
      else if (trap === 128 && sm.trap128(m.addr.lid, reason)) return;
      else if (RESWEEP_TRAPS.has(trap)) sm.requestHeavySweep(reason, trap === 144);
    },
    { method: Method.Trap },
  );
  // SMInfo carries the SM_Key only to a requester that presents this SM's M_Key (OpenSM: the
  // M_Key check passes); without an M_Key every requester passes.
  const trusted = (m: ReceivedMad): boolean => o.mkey === undefined || o.mkey === 0n || readMkey(m.data) === o.mkey;
  const answerSmInfo = (m: ReceivedMad): void => {
    if (m.data.length < MAD_SIZE) return; // an SMP is 256 bytes; the response is built over the request
    const answer = (): void => {
      const resp = smpResponse(m.data, 0); // GetResp; a DR response also gets the D bit and keeps its path
      SMInfo.encode(sm.smInfo(o.portGuid, trusted(m)), resp, SMP_DATA_OFFSET);
      try {
        rpc.respond(m, resp);
      } catch (e) {
        o.log.from(m.addr.lid).debug('SMInfo answer not sent', { to: m.addr.lid, error: (e as Error).message });
      }
    };
    // Deciding about an SM a trap 144 just announced: answer with the decision (sm.ts whenDecided),
    // within the requester's timeout (OpenSM's is 200 ms).
    const deciding = sm.whenDecided();
    if (!deciding) return answer();
    let timer: TimerHandle | undefined;
    const bound = new Promise<void>((r) => (timer = rpc.clock.setTimeout(r, SMINFO_HOLD_MS)));
    void Promise.race([deciding, bound]).then(() => {
      rpc.clock.clearTimeout(timer!);
      answer();
    });
  };
  /** SubnSet(SMInfo) from another SM: HANDOVER, ACKNOWLEDGE, DISABLE, STANDBY, DISCOVER. */
  const setSmInfo = (m: ReceivedMad): void => {
    if (m.data.length < MAD_SIZE) return; // an SMP is 256 bytes; the response is built over the request
    let payload: SMInfo;
    try {
      payload = SMInfo.decode(m.data, SMP_DATA_OFFSET);
    } catch (e) {
      o.log.from(m.addr.lid).warn('malformed SMInfo Set ignored', { from: m.addr.lid, error: (e as Error).message });
      return;
    }
    const h = MadHeaderView.over(m.data);
    const control = h.attrMod;
    const dr = h.mgmtClass === MgmtClass.SubnDirected;
    const status = sm.smInfoSet(control, payload, dr ? {} : { lid: m.addr.lid });
    const resp = smpResponse(m.data, status);
    SMInfo.encode(sm.smInfo(o.portGuid, trusted(m)), resp, SMP_DATA_OFFSET);
    rpc.respond(m, resp);
  };
  const offs = [MgmtClass.SubnLid, MgmtClass.SubnDirected].flatMap((cls) => [
    rpc.onUnsolicited(cls, answerSmInfo, { method: Method.Get, attrId: SmpAttr.SMInfo }),
    rpc.onUnsolicited(cls, setSmInfo, { method: Method.Set, attrId: SmpAttr.SMInfo }),
  ]);
  return () => {
    offTrap();
    for (const off of offs) off();
  };
}
