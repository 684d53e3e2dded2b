/**
 * The SA query engine: dispatch by attribute and method to the registered handlers, the checks
 * every request gets (method known, attribute supported, component mask within the record,
 * record present), the Get rule (exactly one record, else NoRecords / TooManyRecords) and
 * ClassPortInfo. Pure: no I/O; the server decodes and encodes.
 */
import { DecodeError } from '../wire/errors.js';
import { MadStatus, Method } from '../wire/mad.js';
import { PathRecord, SA_RECORDS, SaAttr, SaStatus } from '../wire/sa.js';
import type { AnyLayout } from '../wire/layout.js';
import { ClassCap, ClassPortInfo, SaCap, SaCap2 } from '../wire/classportinfo.js';
import type { SaAnswer, SaContext, SaHandler, SaQuery } from './types.js';

/** A request the SA refuses with a specific status (SaStatus / MadStatus value). Handlers throw it. */
export class SaRequestError extends Error {
  override readonly name = 'SaRequestError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Methods a requester may send to the SA (anything else: MAD status UnsupportedMethod). */
export const SA_REQUEST_METHODS: ReadonlySet<number> = new Set([
  Method.Get,
  Method.Set,
  Method.GetTable,
  Method.GetTraceTable,
  Method.GetMulti,
  Method.Delete,
  Method.Report,
  Method.ReportResp,
]);

/** The layout the request's data area is read with, for the component-mask check. */
export function requestLayout(attrId: number): AnyLayout | undefined {
  if (attrId === SaAttr.TraceRecord) return PathRecord; // GetTraceTable takes a PathRecord template
  return SA_RECORDS[attrId];
}

/** The layout of the records in the response (MultiPathRecord → PathRecords). */
export function responseLayout(attrId: number): AnyLayout | undefined {
  if (attrId === SaAttr.MultiPathRecord) return PathRecord;
  if (attrId === SaAttr.ClassPortInfo) return ClassPortInfo;
  return SA_RECORDS[attrId];
}

export interface SaEngineOptions {
  /** ClassPortInfo.RespTimeValue (4.096 µs × 2^n); default 18 (~1 s), OpenSM's default. */
  respTimeValue?: number;
  /** Called for handler failures that are not the requester's fault (bugs): the engine answers NoResources. */
  onInternalError?: (e: unknown, q: SaQuery) => void;
}

export interface SaEngineCounters {
  /** Answers by status (0 = records). */
  byStatus: Map<number, number>;
  internalErrors: number;
}

export class SaEngine {
  private readonly handlers = new Map<number, SaHandler>();
  readonly counters: SaEngineCounters = { byStatus: new Map(), internalErrors: 0 };

  constructor(private readonly opts: SaEngineOptions = {}) {}

  /** Add a handler for its attributes. Throws when one of them already has a handler. */
  register(handler: SaHandler): void {
    for (const a of handler.attrIds) {
      if (a === SaAttr.ClassPortInfo) throw new Error('ClassPortInfo is answered by the SA engine itself');
      if (this.handlers.has(a)) throw new Error(`SA attribute 0x${a.toString(16).padStart(4, '0')} already has a handler`);
    }
    for (const a of handler.attrIds) this.handlers.set(a, handler);
  }

  /** Attributes with a handler. */
  get attributes(): number[] {
    return [...this.handlers.keys()].sort((a, b) => a - b);
  }

  supports(attrId: number): boolean {
    return attrId === SaAttr.ClassPortInfo || this.handlers.has(attrId);
  }

  answer(q: SaQuery, ctx: SaContext): SaAnswer {
    const a = this.dispatch(q, ctx);
    const key = a.kind === 'records' ? 0 : a.status;
    this.counters.byStatus.set(key, (this.counters.byStatus.get(key) ?? 0) + 1);
    return a;
  }

  /** The ClassPortInfo this SA answers with: capability bits for what is actually implemented. */
  classPortInfo(): Uint8Array {
    let cap: number = ClassCap.GetSet | ClassCap.CapMask2;
    if (this.handlers.has(SaAttr.InformInfo)) cap |= ClassCap.Trap;
    if (this.handlers.has(SaAttr.MultiPathRecord)) cap |= SaCap.MultiPathSup;
    if (this.handlers.has(SaAttr.MCMemberRecord)) cap |= SaCap.UdMcastSup;
    // PathRecord rates include the extended-speed enumerations (FDR/EDR/HDR).
    const cap2 = this.handlers.has(SaAttr.PathRecord) ? SaCap2.ExtSpeedsSup : 0;
    return ClassPortInfo.encode({ baseVersion: 1, classVersion: 2, capabilityMask: cap, capabilityMask2: cap2, respTimeValue: this.opts.respTimeValue ?? 18 });
  }

  private dispatch(q: SaQuery, ctx: SaContext): SaAnswer {
    if (!SA_REQUEST_METHODS.has(q.method)) return status(MadStatus.UnsupportedMethod);
    if (q.attrId === SaAttr.ClassPortInfo) {
      return q.method === Method.Get ? { kind: 'records', records: [this.classPortInfo()] } : status(MadStatus.UnsupportedMethodAttr);
    }
    const h = this.handlers.get(q.attrId);
    if (!h) return status(MadStatus.UnsupportedMethodAttr);
    const layout = requestLayout(q.attrId);
    if (layout) {
      if (q.componentMask >> BigInt(layout.components.length) !== 0n) {
        return status(SaStatus.ReqInvalid);
      }
      if (q.data.length < layout.byteLength && (q.method !== Method.Report && q.method !== Method.ReportResp)) {
        return status(SaStatus.ReqInvalid);
      }
    }
    let a: SaAnswer;
    try {
      a = h.handle(q, ctx);
    } catch (e) {
      if (e instanceof SaRequestError) return status(e.status);
      if (e instanceof DecodeError) return status(SaStatus.ReqInvalid);
      this.counters.internalErrors++;
      this.opts.onInternalError?.(e, q);
      return status(SaStatus.NoResources);
    }
    if (a.kind === 'records' && q.method === Method.Get) {
      if (a.records.length === 0) return status(SaStatus.NoRecords);
      if (a.records.length > 1) return status(SaStatus.TooManyRecords);
    }
    return a;
  }
}

function status(s: number): SaAnswer {
  return { kind: 'status', status: s };
}
