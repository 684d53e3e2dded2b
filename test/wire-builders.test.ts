import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MAD_SIZE, MadHeader, MadStatus, Method, MgmtClass, SmpAttr, SmpDr, SmpLid } from '../src/wire/mad.js';
import { EncodeError } from '../src/wire/errors.js';
import { SaMadHeader, SaAttr, SaStatus, decodeSaMad, encodeSaMad, saSingleSegmentRmpp, PathRecord } from '../src/wire/sa.js';
import {
  copyTid,
  madStatus,
  readMkey,
  responseMethod,
  saRequest,
  saStatusResponse,
  setTid,
  setTidHigh,
  setTidLow,
  smpDr,
  smpGetDr,
  smpLid,
  smpResponse,
  smpSetLid,
  tidHigh,
  tidLow,
  tidOf,
  trapRepress,
} from '../src/wire/builders.js';

describe('TID helpers', () => {
  it('read and write the 64-bit TID and its halves', () => {
    const b = new Uint8Array(24);
    setTid(b, 0x1122334455667788n);
    expect(tidOf(b)).toBe(0x1122334455667788n);
    expect(tidHigh(b)).toBe(0x11223344);
    expect(tidLow(b)).toBe(0x55667788);
    setTidHigh(b, 0xdeadbeef);
    expect(tidOf(b)).toBe(0xdeadbeef55667788n);
    setTidLow(b, 7);
    expect(tidOf(b)).toBe(0xdeadbeef00000007n);
    expect(MadHeader.decode(b).tid).toBe(0xdeadbeef00000007n);
    const c = new Uint8Array(24);
    copyTid(b, c);
    expect(tidOf(c)).toBe(0xdeadbeef00000007n);
  });
});

describe('SMP builders', () => {
  it('LID-routed Get/Set carry attribute, modifier, M_Key and data', () => {
    const data = Uint8Array.from({ length: 64 }, (_, i) => i);
    const b = smpLid({ method: Method.Set, attrId: SmpAttr.PortInfo, attrMod: 3, data, mkey: 0xabcn, tid: 5n });
    expect(SmpLid.decode(b)).toEqual({ ...SmpLid.zero(), baseVersion: 1, mgmtClass: MgmtClass.SubnLid, classVersion: 1, method: Method.Set, attrId: SmpAttr.PortInfo, attrMod: 3, mkey: 0xabcn, tid: 5n, data });
    expect(readMkey(b)).toBe(0xabcn);
    expect(smpSetLid(SmpAttr.PortInfo, 3, data, { mkey: 0xabcn, tid: 5n })).toEqual(b);
  });
  it('directed route: hop count, InitialPath from index 1, permissive DR LIDs', () => {
    const b = smpGetDr([1, 3], SmpAttr.NodeInfo, 0);
    const v = SmpDr.decode(b);
    expect(v).toMatchObject({ baseVersion: 1, mgmtClass: MgmtClass.SubnDirected, classVersion: 1, method: Method.Get, direction: 0, status: 0, hopPointer: 0, hopCount: 2, attrId: SmpAttr.NodeInfo, drSlid: 0xffff, drDlid: 0xffff });
    expect(v.initialPath.slice(0, 4)).toEqual([0, 1, 3, 0]);
    expect(b.length).toBe(MAD_SIZE);
  });
  it('rejects what does not fit (EncodeError)', () => {
    expect(() => smpDr(new Array(64).fill(1), { method: 1, attrId: 1 })).toThrow(/at most 63 hops/);
    expect(() => smpDr([1, 256], { method: 1, attrId: 1 })).toThrow(/initialPath\[2\]/);
    expect(() => smpLid({ method: 1, attrId: 0x10000 })).toThrow(EncodeError);
    expect(() => smpLid({ method: 1, attrId: 1, attrMod: -1 })).toThrow(EncodeError);
    expect(() => smpLid({ method: 1, attrId: 1, data: new Uint8Array(65) })).toThrow(/at most 64 bytes/);
  });
  it('a DR response: GetResp, D bit, 15-bit status, path fields kept', () => {
    const req = smpGetDr([2, 5, 7], SmpAttr.PortInfo, 1, { tid: 0x99n });
    req[6] = 4; // hop pointer as the destination sees it
    const r = smpResponse(req, MadStatus.InvalidField);
    const v = SmpDr.decode(r);
    const q = SmpDr.decode(req);
    expect(v).toEqual({ ...q, method: Method.GetResp, direction: 1, status: MadStatus.InvalidField });
    expect(madStatus(r)).toBe(MadStatus.InvalidField);
    expect(SmpDr.decode(req).method).toBe(Method.Get); // the request is untouched
  });
  it('a LID-routed response: GetResp and the 16-bit status', () => {
    const req = smpLid({ method: Method.Get, attrId: SmpAttr.SMInfo, tid: 3n });
    const r = smpResponse(req, 0x8001);
    expect(SmpLid.decode(r)).toEqual({ ...SmpLid.decode(req), method: Method.GetResp, status: 0x8001 });
    expect(madStatus(r)).toBe(0x8001);
  });
  it('TrapRepress echoes the trap', () => {
    const trap = smpLid({ method: Method.Trap, attrId: SmpAttr.Notice, tid: 0x42n, data: new Uint8Array(64).fill(9) });
    const r = trapRepress(trap);
    expect(SmpLid.decode(r)).toEqual({ ...SmpLid.decode(trap), method: Method.TrapRepress });
  });
  it('response methods', () => {
    expect([Method.Get, Method.Set, Method.GetTable, Method.GetTraceTable, Method.GetMulti, Method.Delete, Method.Report, Method.Send].map(responseMethod)).toEqual([
      Method.GetResp, Method.GetResp, Method.GetTableResp, Method.GetTableResp, Method.GetMultiResp, Method.DeleteResp, Method.ReportResp, 0x83,
    ]);
  });
});

describe('SA builders', () => {
  it('an SA request: headers, SM_Key, component mask, record; GetMulti as one RMPP segment', () => {
    const rec = PathRecord.encode({ dlid: 5, slid: 7 });
    const b = saRequest({ method: Method.GetTable, attrId: SaAttr.PathRecord, componentMask: PathRecord.mask('dlid', 'slid'), smKey: 9n, record: rec });
    const m = decodeSaMad(b);
    expect(m.header).toMatchObject({ baseVersion: 1, mgmtClass: MgmtClass.SubnAdm, classVersion: 2, method: Method.GetTable, attrId: SaAttr.PathRecord });
    expect(m.sa).toMatchObject({ smKey: 9n, componentMask: PathRecord.mask('dlid', 'slid') });
    expect(m.data.subarray(0, 64)).toEqual(rec);
    expect(b).toEqual(encodeSaMad({ header: { method: Method.GetTable, attrId: SaAttr.PathRecord, attrMod: 0 }, sa: { smKey: 9n, componentMask: PathRecord.mask('dlid', 'slid') } }, rec));
    const multi = decodeSaMad(saRequest({ method: Method.GetMulti, attrId: SaAttr.MultiPathRecord, record: new Uint8Array(200), recordLength: 200 }));
    expect(multi.rmpp).toEqual(saSingleSegmentRmpp(200));
  });

  /** The status response as the SA server built it before the builder (decode, re-encode). */
  function reference(req: Uint8Array, status: number, record?: Uint8Array): Uint8Array {
    const mad = new Uint8Array(MAD_SIZE);
    mad.set(req.subarray(0, Math.min(req.length, MAD_SIZE)));
    const hdr = MadHeader.decode(mad, 0);
    const table = [Method.GetTable, Method.GetTraceTable, Method.GetMulti].includes(hdr.method as 0x12);
    MadHeader.encode({ ...hdr, method: responseMethod(hdr.method), status }, mad, 0);
    if (req.length >= 56) {
      mad.fill(0, 36, 44);
      const head = SaMadHeader.decode(mad, 0);
      SaMadHeader.encode({ ...head, rmpp: table ? saSingleSegmentRmpp(0) : {} }, mad, 0);
      if (table) mad.fill(0, 56);
      else if (record) {
        mad.fill(0, 56);
        mad.set(record.subarray(0, 200), 56);
      }
    }
    return mad;
  }
  it('an SA status response matches the decode/re-encode it replaces, for any request bytes', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 24, maxLength: 300 }),
        fc.constantFrom(Method.Get, Method.Set, Method.GetTable, Method.GetTraceTable, Method.GetMulti, Method.Delete, 0x77),
        fc.constantFrom(SaStatus.ReqInvalid, SaStatus.NoRecords, MadStatus.Busy, MadStatus.BadVersion),
        fc.option(fc.uint8Array({ minLength: 1, maxLength: 220 }), { nil: undefined }),
        (bytes, method, status, record) => {
          bytes[3] = method;
          expect(saStatusResponse(bytes, status, record)).toEqual(reference(bytes, status, record));
          const out = new Uint8Array(MAD_SIZE).fill(0);
          expect(saStatusResponse(bytes, status, record, out)).toBe(out);
          expect(out).toEqual(reference(bytes, status, record));
        },
      ),
      { numRuns: 500 },
    );
  });
});
