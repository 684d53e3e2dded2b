/**
 * The SA query engine: dispatch by attribute and method to the registered handlers, the checks
 * every request gets (method known, attribute supported, component mask within the record,
 * record present), the Get rule (exactly one record, else NoRecords / TooManyRecords) and
 * ClassPortInfo. Pure: no I/O; the server decodes and encodes.
 */
import { DecodeError } from '../wire/errors.js';
import { GSI_QKEY, MadStatus, Method } from '../wire/mad.js';
import { PathRecord, SA_RECORDS, SaAttr, SaStatus } from '../wire/sa.js';
import type { AnyLayout } from '../wire/layout.js';
import { ClassCap, ClassPortInfo, SaCap, SaCap2 } from '../wire/classportinfo.js';

import type { SaAnswer, SaContext, SaHandler, SaQuery } from './types.js';
import { IbsmError, InternalError } from '../util/errors.js';

/** A request the SA refuses with a specific status (SaStatus / MadStatus value). Handlers throw it. */
export class SaRequestError extends IbsmError {
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
  /** ClassPortInfo.RespTimeValue (4.096 µs × 2^n); default 18 (~1 s). `ibsm run` uses 16
   * (268 ms), what OpenSM derives from its default 200 ms transaction timeout. */
  respTimeValue?: number;
  /** A QoS policy decides PathRecord SLs (ClassPortInfo IsQoSSupported). */
  qos?: boolean;
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
      if (a === SaAttr.ClassPortInfo) throw new InternalError('ClassPortInfo is answered by the SA engine itself');
      if (this.handlers.has(a)) throw new InternalError(`SA attribute 0x${a.toString(16).padStart(4, '0')} already has a handler`);
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

  /**
   * The ClassPortInfo this SA answers with: capability bits for what is actually implemented.
   * Against OpenSM's 0x2602 / 0xB5E8: no IsTrapSupported (the SA sends Report(), not Trap()) and
   * no IsNoticeSupported (bit 1: neither ibsm's SA nor OpenSM's answers Get/Set(Notice)); bit 2
   * says CapabilityMask2 is meaningful. CapabilityMask2: no alias GUIDs (GUIDInfoRecord is
   * read-only) and no multicast ServiceRecords. Redirect and trap Q_Key are the GSI's
   * 0x80010000 and the redirect QP 1 (no redirection: ask QP1), as OpenSM.
   */
  classPortInfo(): Uint8Array {
    let cap: number = ClassCap.CapMask2;
    if (this.handlers.has(SaAttr.Notice)) cap |= ClassCap.GetSet;
    if (this.handlers.has(SaAttr.MultiPathRecord)) cap |= SaCap.MultiPathSup;
    if (this.handlers.has(SaAttr.MCMemberRecord)) cap |= SaCap.UdMcastSup;
    // PortInfoRecord matches CapabilityMask and CapabilityMask2 as "every requested bit set".
    if (this.handlers.has(SaAttr.PortInfoRecord)) cap |= SaCap.PortInfoCapMaskMatchSup;
    let cap2 = 0;
    if (this.handlers.has(SaAttr.PathRecord)) {
      // PathRecord rates: the extended speeds (FDR..HDR), 2x widths and HDR's enumerations.
      cap2 |= SaCap2.ExtSpeedsSup | SaCap2.LinkWidth2xSup | SaCap2.LinkSpeedHdrSup;
      if (this.opts.qos) cap2 |= SaCap2.QosSup;
    }
    if (this.handlers.has(SaAttr.PortInfoRecord)) cap2 |= SaCap2.FullPortInfoRecSup | SaCap2.PortInfoCapMask2MatchSup;
    // SwitchInfoRecord carries the MulticastFDBTop the switch reports.
    if (this.handlers.has(SaAttr.SwitchInfoRecord)) cap2 |= SaCap2.McastTopSup;
    // Join state 0x8 (send-only full member) is handled.
    if (this.handlers.has(SaAttr.MCMemberRecord)) cap2 |= SaCap2.SendOnlyFullMemberSup;
    return ClassPortInfo.encode({
      baseVersion: 1,
      classVersion: 2,
      capabilityMask: cap,
      capabilityMask2: cap2,
      respTimeValue: this.opts.respTimeValue ?? 18,
      redirectQp: 1,
      redirectQKey: GSI_QKEY,
      trapQKey: GSI_QKEY,
    });
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
