/**
 * The in-process fabric's Performance Management Agent (class 0x04 on QP1 of every node that has
 * no client agent for that class): ClassPortInfo, PortCounters Get/Set (clear by CounterSelect)
 * and PortCountersExtended Get. Counters count what the fabric forwards (every link crossing,
 * 72 four-octet words per MAD packet: LRH, BTH, DETH, 256 bytes of MAD, ICRC) plus errors
 * injected by tests; the hardware counters saturate at their width as real PMAs do.
 */
import { ClassPortInfo } from '../wire/classportinfo.js';
import { METHOD_RESPONSE_BIT, MadHeaderView, MadStatus, Method, isResponse } from '../wire/mad.js';
import {
  ALL_PORTS,
  PORT_COUNTER_NAMES,
  PMA_CLASS_VERSION,
  PmaAttr,
  PmaCap,
  PortCounters,
  PortCountersExtended,
  pmaData,
  selectedCounters,
  type PortCounterName,
} from '../wire/pma.js';
import type { SimNode, SimPort } from './node.js';

/** The words one MAD packet adds to PortXmitData/PortRcvData. */
export const MAD_PACKET_WORDS = 72;

const INDEX: Readonly<Record<PortCounterName, number>> = Object.fromEntries(PORT_COUNTER_NAMES.map((n, i) => [n, i])) as Record<PortCounterName, number>;

const NC = PORT_COUNTER_NAMES.length;
const XMIT_PKTS = INDEX.xmitPkts;
const RCV_PKTS = INDEX.rcvPkts;
const XMIT_DATA = INDEX.xmitData;
const RCV_DATA = INDEX.rcvData;

/** Count a MAD packet leaving `tx` and arriving at `rx` (MAD_PACKET_WORDS of data each way). */
export function countPacket(tx: SimPort, rx: SimPort): void {
  const k = tx.node.store.pkts;
  k[2 * tx.slot]! += 1;
  k[2 * rx.slot + 1]! += 1;
}

/** The port's counters beyond the packets counted per crossing (totals, then the values at the
 * last clear), allocated on first use. */
function extra(p: SimPort): Float64Array {
  const st = p.node.store;
  return (st.pma[p.slot] ??= new Float64Array(2 * NC));
}

/** Add to a port's counters (error injection). */
export function addCounts(p: SimPort, counts: Partial<Record<PortCounterName, number>>): void {
  const e = extra(p);
  for (const [name, n] of Object.entries(counts) as [PortCounterName, number][]) e[INDEX[name]]! += n;
}

/** A counter's total since the fabric was built (link-down events come from the port's own count). */
function total(p: SimPort, i: number): number {
  const e = p.node.store.pma[p.slot];
  let t = e ? e[i]! : 0;
  if (i === XMIT_PKTS || i === XMIT_DATA) t += p.node.store.pkts[2 * p.slot]! * (i === XMIT_DATA ? MAD_PACKET_WORDS : 1);
  else if (i === RCV_PKTS || i === RCV_DATA) t += p.node.store.pkts[2 * p.slot + 1]! * (i === RCV_DATA ? MAD_PACKET_WORDS : 1);
  else if (i === INDEX.linkDowned) t += p.linkDowned;
  return t;
}

/** What the counter reads since its last clear. */
function since(p: SimPort, name: PortCounterName): number {
  const i = INDEX[name];
  const e = p.node.store.pma[p.slot];
  return total(p, i) - (e ? e[NC + i]! : 0);
}

function hardware(p: SimPort, name: PortCounterName): number {
  const max = 2 ** PortCounters.fields[name].width - 1;
  return Math.min(since(p, name), max);
}

function clear(p: SimPort, counterSelect: number, counterSelect2: number): void {
  const e = extra(p);
  for (const name of selectedCounters(counterSelect, counterSelect2)) {
    const i = INDEX[name];
    e[NC + i] = total(p, i);
  }
}

export const PMA_CAPABILITY = PmaCap.AllPortSelect | PmaCap.ExtendedWidth | PmaCap.XmitWait;

/** Answer a PerfMgt request that arrived at `node` (through `port` for a CA); undefined when it is
 * not one the PMA answers (a response, another class version: dropped as a real PMA would not). */
export function processPma(node: SimNode, port: number, req: Uint8Array): Uint8Array | undefined {
  const h = MadHeaderView.over(req);
  if (isResponse(h.method) || h.classVersion !== PMA_CLASS_VERSION) return undefined;
  const resp = req.slice(0, 256);
  const rh = MadHeaderView.over(resp);
  rh.method = (h.method | METHOD_RESPONSE_BIT) >>> 0;
  rh.status = 0;
  const data = pmaData(resp);
  const status = (s: number): Uint8Array => {
    rh.status = s;
    return resp;
  };
  if (h.method !== Method.Get && h.method !== Method.Set) return status(MadStatus.UnsupportedMethod);
  if (h.attrId === PmaAttr.ClassPortInfo) {
    if (h.method !== Method.Get) return status(MadStatus.UnsupportedMethodAttr);
    data.fill(0);
    ClassPortInfo.encode({ baseVersion: 1, classVersion: PMA_CLASS_VERSION, capabilityMask: PMA_CAPABILITY, respTimeValue: 18 }, data, 0);
    return resp;
  }
  if (h.attrId !== PmaAttr.PortCounters && h.attrId !== PmaAttr.PortCountersExtended) return status(MadStatus.UnsupportedMethodAttr);
  const sel = PortCounters.decode(data, 0);
  const ports = selectedPorts(node, port, sel.portSelect);
  if (!ports) return status(MadStatus.InvalidField);
  if (h.method === Method.Set) {
    if (h.attrId !== PmaAttr.PortCounters) return status(MadStatus.UnsupportedMethodAttr);
    for (const p of ports) clear(p, sel.counterSelect, sel.counterSelect2);
  }
  data.fill(0);
  if (h.attrId === PmaAttr.PortCounters) {
    const v: Record<string, number> = { portSelect: sel.portSelect, counterSelect: sel.counterSelect, counterSelect2: sel.counterSelect2 };
    for (const name of PORT_COUNTER_NAMES) v[name] = sum(ports, (p) => hardware(p, name), 2 ** PortCounters.fields[name].width - 1);
    PortCounters.encode(v, data, 0);
  } else {
    const big = (name: PortCounterName): bigint => BigInt(sum(ports, (p) => since(p, name), Number.MAX_SAFE_INTEGER));
    PortCountersExtended.encode(
      { portSelect: sel.portSelect, xmitData: big('xmitData'), rcvData: big('rcvData'), xmitPkts: big('xmitPkts'), rcvPkts: big('rcvPkts'), unicastXmitPkts: big('xmitPkts'), unicastRcvPkts: big('rcvPkts') },
      data,
      0,
    );
  }
  return resp;
}

/** The ports PortSelect names: a switch's port (or every port with AllPortSelect); a CA answers
 * for the port the MAD arrived on. */
function selectedPorts(node: SimNode, arrival: number, portSelect: number): SimPort[] | undefined {
  if (!node.isSwitch) {
    const p = node.ports[arrival];
    return p ? [p] : undefined;
  }
  if (portSelect === ALL_PORTS) return node.ports.filter((p): p is SimPort => p !== undefined && p.num > 0);
  const p = node.ports[portSelect];
  return p ? [p] : undefined;
}

function sum(ports: readonly SimPort[], f: (p: SimPort) => number, max: number): number {
  return Math.min(
    ports.reduce((a, p) => a + f(p), 0),
    max,
  );
}
