/** The umad transport: MADs through the kernel's user_mad interface (libibumad, via the native
 * addon), or through ibsim when run under the umad2sim preload.
 *
 * One native port object (one receiver thread) per opened umad device. Where the library splits
 * SMI and GSI devices (newer rdma-core), classes 0x01/0x81 go through the SMI device and every
 * other class through the GSI device. Listing and choosing the ports: transport/umad-ports.ts. */
import { toTransportError, type NativeGrh, type NativeRecordLayout, type NativeSendStats, type NativeUmad, type NativeUmadError, type NativeUmadPort } from './native.js';
import {
  TransportError,
  type AgentOptions,
  type GrhAddress,
  type LocalPortInfo,
  type MadAddress,
  type ReceiveHandler,
  type ReceivedMad,
  type Transport,
} from './types.js';
import { GSI_QKEY } from '../wire/mad.js';
import { tidLow } from '../wire/builders.js';
import { listUmadPorts, native, resolvePort, type UmadPortListing } from './umad-ports.js';
import { SendStage, type SendManyPort } from './umad-stage.js';

export { assertSimulatorListening, listUmadPorts, portOfGuid, resolvePort, unusable, type UmadCaListing, type UmadPortListing } from './umad-ports.js';

/** Bytes of a MAD that ibsim delivers intact. */
export const IBSIM_MAD_BYTES = 224;
/** Kernel-side response timeout for requests on real hardware (see UmadOptions.requestTimeoutMs). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 1000;

const SMP_CLASSES: ReadonlySet<number> = new Set([0x01, 0x81]);
const METHOD_RESPONSE_BIT = 0x80;
const METHOD_TRAP_REPRESS = 0x07;
/** PortInfo:CapabilityMask IsSMDisabled (bit 10). */

export interface UmadOptions {
  /** CA name (e.g. "mlx5_0"); default: the first CA with a linked-up port. */
  ca?: string;
  /** Port number; default: the CA's first linked-up port. */
  port?: number;
  /** Open the port's issm device so the port advertises IsSM (and ibsim delivers unsolicited MADs).
   * It is opened once both SMP classes (0x01, 0x81) are registered: an SM receives traps at once,
   * and under ibsim a MAD for a class with no agent kills the process. */
  issm?: boolean;
  /** For requests (non-response methods) the kernel keeps the send pending this long to match the
   * response; a response arriving after it is dropped by the kernel. Retries stay in the RPC layer
   * (the kernel's retries are always 0). ibsim ignores it. Default DEFAULT_REQUEST_TIMEOUT_MS. */
  requestTimeoutMs?: number;
  /** MADs waiting for the addon's sender thread per port before a send is dropped (counted in
   * sendStats()). send() never blocks the event loop: a full device or ibsim socket fills this
   * queue instead. Default 4096. */
  sendQueue?: number;
  /** At most this many requests of a port on the wire at once; the rest wait in the send queue,
   * each answer freeing a slot (a slot without an answer is freed after 100 ms). For umad2sim,
   * whose socket pair hangs ibsim and this process when full (api/backend.ts umadWindow).
   * Default: unpaced. */
  pace?: number;
}

export type UmadErrorHandler = (err: TransportError) => void;

interface Agent {
  id: number;
  port: NativeUmadPort;
  mgmtClass: number;
  /** The port's stage, where the addon has sendMany. */
  stage: SendStage | undefined;
}

const openTransports = new Set<UmadTransport>();
let exitHookInstalled = false;

/** Open a CA port for MAD traffic. */
export function openUmad(opts: UmadOptions = {}): UmadTransport {
  const p = resolvePort(listUmadPorts(), opts.ca, opts.port);
  return new UmadTransport(native(), p, opts);
}

/** Close every open umad transport (for SIGINT/SIGTERM handlers). */
export async function closeAllUmad(): Promise<void> {
  await Promise.all([...openTransports].map((t) => t.close()));
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Exiting with a receiver thread running can abort the process: stop them synchronously. Under
  // umad2sim the ports' threads are stopped and the process detached from ibsim before the ports
  // close: umad2sim's own exit clean-up deadlocks with its receiver thread when a MAD arrives as
  // it runs (native/umad2sim-exit.c).
  process.once('exit', () => {
    // What was staged this turn first: the threads' stop still writes the queued responses.
    for (const t of openTransports) t.handOverStaged();
    if (process.env.LD_PRELOAD?.includes('umad2sim')) native().umad2simExit?.(200);
    for (const t of openTransports) t.closeSync();
  });
}

function bigintToGid(v: bigint): Uint8Array {
  const b = new Uint8Array(16);
  for (let i = 15; i >= 0; i--) {
    b[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return b;
}

export class UmadTransport implements Transport {
  readonly kind = 'umad';
  readonly local: LocalPortInfo;
  /** Under ibsim (the umad2sim preload) only the first 224 bytes of a MAD arrive intact (found by
   * experiment, both directions); RMPP segments are sized to fit. Real HCAs carry all 256. */
  readonly maxMadSize = process.env.LD_PRELOAD?.includes('umad2sim') ? IBSIM_MAD_BYTES : undefined;
  /** The addon copies the MAD into its send queue before send() returns. */
  readonly copiesOnSend = true;
  private readonly smi: NativeUmadPort;
  private readonly gsi: NativeUmadPort;
  private readonly agents = new Map<number, Agent>();
  private readonly requestTimeoutMs: number;
  private readonly rec: NativeRecordLayout;
  private handler: ReceiveHandler | undefined;
  private errorHandler: UmadErrorHandler | undefined;
  private closing: Promise<void> | undefined;
  /** issm was asked for and is opened once 0x01 and 0x81 have agents. */
  private issmPending: boolean;
  /** MADs received while no handler was set. */
  droppedNoHandler = 0;

  constructor(n: NativeUmad, port: UmadPortListing, opts: UmadOptions) {
    this.local = {
      caName: port.caName,
      portNum: port.portNum,
      nodeGuid: port.nodeGuid,
      portGuid: port.portGuid,
      lid: port.lid,
      smLid: port.smLid,
      state: port.state,
      linkLayer: port.linkLayer,
    };
    this.requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.rec = n.RECORD;
    const onBatch = (data: Buffer | null, meta: Uint32Array | null, count: number, err?: NativeUmadError): void =>
      this.onBatch(data, meta, count, err);
    const pair = n.features.smiGsiPairs ? n.smiGsiPair(port.caName, port.portNum) : null;
    try {
      if (pair && pair.smiName && pair.gsiName && pair.smiName !== pair.gsiName) {
        this.smi = new n.UmadPort(pair.smiName, pair.smiPort, onBatch, true, opts.sendQueue);
        try {
          this.gsi = new n.UmadPort(pair.gsiName, pair.gsiPort, onBatch, false, opts.sendQueue);
        } catch (e) {
          this.smi.closeSync();
          throw e;
        }
      } else {
        this.smi = this.gsi = new n.UmadPort(port.caName, port.portNum, onBatch, false, opts.sendQueue);
      }
    } catch (e) {
      throw toTransportError(e, `opening ${port.caName} port ${port.portNum}`);
    }
    openTransports.add(this);
    installExitHook();
    this.issmPending = opts.issm === true;
    // One wake-up of the sender thread per burst of sends (the rest of this turn of the event
    // loop), not one per MAD: a window of SMPs goes out on one wake-up.
    for (const p of new Set([this.smi, this.gsi])) {
      p.setDeferWake?.(true);
      if (opts.pace) p.setPace?.(opts.pace);
      // Most MADs are staged and handed over in one sendMany() call per burst.
      if (n.SEND_RECORD && p.sendMany) this.stages.set(p, new SendStage(p as SendManyPort, n.SEND_RECORD));
    }
    this.paced = (opts.pace ?? 0) > 0;
  }

  /** Sends are paced by the addon (opts.pace): a request may wait in its queue (unsend). */
  private readonly paced: boolean;

  private readonly stages = new Map<NativeUmadPort, SendStage>();

  private flushQueued = false;
  private readonly flushSends = (): void => {
    this.flushQueued = false;
    this.handOverStaged();
    this.smi.flush?.();
    if (this.gsi !== this.smi) this.gsi.flush?.();
  };

  private get isClosed(): boolean {
    return this.closing !== undefined;
  }

  register(mgmtClass: number, classVersion: number, opts: AgentOptions = {}): void {
    const where = `${this.local.caName} port ${this.local.portNum}`;
    if (this.isClosed) throw new TransportError(`cannot register class 0x${mgmtClass.toString(16)}: the umad transport on ${where} is closed`, 'umad_register');
    if (SMP_CLASSES.has(mgmtClass) && this.local.linkLayer === 'Ethernet') {
      throw new TransportError(
        `${where} is an Ethernet (RoCE) port: it has no QP0, so subnet management class 0x${mgmtClass.toString(16).padStart(2, '0')} cannot be used; only GSI classes (with GRH addressing) work there`,
        'umad_register',
      );
    }
    if (this.agents.has(mgmtClass)) {
      throw new TransportError(`class 0x${mgmtClass.toString(16)} is already registered on ${where} (one agent per class)`, 'umad_register');
    }
    const vendorOui = mgmtClass >= 0x30 && mgmtClass <= 0x4f;
    if (vendorOui && opts.oui === undefined) {
      throw new TransportError(`vendor class 0x${mgmtClass.toString(16)} needs an OUI (AgentOptions.oui)`, 'umad_register_oui');
    }
    const port = SMP_CLASSES.has(mgmtClass) ? this.smi : this.gsi;
    try {
      // A server's method mask names the request methods it serves (0..127); responses (bit 7 set)
      // always reach the agent that sent the request, so they never belong in the mask.
      const methods = (opts.methods ?? []).filter((m) => m < 0x80);
      const id = port.register(mgmtClass, classVersion, opts.rmppVersion ?? 0, methods, vendorOui ? opts.oui : undefined);
      this.agents.set(mgmtClass, { id, port, mgmtClass, stage: this.stages.get(port) });
    } catch (e) {
      throw toTransportError(e, `registering class 0x${mgmtClass.toString(16)} version ${classVersion} on ${where}`);
    }
    if (this.issmPending && [...SMP_CLASSES].every((c) => this.agents.has(c))) {
      this.issmPending = false;
      this.setIsSm(true);
    }
  }

  /** Remove the agent of a class (received MADs of that class are then refused by the kernel). */
  unregister(mgmtClass: number): void {
    const a = this.agents.get(mgmtClass);
    if (!a) return;
    this.agents.delete(mgmtClass);
    try {
      a.port.unregister(a.id);
    } catch (e) {
      throw toTransportError(e, `unregistering class 0x${mgmtClass.toString(16)}`);
    }
  }

  send(mad: Uint8Array, addr: MadAddress): void {
    if (this.isClosed) throw new TransportError(`the umad transport on ${this.local.caName} port ${this.local.portNum} is closed`, 'umad_send');
    if (mad.length < 24) throw new TransportError(`a MAD is at least 24 bytes, got ${mad.length}`, 'umad_send');
    const mgmtClass = mad[1]!;
    const agent = this.agents.get(mgmtClass);
    if (!agent) {
      throw new TransportError(`no agent for class 0x${mgmtClass.toString(16)} on ${this.local.caName} port ${this.local.portNum}: call register() first`, 'umad_send');
    }
    let grh: NativeGrh | null = null;
    if (addr.grh) grh = toNativeGrh(addr.grh);
    else if (this.local.linkLayer === 'Ethernet') {
      throw new TransportError(`${this.local.caName} port ${this.local.portNum} is an Ethernet (RoCE) port: every MAD needs GRH addressing (addr.grh)`, 'umad_send');
    }
    const method = mad[3]!;
    const isRequest = (method & METHOD_RESPONSE_BIT) === 0 && method !== METHOD_TRAP_REPRESS;
    // A Q_Key of 0 means "the default": none on QP0, the well-known GSI Q_Key elsewhere.
    const qkey = (addr.qkey || (addr.qpn === 0 ? 0 : GSI_QKEY)) >>> 0;
    const timeoutMs = isRequest ? this.requestTimeoutMs : 0;
    const stage = agent.stage;
    if (stage) {
      if (!grh && stage.takes(mad.length)) {
        if (stage.add(agent.id, mad, addr.lid, addr.qpn, qkey, addr.sl ?? 0, addr.pkeyIndex ?? 0, timeoutMs)) this.handOver(stage);
        else this.flushAtTurnEnd();
        return;
      }
      // The rest of the port's sends in their order: what is staged goes first.
      this.handOver(stage);
    }
    let queued: boolean | void;
    try {
      queued = agent.port.send(agent.id, mad, addr.lid, addr.qpn, qkey, addr.sl ?? 0, addr.pkeyIndex ?? 0, timeoutMs, 0, grh);
    } catch (e) {
      throw toTransportError(e, 'sending a MAD');
    }
    // A full send queue drops the MAD as the fabric would lose it: the RPC layer's timeouts cover it.
    if (queued === false) this.sendsDropped++;
    else this.flushAtTurnEnd();
  }

  /** flushSends once at the end of this turn of the event loop, however many sends it makes. */
  private flushAtTurnEnd(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(this.flushSends);
  }

  private sendsDropped = 0;

  /** The stage's MADs handed to the addon. A refusal (only a bug can cause one: the records are
   * checked as they are staged) loses them as a full queue would: counted, and the RPC layer's
   * timeouts cover them. */
  private handOver(stage: SendStage): void {
    const n = stage.count;
    if (!n) return;
    try {
      this.sendsDropped += stage.flush();
    } catch (e) {
      this.stageRefused += n;
      this.stageError = new TransportError(`handing ${n} staged MADs to ${this.local.caName} port ${this.local.portNum}: ${(e as Error).message ?? String(e)}`, 'umad_send');
    }
  }

  /** Every stage's MADs handed to the addon now (at close, and at process exit before the threads stop). */
  handOverStaged(): void {
    for (const st of this.stages.values()) this.handOver(st);
  }

  /** The last refusal of a stage's MADs (handOver), for diagnosis, and how many MADs were lost so
   * (counted as dropped in sendStats()). */
  stageError: TransportError | undefined;
  private stageRefused = 0;

  /** The addon's send counters over this transport's port(s): sent (direct: by send() itself),
   * waiting for the sender thread, dropped (queue full, or a request left at close) and refused by umad_send
   * (with the last errno). */
  sendStats(): NativeSendStats {
    const ports = this.smi === this.gsi ? [this.smi] : [this.smi, this.gsi];
    const out: NativeSendStats = { queued: 0, sending: 0, sent: 0, dropped: 0, errors: 0, lastErrno: 0, direct: 0 };
    for (const p of ports) {
      const s = p.sendStats?.();
      if (!s) continue;
      out.queued += s.queued;
      out.sending += s.sending;
      out.sent += s.sent;
      out.dropped += s.dropped;
      out.errors += s.errors;
      out.direct += s.direct ?? 0;
      if (s.inFlight !== undefined) {
        out.inFlight = (out.inFlight ?? 0) + s.inFlight;
        out.expired = (out.expired ?? 0) + (s.expired ?? 0);
        out.byReceiver = (out.byReceiver ?? 0) + (s.byReceiver ?? 0);
        out.unsent = (out.unsent ?? 0) + (s.unsent ?? 0);
      }
      out.lastErrno = s.lastErrno || out.lastErrno;
    }
    if (!ports.some((p) => p.sendStats)) out.dropped = this.sendsDropped;
    out.dropped += this.stageRefused;
    return out;
  }

  onReceive(handler: ReceiveHandler): void {
    this.handler = handler;
  }

  /** A request whose try timed out, dropped from the addon's send queue if it is still there
   * (paced under umad2sim: queued behind requests a stalled ibsim has not answered). */
  unsend(mad: Uint8Array): void {
    if (!this.paced || mad.length < 16) return;
    const a = this.agents.get(mad[1]!);
    if (!a) return;
    if (a.stage) this.handOver(a.stage);
    a.port.unsend?.(tidLow(mad));
  }

  /** Called when a receiver stops on an unrecoverable error (the port is unusable afterwards). */
  onError(handler: UmadErrorHandler): void {
    this.errorHandler = handler;
  }

  /** Mark (or unmark) this port as running an SM. */
  setIsSm(on: boolean): void {
    try {
      if (on) this.smi.openIssm();
      else this.smi.closeIssm();
    } catch (e) {
      throw toTransportError(e, 'changing IsSM');
    }
  }

  close(): Promise<void> {
    if (!this.closing) {
      this.handOverStaged(); // queued responses are still written at close
      const ports = this.smi === this.gsi ? [this.smi] : [this.smi, this.gsi];
      this.closing = Promise.all(ports.map((p) => p.close())).then(() => {
        openTransports.delete(this);
      });
    }
    return this.closing;
  }

  /** Blocking close, for process exit. */
  closeSync(): void {
    if (!this.closing) this.handOverStaged();
    this.closing ??= Promise.resolve();
    this.smi.closeSync();
    if (this.gsi !== this.smi) this.gsi.closeSync();
    openTransports.delete(this);
  }

  private onBatch(data: Buffer | null, meta: Uint32Array | null, count: number, err?: NativeUmadError): void {
    if (err) {
      const te = toTransportError(err, `receiving on ${this.local.caName} port ${this.local.portNum}`) as TransportError;
      if (this.errorHandler) this.errorHandler(te);
      else process.emitWarning(te.message, 'TransportError');
      return;
    }
    if (!data || !meta || this.isClosed) return;
    const h = this.handler;
    if (!h) {
      this.droppedNoHandler += count;
      return;
    }
    const r = this.rec;
    let firstError: unknown;
    for (let i = 0, base = 0; i < count; i++, base += r.stride) {
      // The MAD's bytes, a view of the batch (the constructor: about half subarray's cost).
      const m = new UmadReceived(new Uint8Array(data.buffer, data.byteOffset + meta[base + r.offset]!, meta[base + r.length]!), meta[base + r.status]!, meta, base, r);
      try {
        h(m);
      } catch (e) {
        firstError ??= e;
      }
    }
    if (firstError !== undefined) {
      // Every MAD of the batch was still delivered; the handler's failure is not swallowed.
      process.nextTick(() => {
        throw firstError;
      });
    }
  }
}

/** A MAD of a received batch. Its address is read from the batch's record (a fresh array per
 * batch, never reused) when first asked for: MadRpc matches a response by its bytes alone, so
 * most received MADs never build their address object. */
class UmadReceived implements ReceivedMad {
  // Plain assignments in the constructor, not class fields: a field initializer is one more call
  // per received MAD (<instance_members_initializer>) before TurboFan inlines it.
  declare readonly data: Uint8Array;
  declare readonly status: number;
  private declare readonly meta: Uint32Array;
  private declare readonly base: number;
  private declare readonly r: NativeRecordLayout;
  private declare a: MadAddress | undefined;
  constructor(data: Uint8Array, status: number, meta: Uint32Array, base: number, r: NativeRecordLayout) {
    this.data = data;
    this.status = status;
    this.meta = meta;
    this.base = base;
    this.r = r;
    this.a = undefined;
  }
  get addr(): MadAddress {
    return (this.a ??= addressOf(this.meta, this.base, this.r));
  }
}

/** The address of the received MAD at record `base` of a batch. */
function addressOf(meta: Uint32Array, base: number, r: NativeRecordLayout): MadAddress {
  const addr: MadAddress = {
    lid: meta[base + r.lid]!,
    qpn: meta[base + r.qpn]!,
    qkey: meta[base + r.qkey]!,
    sl: meta[base + r.sl]!,
    pkeyIndex: meta[base + r.pkeyIndex]!,
  };
  if (meta[base + r.grh]) {
    const g = base + r.gid;
    addr.grh = {
      dgid: (BigInt(meta[g]!) << 96n) | (BigInt(meta[g + 1]!) << 64n) | (BigInt(meta[g + 2]!) << 32n) | BigInt(meta[g + 3]!),
      sgidIndex: meta[base + r.gidIndex]!,
      hopLimit: meta[base + r.hopLimit]!,
      trafficClass: meta[base + r.trafficClass]!,
      flowLabel: meta[base + r.flowLabel]!,
    };
  }
  return addr;
}

function toNativeGrh(g: GrhAddress): NativeGrh {
  return {
    dgid: bigintToGid(g.dgid),
    sgidIndex: g.sgidIndex ?? 0,
    hopLimit: g.hopLimit ?? 255,
    trafficClass: g.trafficClass ?? 0,
    flowLabel: g.flowLabel ?? 0,
  };
}
