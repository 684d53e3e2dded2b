/**
 * The packet walkers of the simulated fabric: directed route (IBA 14.2.2.2/14.2.2.3), LID routing
 * through the switches' forwarding tables, and multicast along the MFTs. A walk is synchronous
 * and O(1) per hop: it updates the DR header on the way, counts link crossings into the `Transit`
 * (with per-link faults), and ends in `host.arrive` or a thrown `DropError`.
 */
import { Method, PERMISSIVE_LID, PortState, SmpDr, isResponse } from '../wire/mad.js';
import { byteArrayOf } from '../wire/layout.js';
import { countPacket } from './pma.js';
import { isMulticastLid } from './forwarding.js';
import type { SimFaults } from './faults.js';
import { linkIsUp } from './link.js';
import { portOwnsLid, type SimNode, type SimPort } from './node.js';
import { DropError, portKey, type Packet, type Target, type Transit } from './packet.js';
import { directionOf, drDlidOf, drSlidOf, hopCountOf, hopPointerOf, METHOD, setHopPointer } from './header.js';

const MAX_LID_HOPS = 64;
// the DR paths are arrays of bytes: their entries are read and written in place on every hop
const INITIAL_PATH = byteArrayOf(SmpDr, 'initialPath').offset;
const RETURN_PATH = byteArrayOf(SmpDr, 'returnPath').offset;
const SMP_DR_BYTES = SmpDr.byteLength;

/** What a walk needs from the fabric. */
export interface WalkHost {
  readonly stats: { hops: number };
  readonly faults: SimFaults;
  /** The MAD reached (node, port); `arrivalPort` is the physical port for switch port 0 deliveries. */
  arrive(node: SimNode, port: number, target: Target, pkt: Packet, t: Transit, arrivalPort?: number): void;
  /** A copy of a multicast MAD was lost. */
  count(reason: string): void;
}

export class Walker {
  constructor(private readonly host: WalkHost) {}

  /** Cross the link out of `p`; returns the receiving port. */
  private cross(p: SimPort | undefined, pkt: Packet, t: Transit): SimPort {
    if (!p || !p.peer || !linkIsUp(p)) throw new DropError('link down or no such port', true);
    if (!pkt.vl15 && (p.info.portState !== PortState.Active || p.peer.info.portState !== PortState.Active)) {
      throw new DropError('port not ACTIVE for data VLs', true);
    }
    this.host.faults.onCross(portKey(p.node.idx, p.num), t);
    t.hops++;
    this.host.stats.hops++;
    countPacket(p, p.peer);
    pkt.probe?.hops.push({ node: p.node.idx, port: p.num, slid: pkt.slid, dlid: pkt.dlid, sl: pkt.sl ?? 0 });
    return p.peer;
  }

  /** Directed-route forwarding (IBA 14.2.2.2/14.2.2.3 as the Linux SMI implements them). The D
   * bit and the hop count do not change on the way: read once; the hop pointer is kept in a local
   * and written to the header before the MAD arrives (or is lost), not at every hop. */
  dr(start: SimNode, startPort: number, pkt: Packet, t: Transit): void {
    const b = pkt.buf;
    if (b.length < SMP_DR_BYTES) throw new DropError(`a directed-route SMP needs ${SMP_DR_BYTES} bytes, got ${b.length}`, true);
    if (drSlidOf(b) !== PERMISSIVE_LID || drDlidOf(b) !== PERMISSIVE_LID) {
      throw new DropError('non-permissive DrSLID/DrDLID (LID-routed part of a DR SMP is not supported)', true);
    }
    let cur = start;
    let inPort = -1;
    const hc = hopCountOf(b);
    if (hc > 63) throw new DropError('hop count above 63', true);
    const d = directionOf(b);
    let hp = hopPointerOf(b);
    const hp0 = hp;
    try {
      for (;;) {
        let exit: number;
        if (d === 0) {
          if (inPort < 0) {
            if (hp !== 0) throw new DropError('outgoing DR SMP sent with a non-zero hop pointer', true);
            hp = 1;
            if (hc === 0) {
              setHopPointer(b, hp);
              return this.host.arrive(cur, startPort, 'sma', pkt, t);
            }
            exit = b[INITIAL_PATH + 1]!;
            if (!cur.isSwitch && exit !== startPort) throw new DropError(`InitialPath[1]=${exit} is not the sending port ${startPort}`, true);
          } else if (hp >= 1 && hp < hc) {
            if (!cur.isSwitch) throw new DropError('DR SMP must be forwarded by a non-switch', true);
            b[RETURN_PATH + hp] = inPort;
            hp++;
            exit = b[INITIAL_PATH + hp]!;
          } else if (hp === hc) {
            b[RETURN_PATH + hp] = inPort;
            hp = hc + 1;
            setHopPointer(b, hp);
            return this.host.arrive(cur, inPort, 'sma', pkt, t);
          } else {
            throw new DropError(`bad hop pointer ${hp} (hop count ${hc})`, true);
          }
        } else if (inPort < 0) {
          if (hc > 0 && hp === hc + 1) {
            hp = hc;
            exit = b[RETURN_PATH + hc]!;
          } else if (hc === 0 && hp === 1) {
            hp = 0;
            setHopPointer(b, hp);
            return this.host.arrive(cur, startPort, 'agent', pkt, t);
          } else {
            throw new DropError(`bad hop pointer ${hp} in a returning DR SMP (hop count ${hc})`, true);
          }
        } else if (hp >= 2 && hp <= hc) {
          if (!cur.isSwitch) throw new DropError('returning DR SMP must be forwarded by a non-switch', true);
          hp--;
          exit = b[RETURN_PATH + hp]!;
        } else if (hp === 1) {
          hp = 0;
          setHopPointer(b, hp);
          return this.host.arrive(cur, inPort, 'agent', pkt, t);
        } else {
          throw new DropError(`bad hop pointer ${hp} in a returning DR SMP (hop count ${hc})`, true);
        }
        if (exit === 0 || exit > cur.numPorts) throw new DropError(`no port ${exit} on ${cur.desc}`, true);
        const rx = this.cross(cur.ports[exit], pkt, t);
        cur = rx.node;
        inPort = rx.num;
      }
    } catch (e) {
      // lost on the way: the header as it was when it was lost
      if (hp !== hp0) setHopPointer(b, hp);
      throw e;
    }
  }

  /** Where a LID-routed MAD arriving at a port goes: the SMA or an agent. */
  private lidTarget(pkt: Packet): Target {
    if (!pkt.vl15) return 'agent';
    const m = pkt.buf[METHOD]!;
    return m === Method.Trap || (isResponse(m) && m !== Method.TrapRepress) ? 'agent' : 'sma';
  }

  /** LID routing from (node, port): a CA port or a switch's port 0. */
  lid(start: SimNode, startPort: number, pkt: Packet, t: Transit): void {
    const dlid = pkt.dlid;
    if (isMulticastLid(dlid)) return this.multicast(start, startPort, pkt, t);
    let cur = start;
    let inPort = startPort;
    let originating = true;
    for (;;) {
      if (cur.isSwitch) {
        const p0 = cur.ports[0]!;
        if (!originating && !pkt.vl15 && cur.ports[inPort]!.info.portState !== PortState.Active) {
          throw new DropError('inbound port not ACTIVE for data VLs', true);
        }
        if (portOwnsLid(p0, dlid) || (dlid === PERMISSIVE_LID && pkt.vl15 && !originating)) {
          return this.host.arrive(cur, 0, this.lidTarget(pkt), pkt, t, inPort);
        }
        const exit = cur.sw!.fwd.unicastPort(dlid);
        if (exit === undefined || exit === 0) throw new DropError(`no route to LID ${dlid} at ${cur.desc}`, true);
        const rx = this.cross(cur.ports[exit], pkt, t);
        if (t.hops > MAX_LID_HOPS) throw new DropError(`LID ${dlid}: forwarding loop (more than ${MAX_LID_HOPS} hops)`, true);
        cur = rx.node;
        inPort = rx.num;
      } else {
        const p = cur.ports[inPort];
        if (!p) throw new DropError(`no port ${inPort}`, true);
        if (!originating) {
          if (portOwnsLid(p, dlid) || (dlid === PERMISSIVE_LID && pkt.vl15)) return this.host.arrive(cur, inPort, this.lidTarget(pkt), pkt, t);
          throw new DropError(`LID ${dlid} arrived at ${cur.desc} port ${inPort} (LID ${p.info.lid})`, true);
        }
        if (portOwnsLid(p, dlid)) return this.host.arrive(cur, inPort, this.lidTarget(pkt), pkt, t);
        const rx = this.cross(p, pkt, t);
        cur = rx.node;
        inPort = rx.num;
      }
      originating = false;
    }
  }

  /** Multicast: flood along the MFTs (each switch visited once), deliver at every CA port reached. */
  private multicast(start: SimNode, startPort: number, pkt: Packet, t: Transit): void {
    const seen = new Set<number>();
    const queue: Array<{ node: SimNode; inPort: number; tr: Transit }> = [];
    const sendOut = (p: SimPort | undefined, tr: Transit): void => {
      try {
        const tt = { ...tr };
        const rx = this.cross(p, pkt, tt);
        queue.push({ node: rx.node, inPort: rx.num, tr: tt });
      } catch (e) {
        if (e instanceof DropError) this.host.count(e.reason);
        else throw e;
      }
    };
    if (start.isSwitch) queue.push({ node: start, inPort: startPort, tr: t });
    else sendOut(start.ports[startPort], t);
    let delivered = 0;
    while (queue.length) {
      const { node, inPort, tr } = queue.shift()!;
      if (!node.isSwitch) {
        if (node === start && inPort === startPort) continue;
        this.host.arrive(node, inPort, 'agent', { ...pkt, buf: pkt.buf.slice() }, { ...tr });
        delivered++;
        continue;
      }
      if (seen.has(node.idx)) continue;
      seen.add(node.idx);
      for (const out of node.sw!.fwd.multicastPorts(pkt.dlid, inPort)) {
        if (out === 0) {
          this.host.arrive(node, 0, 'agent', { ...pkt, buf: pkt.buf.slice() }, { ...tr }, inPort);
          delivered++;
        } else sendOut(node.ports[out], tr);
      }
    }
    if (!delivered) throw new DropError(`multicast LID 0x${pkt.dlid.toString(16)} reached no port`, true);
  }
}
