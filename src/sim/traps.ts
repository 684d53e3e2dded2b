/**
 * Trap origination of the simulated SMAs (IBA 14.2.5.1, 13.4.9): a Notice sent by LID to the
 * port's MasterSMLID, repeated every trap interval until the SM answers with TrapRepress or
 * `trapMaxSends` sends are done.
 */
import { MadHeaderView, MgmtClass, Method, NodeType, SMP_DATA_OFFSET, SmpAttr, SmpDrView } from '../wire/mad.js';
import { readMkey, smpLid } from '../wire/builders.js';
import { encodeNotice, NoticeType, type TrapDetails } from '../wire/notice.js';
import type { SimNode, SimPort } from './node.js';
import type { Packet } from './packet.js';
import type { SimEvent } from './scheduler.js';

/** What trap origination needs from the fabric. */
export interface TrapHost {
  readonly stats: { trapsSent: number };
  schedule(delayMs: number, fn: () => void): SimEvent;
  cancel(ev: SimEvent): void;
  /** Send a LID-routed SMP from (node, port) into the fabric. */
  injectLid(node: SimNode, port: number, pkt: Packet): void;
}

export interface TrapOptions {
  /** Resend interval (ms); default 4.096 µs x 2^SubnetTimeout, at least 1 ms. */
  trapRepeatMs?: number;
  /** Sends of one trap without a TrapRepress. */
  trapMaxSends: number;
}

interface PendingTrap {
  tid: bigint;
  sends: number;
  timer: SimEvent | undefined;
  mad: Uint8Array;
  from: SimPort;
}

export class TrapSender {
  private readonly traps = new Map<number, Map<bigint, PendingTrap>>();
  private nextTid = 1n;

  constructor(
    private readonly host: TrapHost,
    private readonly opts: TrapOptions,
  ) {}

  /** Send a trap from `node` through its management port `from`. */
  send(node: SimNode, from: SimPort, type: number, details: TrapDetails): void {
    const tid = this.nextTid++;
    const mad = smpLid({ method: Method.Trap, attrId: SmpAttr.Notice, tid });
    encodeNotice(
      {
        isGeneric: 1,
        type,
        producerType: node.type === NodeType.Switch ? 2 : node.type === NodeType.Router ? 3 : 1,
        issuerLid: from.info.lid,
        noticeToggle: 0,
        noticeCount: 0,
      },
      details,
      mad,
      SMP_DATA_OFFSET,
    );
    const pending: PendingTrap = { tid, sends: 0, timer: undefined, mad, from };
    let m = this.traps.get(node.idx);
    if (!m) this.traps.set(node.idx, (m = new Map()));
    m.set(tid, pending);
    this.transmit(node, pending);
  }

  /** Trap 256 (bad M_Key) for the SMP `req` that failed the check at `port`. */
  mkeyViolation(node: SimNode, port: SimPort, req: Uint8Array): void {
    const h = MadHeaderView.over(req);
    const v = h.mgmtClass === MgmtClass.SubnDirected ? SmpDrView.over(req) : undefined;
    const dr = v !== undefined;
    const hc = v ? v.hopCount : 0;
    const path: number[] = [];
    if (v) for (let i = 1; i <= Math.min(hc, 30); i++) path.push(v.at('returnPath', i));
    this.send(node, port, NoticeType.Security, {
      trap: 256,
      value: {
        lid: port.info.lid,
        drSlid: v ? v.drSlid : 0,
        method: h.method,
        attrId: h.attrId,
        attrMod: h.attrMod,
        mkey: readMkey(req),
        drNotice: dr ? 1 : 0,
        drPathTruncated: hc > 30 ? 1 : 0,
        drHopCount: Math.min(hc, 63),
        drReturnPath: path,
      },
    });
  }

  /** TrapRepress from the SM: stop repeating the trap. */
  repress(node: SimNode, tid: bigint): void {
    const m = this.traps.get(node.idx);
    const t = m?.get(tid);
    if (!t || !m) return;
    if (t.timer) this.host.cancel(t.timer);
    m.delete(tid);
  }

  /** Traps a node is still repeating (not yet repressed). */
  pending(node: SimNode): number {
    return this.traps.get(node.idx)?.size ?? 0;
  }

  private transmit(node: SimNode, t: PendingTrap): void {
    t.sends++;
    const smLid = t.from.info.masterSmLid;
    if (smLid) {
      this.host.stats.trapsSent++;
      this.host.injectLid(node, t.from.num, { buf: t.mad.slice(), slid: t.from.info.lid, dlid: smLid, sqpn: 0, dqpn: 0, vl15: true });
    }
    const m = this.traps.get(node.idx);
    if (t.sends >= this.opts.trapMaxSends) {
      m?.delete(t.tid);
      return;
    }
    const interval = this.opts.trapRepeatMs ?? Math.max(1, 4.096e-3 * 2 ** t.from.info.subnetTimeout);
    t.timer = this.host.schedule(interval, () => {
      t.timer = undefined;
      if (m?.get(t.tid) === t) this.transmit(node, t);
    });
  }
}
