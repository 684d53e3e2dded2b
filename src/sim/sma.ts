/**
 * The simulated Subnet Management Agent: processSmp, the entry point for an SMP that reached a
 * node's SMA, with the node attributes (NodeInfo, NodeDescription, LEDInfo, VendorDiag). Port and
 * switch attributes are in ./sma-port.ts and ./sma-switch.ts, the M_Key check (14.2.4) in
 * ./mkey.ts, node and port state in ./node.ts, the port state machine (IBA 7.2) in ./link.ts.
 * Pure: no I/O and no timers; everything that leaves the node (traps, link changes seen by the
 * neighbour, SMInfo handed to an SM) is reported to an `SmaHost`.
 *
 * Wire access goes through the layouts of src/wire (field offsets are never restated here).
 */
import { MadHeader, MadStatus, Method, NodeType, SmpAttr } from '../wire/mad.js';
import { attrIdOf, attrModOf, CLASS_VERSION, METHOD } from './header.js';
import { smpResponse, tidOf } from '../wire/builders.js';
import { LEDInfo, NodeDescription, NodeInfo, VendorDiag } from '../wire/sma.js';
import { managementPort, type SimNode, type SimPort } from './node.js';
import type { PortChange } from './link.js';
import { checkMkey } from './mkey.js';
import { AttrError, reqData, unsupported, writeData, type AttrCtx, type AttrHandlers } from './sma-attr.js';
import { PORT_HANDLERS } from './sma-port.js';
import { SWITCH_HANDLERS } from './sma-switch.js';
import { ROUTER_HANDLERS, type RouterPlane } from './router.js';
import { VPORT_HANDLERS } from './vport-sma.js';

export interface SmaHost {
  now(): number;
  /** An SM endpoint attached at (node, management port) takes SMInfo. */
  hasSm(node: SimNode, port: number): boolean;
  /** Port states changed; `setBy` is the node whose SMA applied a Set (it raises no trap of its own). */
  portsChanged(changes: PortChange[], setBy: SimNode | undefined): void;
  /** An SMP failed the M_Key check at `port` (the management port): raise trap 256. */
  mkeyViolation(node: SimNode, port: SimPort, req: Uint8Array, arrivalPort: number): void;
  /** TrapRepress for a trap this node sent. */
  trapRepress(node: SimNode, tid: bigint): void;
  /** ClientReregister was set on a CA port. */
  clientReregister?(port: SimPort): void;
  /** The fabric's routers (their vendor attributes: sim/router.ts). */
  readonly routers?: RouterPlane;
}

export type SmaResult =
  | { kind: 'respond'; mad: Uint8Array }
  /** Hand the request to the SM attached at the management port (SMInfo). */
  | { kind: 'sm'; port: number }
  | { kind: 'none'; reason: string };

/** The answers that carry nothing of their own, shared. */
const none = (reason: string): SmaResult => Object.freeze({ kind: 'none', reason });
const RESPONSE_METHOD = none('response method');
const TRAP_AT_SMA = none('trap at SMA');
const NO_MANAGEMENT_PORT = none('no management port');
const MKEY_VIOLATION = none('M_Key violation');
const TRAP_REPRESS = none('trap repress');
const SHORT = none('shorter than a MAD header');
const SILENT = none('the SMA answers nothing (an unresponsive SMA)');
const MIN_SMP_BYTES = MadHeader.byteLength;
/** The answer of every SMP that is answered: one object, its `mad` set per SMP (no result object
 * per SMP). The caller reads it at once, before another SMP is processed. */
const RESPOND: { kind: 'respond'; mad: Uint8Array } = { kind: 'respond', mad: new Uint8Array(0) };
function respond(mad: Uint8Array): SmaResult {
  RESPOND.mad = mad;
  return RESPOND;
}

/**
 * Process an SMP (class 0x01 or 0x81) that reached this node's SMA on `inPort` (for a switch the
 * physical port it came in on, 0 when sent by an agent on port 0). For DR SMPs the hop pointer
 * and return path are already updated by the fabric. The request buffer is not modified.
 */
export function processSmp(host: SmaHost, node: SimNode, inPort: number, req: Uint8Array): SmaResult {
  if (req.length < MIN_SMP_BYTES) return SHORT;
  const method = req[METHOD]!;
  if (method & 0x80) return RESPONSE_METHOD;
  if (method === Method.Trap) return TRAP_AT_SMA;
  const mp = managementPort(node, inPort);
  if (!mp) return NO_MANAGEMENT_PORT;
  node.stats.smpsHandled++;
  if (node.smaSilent) return SILENT;
  if (req[CLASS_VERSION] !== 1) return respond(smpResponse(req, MadStatus.BadVersion));
  const mk = checkMkey(host, node, mp, req, method);
  if (!mk.ok) {
    host.mkeyViolation(node, mp, req, inPort);
    return MKEY_VIOLATION;
  }
  if (method === Method.TrapRepress) {
    host.trapRepress(node, tidOf(req));
    return TRAP_REPRESS;
  }
  if (method !== Method.Get && method !== Method.Set) return respond(smpResponse(req, MadStatus.UnsupportedMethod));
  const attr = attrIdOf(req);
  if (attr === SmpAttr.SMInfo) {
    if (host.hasSm(node, mp.num)) return { kind: 'sm', port: mp.num };
    return respond(smpResponse(req, MadStatus.UnsupportedMethodAttr));
  }
  const resp = smpResponse(req, 0);
  const mod = attrModOf(req);
  const set = method === Method.Set;
  if (set) node.stats.smpSets++;
  else node.stats.smpGets++;
  // One context object serves every SMP (a handler runs to completion and keeps none of it); a
  // fresh one should an SMP ever be processed inside another's handler.
  const own = !ctxBusy;
  const ctx = own ? sharedCtx : ({} as AttrCtx);
  ctx.host = host;
  ctx.node = node;
  ctx.inPort = inPort;
  ctx.mp = mp;
  ctx.mod = mod;
  ctx.set = set;
  ctx.req = req;
  ctx.resp = resp;
  ctx.keyMatches = mk.keyMatches;
  ctxBusy = true;
  try {
    const h = HANDLERS[attr] ?? (node.type === NodeType.Router ? ROUTER_HANDLERS[attr] : undefined);
    if (!h) unsupported();
    else h(ctx);
    return respond(resp);
  } catch (e) {
    if (e instanceof AttrError) return respond(smpResponse(req, e.status));
    throw e;
  } finally {
    if (own) {
      ctxBusy = false;
      // let go of the buffers until the next SMP
      sharedCtx.req = sharedCtx.resp = EMPTY;
    }
  }
}

const EMPTY = new Uint8Array(0);
let ctxBusy = false;
const sharedCtx: AttrCtx = { host: undefined as unknown as SmaHost, node: undefined as unknown as SimNode, inPort: 0, mp: undefined as unknown as SimPort, mod: 0, set: false, req: EMPTY, resp: EMPTY, keyMatches: false };

const NODE_HANDLERS: AttrHandlers = {
  [SmpAttr.NodeDescription]: (c) => {
    if (c.set) unsupported();
    writeData(c.resp, NodeDescription, { description: truncateUtf8(c.node.desc, 64) });
  },
  [SmpAttr.NodeInfo]: (c) => {
    if (c.set) unsupported();
    const n = c.node;
    const portGuid = n.isSwitch ? (n.ports[0]?.guid ?? n.guid) : (n.ports[c.inPort]?.guid ?? 0n);
    writeData(c.resp, NodeInfo, {
      baseVersion: 1,
      classVersion: 1,
      nodeType: n.type,
      numPorts: n.numPorts,
      systemImageGuid: n.systemImageGuid,
      nodeGuid: n.guid,
      portGuid,
      partitionCap: n.partitionCap,
      deviceId: n.deviceId,
      revision: n.revision,
      localPortNum: c.inPort,
      vendorId: n.vendorId,
    });
  },
  [SmpAttr.LEDInfo]: (c) => {
    if (c.set) c.node.ledOn = reqData(c, LEDInfo).ledMask === 1;
    writeData(c.resp, LEDInfo, { ledMask: c.node.ledOn ? 1 : 0 });
  },
  [SmpAttr.VendorDiag]: (c) => {
    if (c.set) unsupported();
    writeData(c.resp, VendorDiag, { nextIndex: 0 });
  },
};

const HANDLERS: AttrHandlers = { ...NODE_HANDLERS, ...PORT_HANDLERS, ...SWITCH_HANDLERS, ...VPORT_HANDLERS };

const ASCII = /^[\x00-\x7f]*$/;
function truncateUtf8(s: string, max: number): string {
  if (s.length <= max && ASCII.test(s)) return s; // one byte a character: fits as it is
  const enc = new TextEncoder().encode(s);
  if (enc.length <= max) return s;
  let cut = max;
  while (cut > 0 && (enc[cut]! & 0xc0) === 0x80) cut--;
  return new TextDecoder().decode(enc.subarray(0, cut));
}
