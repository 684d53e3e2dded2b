/** Typed errors of the RPC layer. Every message names the class, method, attribute and
 * destination so an operator can tell which MAD to which node failed. */
import { IbsmError } from '../util/errors.js';
import { MgmtClass, Method, SmpAttr } from '../wire/mad.js';

const CLASS_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(MgmtClass).map(([k, v]) => [v, k]));
const METHOD_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(Method).map(([k, v]) => [v, k]));
const SMP_ATTR_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(SmpAttr).map(([k, v]) => [v, k]));

const hex = (v: number, w: number): string => '0x' + v.toString(16).padStart(w, '0');

/** What a MAD was: enough to name it in an error. */
export interface MadIdent {
  mgmtClass: number;
  method: number;
  attrId: number;
  attrMod: number;
  /** "LID 12", "DR path 0,1,3", ... */
  destination: string;
}

export function describeMad(id: MadIdent): string {
  const cls = CLASS_NAMES[id.mgmtClass] ?? `class ${hex(id.mgmtClass, 2)}`;
  const method = METHOD_NAMES[id.method] ?? `method ${hex(id.method, 2)}`;
  const smp = id.mgmtClass === MgmtClass.SubnLid || id.mgmtClass === MgmtClass.SubnDirected;
  const an = smp ? SMP_ATTR_NAMES[id.attrId] : undefined;
  const attr = an ? `${an}(${hex(id.attrId, 4)})` : `attribute ${hex(id.attrId, 4)}`;
  return `${cls} ${method} ${attr} mod ${hex(id.attrMod, 1)} to ${id.destination}`;
}

export abstract class RpcError extends IbsmError {}

/** No response after every try, or the transport reported every try undeliverable. */
export class MadTimeoutError extends RpcError {
  override readonly name: string = 'MadTimeoutError';
  constructor(
    readonly mad: MadIdent,
    readonly tries: number,
    /** Non-zero when the last try was handed back by the transport (e.g. 110 from ibsim: dropped or bad DR path). */
    readonly transportStatus = 0,
    detail?: string,
  ) {
    super(
      detail ??
        `no response to ${describeMad(mad)} after ${tries} ${tries === 1 ? 'try' : 'tries'}` +
          (transportStatus ? ` (the transport reported the last try undeliverable, status ${transportStatus}; check the route and that the destination is up)` : ' (check that the destination is up and reachable; raise timeoutMs/retries on a slow fabric)'),
    );
  }
}

/** The response carried a non-zero MAD status. */
export class MadStatusError extends RpcError {
  override readonly name = 'MadStatusError';
  constructor(
    readonly mad: MadIdent,
    /** The status field of the response (15 bits for DR SMPs, 16 otherwise). */
    readonly status: number,
    /** The whole response, for callers that want to look further. */
    readonly response: Uint8Array,
    /** The message, when the caller knows what the status means (default: the MAD and its status). */
    detail?: string,
  ) {
    super(detail ?? `${describeMad(mad)} answered with MAD status ${hex(status, 4)}${statusText(status)}`);
  }
}

function statusText(s: number): string {
  const parts: string[] = [];
  if (s & 0x1) parts.push('busy');
  if (s & 0x2) parts.push('redirect required');
  const code = (s >> 2) & 0x7;
  const codes = ['', 'bad base/class version', 'method not supported', 'method/attribute combination not supported', '', '', '', 'invalid attribute or modifier value'];
  if (codes[code]) parts.push(codes[code]!);
  if (s >> 8) parts.push(`class-specific ${hex(s >> 8, 2)}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/** An RMPP transfer was stopped or aborted by the peer (or aborted by us for a protocol error). */
export class RmppAbortError extends RpcError {
  override readonly name = 'RmppAbortError';
  constructor(
    readonly kind: 'STOP' | 'ABORT',
    readonly rmppStatus: number,
    readonly byPeer: boolean,
    readonly peer: string,
    detail: string,
  ) {
    super(`RMPP transfer with ${peer} ${byPeer ? `${kind === 'STOP' ? 'stopped' : 'aborted'} by the peer` : 'aborted'} (RMPPStatus ${rmppStatus}): ${detail}`);
  }
}

/** An RMPP transfer made no progress for too long, or exceeded its total time. */
export class RmppTimeoutError extends MadTimeoutError {
  override readonly name = 'RmppTimeoutError';
  constructor(
    mad: MadIdent,
    readonly role: 'send' | 'receive',
    readonly segmentsDone: number,
    readonly segmentsTotal: number | undefined,
    reason: string,
  ) {
    super(mad, 1, 0, `RMPP ${role} of ${describeMad(mad)} gave up after ${segmentsDone}${segmentsTotal !== undefined ? '/' + segmentsTotal : ''} segments: ${reason} (is the peer still up?)`);
  }
}

export class RpcClosedError extends RpcError {
  override readonly name = 'RpcClosedError';
  constructor(what: string) {
    super(`${what}: the MAD RPC layer was closed`);
  }
}
