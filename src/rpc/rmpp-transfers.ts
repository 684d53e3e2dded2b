/**
 * The RMPP transfers MadRpc runs where the transport does not (ibsim, the in-process fabric): the
 * senders of multi-segment responses and the receivers reassembling responses to our requests and
 * requests from peers (at most `maxPeerRx` of those per peer LID), keyed by class, peer LID and TID.
 */
import type { MadAddress, ReceivedMad } from '../transport/types.js';
import { MadHeaderView, isResponse } from '../wire/mad.js';
import { tidHigh, tidLow } from '../wire/builders.js';
import { RmppType, decodeRmpp, type RmppHeader } from '../wire/rmpp.js';
import { identFor, identOf } from './ident.js';
import type { MadRpcStats } from './madrpc-types.js';
import { St, type Pending } from './pending.js';
import { segmentRmpp, type ResolvedRmppOptions, type RmppHost } from './rmpp.js';
import { RmppReceiver } from './rmpp-receiver.js';
import { RmppSender } from './rmpp-sender.js';
import { RpcClosedError } from './errors.js';

/** What the transfers need from MadRpc: RMPP's host and the RPC's counters. */
export interface RmppTransfersHost extends RmppHost {
  readonly stats: MadRpcStats;
}

/** MadRpc's books, for the transfers that settle its requests or end in an unsolicited MAD. */
export interface RequestBook {
  /** The outstanding request a MAD answers. */
  lookup(d: Uint8Array): Pending | undefined;
  /** Take a request out of the books (its promise is settled by the caller). */
  settle(p: Pending): void;
  /** Hand a reassembled peer request to the unsolicited handlers. */
  dispatch(m: ReceivedMad): void;
}

/** The key of one RMPP transfer: class, peer LID and the full TID. */
function rmppKey(cls: number, lid: number, mad: Uint8Array): string {
  return `${cls}:${lid}:${tidHigh(mad)}:${tidLow(mad)}`;
}

export class RmppTransfers {
  private readonly receivers = new Map<string, RmppReceiver>();
  private readonly senders = new Map<string, { sender: RmppSender; done: Promise<void> }>();
  /** Peer-initiated RMPP reassemblies per peer LID (bounded by maxPeerRx). */
  private readonly peerRx = new Map<number, number>();
  /** First segments of peer requests dropped: that peer had maxPeerRx transfers running. */
  peerRefused = 0;

  constructor(
    private readonly host: RmppTransfersHost,
    readonly opts: ResolvedRmppOptions,
    private readonly maxPeerRx: number,
    private readonly book: RequestBook,
  ) {}

  /** Send `payload` after `hdr` (MAD, RMPP and class headers, `off` bytes, the TID set) to `to`:
   * one MAD when it fits, else an RMPP send that settles when the peer has acknowledged all. */
  respond(cls: number, off: number, hdr: Uint8Array, payload: Uint8Array, to: MadAddress): Promise<void> {
    const segs = segmentRmpp(hdr, payload, undefined, this.opts.madSize);
    if (segs.length === 1) {
      this.host.stats.responsesSent++;
      try {
        // Send only what is used: a peer without RMPP (a diag tool under ibsim) counts the records
        // by the MAD's length; real hardware pads short sends.
        this.host.sendRaw(segs[0]!.subarray(0, off + payload.length), to);
      } catch (e) {
        return Promise.reject(e);
      }
      this.host.rmppStats.segmentsSent++;
      return Promise.resolve();
    }
    const key = rmppKey(cls, to.lid, hdr);
    const running = this.senders.get(key);
    if (running) return running.done;
    this.host.stats.responsesSent++;
    let ok!: () => void;
    let fail!: (e: Error) => void;
    const done = new Promise<void>((res, rej) => {
      ok = res;
      fail = rej;
    });
    const sender = new RmppSender(this.host, this.opts, segs, to, { ...identOf(hdr, to), destination: `LID ${to.lid}` }, { ok, fail }, () => {
      if (this.senders.get(key)?.sender === sender) this.senders.delete(key);
    });
    this.senders.set(key, { sender, done });
    sender.start();
    return done;
  }

  /** An RMPP MAD received (DATA of a transfer, or ACK/STOP/ABORT). */
  onMad(m: ReceivedMad): void {
    const d = m.data;
    let h: RmppHeader;
    try {
      h = decodeRmpp(d);
    } catch {
      this.host.stats.malformed++;
      return;
    }
    const hv = MadHeaderView.over(d);
    const cls = hv.mgmtClass;
    const key = rmppKey(cls, m.addr.lid, d);
    if (h.type !== RmppType.Data) {
      const s = this.senders.get(key);
      if (s) return s.sender.onControl(h);
      const r = this.receivers.get(key);
      if (r && (h.type === RmppType.Stop || h.type === RmppType.Abort)) return r.onStopAbort(h);
      this.host.stats.unmatched++; // stray ACK (e.g. for a single-segment response) or late control MAD
      return;
    }
    const existing = this.receivers.get(key);
    if (existing) return existing.onData(m, h);
    const rsp = isResponse(hv.method);
    if (rsp) {
      const p = this.book.lookup(d);
      if (!p || !p.awaiting) {
        this.host.stats.unmatched++;
        return;
      }
      if (h.data1 !== 1) {
        // not the start of a transfer we know: ignore, the sender will resend from segment 1
        this.host.rmppStats.outOfWindowSegments++;
        return;
      }
      const rx = new RmppReceiver(
        this.host,
        this.opts,
        m.addr,
        identFor(p.mad, p.addr),
        cls,
        {
          ok: (whole) => {
            if (p.state !== St.Outstanding) return;
            this.host.stats.responses++;
            this.book.settle(p);
            p.resolve(whole);
          },
          fail: (e) => {
            if (p.state !== St.Outstanding) return;
            this.book.settle(p);
            this.host.stats.failed++;
            p.reject(e);
          },
        },
        () => {
          if (this.receivers.get(key) === rx) this.receivers.delete(key);
        },
      );
      p.rx = rx;
      this.receivers.set(key, rx);
      rx.onData(m, h);
      return;
    }
    // an RMPP request from a peer (e.g. a multi-segment SA query): reassemble, then dispatch
    if (h.data1 !== 1) {
      this.host.rmppStats.outOfWindowSegments++;
      return;
    }
    const lid = m.addr.lid;
    const running = this.peerRx.get(lid) ?? 0;
    if (running >= this.maxPeerRx) {
      this.peerRefused++;
      return;
    }
    this.peerRx.set(lid, running + 1);
    const rx: RmppReceiver = new RmppReceiver(
      this.host,
      this.opts,
      m.addr,
      identOf(d, m.addr),
      cls,
      { ok: (whole) => this.book.dispatch(whole), fail: () => undefined },
      () => {
        if (this.receivers.get(key) === rx) this.receivers.delete(key);
        const n = (this.peerRx.get(lid) ?? 1) - 1;
        if (n > 0) this.peerRx.set(lid, n);
        else this.peerRx.delete(lid);
      },
    );
    this.receivers.set(key, rx);
    rx.onData(m, h);
  }

  /** Stop every transfer (MadRpc closing). */
  close(): void {
    for (const r of this.receivers.values()) r.cancel();
    this.receivers.clear();
    this.peerRx.clear();
    for (const s of this.senders.values()) s.sender.cancel(new RpcClosedError('RMPP send'));
    this.senders.clear();
  }
}
