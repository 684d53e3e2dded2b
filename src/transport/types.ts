/** The transport interface: how MAD bytes leave and enter ibsm. Implementations: sim (in-process
 * fabric), umad (native addon over libibumad), and the fault injector wrapping either. Nothing
 * above this layer knows which backend it runs on. */
import { IbsmError } from '../util/errors.js';

/** Global routing header fields, for GSI traffic that needs a GRH (RoCE, inter-subnet). */
export interface GrhAddress {
  dgid: bigint;
  sgidIndex?: number;
  flowLabel?: number;
  hopLimit?: number;
  trafficClass?: number;
}

/** Where a MAD goes (send) or came from (receive). */
export interface MadAddress {
  /** Destination LID on send, source LID on receive. 0xffff (permissive) for directed-route SMPs. */
  lid: number;
  /** 0 for SMPs (QP0), 1 for GSI classes (QP1), or the requester's QPN when answering. */
  qpn: number;
  qkey?: number;
  sl?: number;
  pkeyIndex?: number;
  grh?: GrhAddress;
}

export interface ReceivedMad {
  /** The MAD bytes (normally 256). */
  data: Uint8Array;
  addr: MadAddress;
  /** 0 for a received MAD. Non-zero (an errno, e.g. 110 ETIMEDOUT) when the transport hands back
   * a MAD we sent that could not be delivered (ibsim does this for dropped MADs and bad DR paths). */
  status: number;
}

export interface AgentOptions {
  /** Methods this agent serves as a server (unsolicited requests). Empty/absent: client only. */
  methods?: number[];
  /** 1 to let the kernel do RMPP for this agent (real hardware only). */
  rmppVersion?: number;
  /** For vendor classes 0x30-0x4f. */
  oui?: number;
}

export interface LocalPortInfo {
  caName: string;
  portNum: number;
  nodeGuid: bigint;
  portGuid: bigint;
  /** As seen when the port was opened; read live values with SMPs. */
  lid: number;
  smLid: number;
  state: number;
  linkLayer: 'InfiniBand' | 'Ethernet';
}

export type ReceiveHandler = (mad: ReceivedMad) => void;

export interface Transport {
  readonly kind: string;
  readonly local: LocalPortInfo;
  /** Bytes of a MAD the link delivers intact, when fewer than 256 (ibsim: 224). RMPP segments to fit. */
  readonly maxMadSize?: number;
  /** Register an agent for a management class/version. Must be called before sending or receiving that class. */
  register(mgmtClass: number, classVersion: number, opts?: AgentOptions): void;
  /** Queue a MAD for sending. Throws TransportError when it cannot be queued. */
  send(mad: Uint8Array, addr: MadAddress): void;
  /** True when send() has copied the MAD by the time it returns, so the caller may reuse the
   * buffer at once (umad: the bytes go to the kernel or umad2sim in the call). Otherwise the
   * buffer must stay untouched after send(). */
  readonly copiesOnSend?: boolean;
  /** Set the single receive handler (the RPC layer). */
  onReceive(handler: ReceiveHandler): void;
  /** The try of request `mad` timed out: if it still waits to be sent (a paced queue behind a
   * stalled peer), drop it, so only its retry goes out. Optional: transports that send at once
   * have nothing to drop. */
  unsend?(mad: Uint8Array): void;
  close(): Promise<void>;
}

export class TransportError extends IbsmError {
  override readonly name = 'TransportError';
  constructor(
    message: string,
    readonly call?: string,
    readonly errno?: number,
  ) {
    super(message);
  }
}
