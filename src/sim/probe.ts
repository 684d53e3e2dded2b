/**
 * Test packets on the in-process fabric (ibtracert across subnets): a data packet injected at a
 * port with the LRH and GRH fields of a path (SLID, DLID, SL; SGID, DGID, HopLimit), walked through
 * the switches' tables and the routers (sim/router.ts) like any packet, that reports the ports it
 * left by, with the LIDs and SL in its LRH at each, and where it arrived (or why it was lost).
 */
import type { SimFabric } from './fabric.js';
import type { Packet } from './packet.js';

export interface ProbeHeader {
  /** The LRH: source LID (default the port's), destination LID, SL. */
  slid?: number;
  dlid: number;
  sl?: number;
  /** A GRH: SGID (default the port's GID), DGID, HopLimit (default 255). */
  sgid?: bigint;
  dgid?: bigint;
  hopLimit?: number;
}

export interface ProbeHop {
  /** Node index, NodeDescription, the port left by, and the LRH's SLID/DLID on that link. */
  node: number;
  desc: string;
  port: number;
  slid: number;
  dlid: number;
  sl: number;
}

export type ProbeResult =
  | { arrived: true; node: number; desc: string; port: number; portGuid: bigint; slid: number; dlid: number; sl: number; hopLimit?: number; hops: ProbeHop[] }
  | { arrived: false; reason: string; hops: ProbeHop[] };

/** Inject a test packet at (node, port) and resolve with where it went. */
export function sendProbe(sim: SimFabric, node: number, port: number, h: ProbeHeader): Promise<ProbeResult> {
  const p = sim.port(node, port);
  return new Promise((resolve) => {
    const hops: Array<{ node: number; port: number; slid: number; dlid: number; sl: number }> = [];
    const named = (): ProbeHop[] => hops.map((x) => ({ ...x, desc: sim.nodes[x.node]!.desc }));
    let done = false;
    const pkt: Packet = {
      buf: new Uint8Array(256),
      slid: h.slid ?? p.info.lid,
      dlid: h.dlid,
      sl: h.sl ?? 0,
      sqpn: 1,
      dqpn: 1,
      vl15: false,
      ...(h.dgid !== undefined ? { grh: { sgid: h.sgid ?? ((p.info.gidPrefix << 64n) | p.guid), dgid: h.dgid, hopLimit: h.hopLimit ?? 0xff, trafficClass: 0, flowLabel: 0 } } : {}),
      probe: {
        hops,
        arrived(n, pn, got) {
          if (done) return;
          done = true;
          const at = sim.nodes[n]!;
          resolve({ arrived: true, node: n, desc: at.desc, port: pn, portGuid: at.ports[pn]?.guid ?? at.guid, slid: got.slid, dlid: got.dlid, sl: got.sl ?? 0, ...(got.grh ? { hopLimit: got.grh.hopLimit } : {}), hops: named() });
        },
        lost(reason) {
          if (done) return;
          done = true;
          resolve({ arrived: false, reason, hops: named() });
        },
      },
    };
    sim.injectPacket(node, port, pkt);
  });
}
