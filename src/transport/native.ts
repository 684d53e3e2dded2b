/** Loads the libibumad addon (`build/Release/ibsm_umad.node`) lazily and gives it a typed face.
 * Only src/transport/umad.ts should use this module; everything above the transport layer sees
 * the Transport interface. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TransportError } from './types.js';

/** A port as libibumad reports it (sysfs, or umad2sim's snapshot under ibsim). */
export interface NativePortInfo {
  caName: string;
  portNum: number;
  /** "InfiniBand" or "Ethernet" (RoCE). */
  linkLayer: string;
  state: number;
  physState: number;
  lid: number;
  lmc: number;
  smLid: number;
  smSl: number;
  rate: number;
  capMask: number;
  gidPrefix: bigint;
  portGuid: bigint;
}

export interface NativeCaInfo {
  name: string;
  nodeType: number;
  numPorts: number;
  fwVer: string;
  caType: string;
  hwVer: string;
  nodeGuid: bigint;
  systemGuid: bigint;
  ports: NativePortInfo[];
}

export interface NativeGrh {
  dgid: Uint8Array;
  sgidIndex: number;
  hopLimit: number;
  trafficClass: number;
  flowLabel: number;
}

/** The errors the addon throws: `call` is the libibumad (or libc) function that failed. */
export interface NativeUmadError extends Error {
  errno: number;
  call: string;
}

/** Receives one batch: `data` holds the MADs back to back, `meta` RECORD.stride words per MAD.
 * A fatal receive error arrives as (null, null, 0, error); the receiver has stopped then. */
export type NativeBatchCallback = (data: Buffer | null, meta: Uint32Array | null, count: number, error?: NativeUmadError) => void;

export interface NativeUmadPort {
  /** Returns the agent id. `methods` (0-127) make it a server agent; `oui` selects umad_register_oui. */
  register(mgmtClass: number, classVersion: number, rmppVersion: number, methods?: number[], oui?: number): number;
  unregister(agentId: number): void;
  send(
    agentId: number,
    data: Uint8Array,
    lid: number,
    qpn: number,
    qkey: number,
    sl: number,
    pkeyIndex: number,
    timeoutMs: number,
    retries: number,
    grh?: NativeGrh | null,
  ): boolean | void;
  /** `count` MADs at once, as send() would take them one by one: `data` holds them (no GRH, each at
   * most SEND_RECORD.maxLength bytes), `meta` SEND_RECORD.stride words per MAD; one lock of the
   * send queue for all, and the sender woken at the end if it sleeps. Returns how many a full
   * queue dropped. */
  sendMany?(data: Uint8Array, meta: Uint32Array, count: number): number;
  /** The send queue's counters (the addon sends from its own thread; a full queue drops). */
  sendStats?(): NativeSendStats;
  /** With deferral on, send() queues without waking the sender thread; flush() wakes it once for
   * everything queued since. */
  setDeferWake?(on: boolean): void;
  /** At most n requests on the wire at once (0: unpaced), each slot freed by its answer. */
  setPace?(n: number): void;
  /** Drop the queued request whose TID's low 32 bits are `tid` (not yet sent); true when one was. */
  unsend?(tid: number): boolean;
  /** Tests only: each MAD the receiver thread sends on an answer is held `ms` before umad_send. */
  holdAnswerSends?(ms: number): void;
  flush?(): void;
  openIssm(): void;
  closeIssm(): void;
  /** Stops the receiver thread (woken at once, off the event loop) and closes the port. */
  close(): Promise<void>;
  /** The same, blocking; for process exit only. */
  closeSync(): void;
  readonly isOpen: boolean;
}

/** What the addon's sends did: MADs waiting for the sender thread, in its umad_send, sent, dropped
 * (queue full, or a request still queued at close: the queued responses are written), refused by umad_send (errors, the last one's errno), and
 * how many of those sent or refused send() handed to umad_send itself (direct: a kernel's umad
 * device with nothing queued; never under umad2sim). */
export interface NativeSendStats {
  queued: number;
  /** 1 while the sender thread is inside umad_send (blocked there when the peer is full). */
  sending: number;
  sent: number;
  dropped: number;
  errors: number;
  lastErrno: number;
  /** Of sent + errors: by send() on the calling thread, not by the sender thread. */
  direct: number;
  /** Paced (setPace): requests on the wire now, slots freed without an answer (after 100 ms), and
   * of sent + errors those sent by the receiver thread as an answer freed a slot. */
  inFlight?: number;
  expired?: number;
  byReceiver?: number;
  /** Requests dropped from the queue by unsend() before they were sent. */
  unsent?: number;
}

/** Word indices of one MAD's record in a batch's metadata array. `gid` is the first of 4 words. */
export interface NativeRecordLayout {
  stride: number;
  offset: number;
  length: number;
  status: number;
  agent: number;
  lid: number;
  qpn: number;
  qkey: number;
  sl: number;
  pathBits: number;
  pkeyIndex: number;
  grh: number;
  gidIndex: number;
  hopLimit: number;
  trafficClass: number;
  flowLabel: number;
  gid: number;
}

/** Word indices of one MAD's record in sendMany's metadata array, and the longest MAD it takes. */
export interface NativeSendRecordLayout {
  stride: number;
  agent: number;
  offset: number;
  length: number;
  lid: number;
  qpn: number;
  qkey: number;
  sl: number;
  pkeyIndex: number;
  /** > 0 for a request (the kernel's response timeout), 0 for a response. */
  timeoutMs: number;
  maxLength: number;
}

export interface NativeSmiGsiPair {
  smiName: string;
  smiPort: number;
  gsiName: string;
  gsiPort: number;
}

export interface NativeUmad {
  /** `sendQueue`: MADs the port's sender thread may have waiting before send() drops (default 4096). */
  UmadPort: new (caName: string | null, portNum: number, onBatch: NativeBatchCallback, smi: boolean, sendQueue?: number) => NativeUmadPort;
  listCas(): NativeCaInfo[];
  /** The SMI/GSI device pair for a CA port (newer libibumad only); null when not split or unsupported. */
  smiGsiPair(caName: string | null, portNum: number): NativeSmiGsiPair | null;
  RECORD: NativeRecordLayout;
  /** sendMany's record layout (absent from addons built before it). */
  SEND_RECORD?: NativeSendRecordLayout;
  features: { openSmiPort: boolean; smiGsiPairs: boolean };
  /** Start gathering listCas()'s answer on a thread of its own (the bundled bin calls it before
   * compiling the bundle, for `ibsm run --umad`); the next listCas() takes it. */
  prefetchCas?(): boolean;
  /** Wait for that thread (at process exit). */
  endPrefetch?(): void;
  /** For process exit under umad2sim (ibsim): every open port's threads stopped, this process
   * detached from ibsim and what was on its way taken, then the ports closed, so that umad2sim's
   * own exit clean-up cannot deadlock with its receiver thread (native/umad2sim-exit.c). 1
   * detached, 0 not under umad2sim, negative an errno. */
  umad2simExit?(timeoutMs: number): number;
}

/** Where the addon is built (the same two levels up from src/transport and dist/transport). */
export const NATIVE_ADDON_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../build/Release/ibsm_umad.node');

/** The single executable (scripts/build-sea.mjs) carries the addon in itself and writes it out to
 * a private per-version path before it can be loaded: its launcher gives that step here, which
 * returns the path or throws naming what is wrong. */
const seaAddon = (): (() => string) | undefined => (globalThis as { __ibsmSeaAddon?: () => string }).__ibsmSeaAddon;

let loaded: NativeUmad | undefined;

/** Load the addon once; throws TransportError naming the fix when it is not built or cannot load. */
export function loadNative(): NativeUmad {
  if (loaded) return loaded;
  // Loaded already by the bundled bin or the single executable, from the same path (scripts/launcher.mjs).
  const early = (globalThis as { __ibsmNative?: NativeUmad }).__ibsmNative;
  if (early) return (loaded = early);
  const fromSea = seaAddon();
  let file = NATIVE_ADDON_PATH;
  if (fromSea) {
    try {
      file = fromSea();
    } catch (e) {
      throw new TransportError(`the native umad transport this executable carries cannot be written out to be loaded: ${(e as Error).message}`, 'load');
    }
  } else if (!existsSync(file)) {
    throw new TransportError(
      `the native umad transport is not built (${file} is missing); install libibumad-dev (apt-get install libibumad-dev) and run: npm run build:native`,
      'load',
    );
  }
  try {
    // process.dlopen, not a require: node:module (for createRequire) costs start-up time (scripts/bench/README.md, "Figures behind source comments").
    const m = { exports: {} as NativeUmad };
    process.dlopen(m, file);
    loaded = m.exports;
  } catch (e) {
    throw new TransportError(
      fromSea
        ? `the native umad transport ${file} cannot be loaded (${(e as Error).message}); install libibumad3 (apt-get install libibumad3)`
        : `the native umad transport ${file} cannot be loaded (${(e as Error).message}); install libibumad3/libibumad-dev and rebuild it with: npm run build:native`,
      'load',
    );
  }
  return loaded;
}

export function isNativeError(e: unknown): e is NativeUmadError {
  return e instanceof Error && typeof (e as Partial<NativeUmadError>).call === 'string' && typeof (e as Partial<NativeUmadError>).errno === 'number';
}

/** Wrap an addon error as a TransportError (keeping call and errno); other errors pass through. */
export function toTransportError(e: unknown, context: string): Error {
  if (isNativeError(e)) return new TransportError(`${context}: ${e.message}`, e.call, e.errno);
  return e instanceof Error ? e : new Error(String(e));
}
