/**
 * Golden tests for the SMA attribute layouts. Expected bytes come from outside the encoder:
 * - test/golden/sma/*.hex: MADs received by smpquery/ibroute/sminfo from ibsim after OpenSM
 *   (--qos) configured the subnet, dumped by libibmad (scripts/capture-golden-sma.sh);
 *   test/golden/sma/*.txt: what the tool printed for them;
 * - RandomForwardingTable, LEDInfo, VendorDiag and a non-empty MFT block (ibsim does not
 *   implement them / OpenSM created no groups): hex written by hand from the spec, per field.
 * Each golden decodes the bytes, checks the values the tool printed, then encodes the value into a
 * 256-byte buffer poisoned with 0xA5 at the SMP data offset and compares byte for byte.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { AnyLayout } from '../src/wire/layout.js';
import { SMP_DATA_OFFSET, SmpAttr } from '../src/wire/mad.js';
import {
  GUIDInfo,
  LEDInfo,
  LinearForwardingTable,
  MulticastForwardingTable,
  NodeDescription,
  NodeInfo,
  PKeyTable,
  PortCap,
  PortCap2,
  PortInfo,
  RandomForwardingTable,
  SLtoVLMappingTable,
  SMA_ATTRIBUTES,
  SMInfo,
  SwitchInfo,
  VendorDiag,
  VLArbitrationTable,
} from '../src/wire/sma.js';
import * as mods from '../src/wire/modifiers.js';
import { EncodeError } from '../src/wire/errors.js';

const GOLDEN = fileURLToPath(new URL('./golden/sma/', import.meta.url));
const POISON = 0xa5;

/** The MADs of a capture: each "rcv buf" block is 16 lines of 8 big-endian 16-bit words. */
function loadMads(name: string): Uint8Array[] {
  const text = readFileSync(GOLDEN + name + '.hex', 'utf8');
  const out: Uint8Array[] = [];
  for (const block of text.split(/\n\s*\n/)) {
    const words = block
      .split('\n')
      .filter((l) => /^[0-9a-f]{4}( [0-9a-f]{4}){7}$/.test(l.trim()))
      .flatMap((l) => l.trim().split(' '));
    if (words.length === 0) continue;
    expect(words.length).toBe(128);
    out.push(Uint8Array.from(words.flatMap((w) => [parseInt(w.slice(0, 2), 16), parseInt(w.slice(2), 16)])));
  }
  return out;
}
const attrIdOf = (m: Uint8Array): number => (m[16]! << 8) | m[17]!;
const attrModOf = (m: Uint8Array): number => ((m[20]! << 24) | (m[21]! << 16) | (m[22]! << 8) | m[23]!) >>> 0;
function madsFor(name: string, attr: number): Uint8Array[] {
  const all = loadMads(name).filter((m) => attrIdOf(m) === attr && m[3] === 0x81);
  expect(all.length, `${name}: no GetResp for attribute 0x${attr.toString(16)}`).toBeGreaterThan(0);
  for (const m of all) expect((m[4]! << 8) | m[5]!, 'MAD status').toBe(0x8000 & ((m[4]! << 8) | m[5]!)); // only the D bit
  return all;
}
function madFor(name: string, attr: number, mod?: number): Uint8Array {
  const hit = madsFor(name, attr).find((m) => mod === undefined || attrModOf(m) === mod);
  if (!hit) throw new Error(`${name}: no MAD for attr 0x${attr.toString(16)} mod 0x${mod?.toString(16)}`);
  return hit;
}
const txt = (name: string): string => readFileSync(GOLDEN + name + '.txt', 'utf8');

/** "Label:.....value" lines of a dump (continuation lines starting with a tab are ignored). */
function dumpFields(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.split('\n')) {
    const r = /^([A-Za-z][A-Za-z0-9 _]*):\.+(.*)$/.exec(line);
    if (r) m.set(r[1]!, r[2]!);
  }
  return m;
}

/** Encode `value` at the SMP data offset of a poisoned 256-byte buffer; compare with the captured MAD. */
function expectEncodesTo(layout: AnyLayout, value: unknown, expected: Uint8Array, off = SMP_DATA_OFFSET): void {
  const buf = new Uint8Array(256).fill(POISON);
  layout.encode(value as never, buf, off);
  const n = layout.byteLength;
  expect(Buffer.from(buf.subarray(off, off + n)).toString('hex')).toBe(Buffer.from(expected.subarray(off, off + n)).toString('hex'));
  expect(buf.subarray(0, off).every((b) => b === POISON)).toBe(true);
  expect(buf.subarray(off + n).every((b) => b === POISON)).toBe(true);
}

/** Every label smpquery printed that our dump also prints must carry the same value text. */
function expectDumpAgrees(layout: AnyLayout, value: unknown, toolText: string, skip: string[] = []): number {
  const ours = dumpFields(layout.dump(value));
  const theirs = dumpFields(toolText);
  let compared = 0;
  for (const [label, v] of theirs) {
    if (skip.includes(label) || !ours.has(label)) continue;
    expect(`${label}: ${ours.get(label)}`).toBe(`${label}: ${v}`);
    compared++;
  }
  return compared;
}

describe('NodeInfo golden (smpquery nodeinfo)', () => {
  for (const [name, type, ports] of [
    ['nodeinfo-switch', 2, 8],
    ['nodeinfo-ca', 1, 2],
  ] as const) {
    it(name, () => {
      const mad = madFor(name, SmpAttr.NodeInfo);
      const v = NodeInfo.decode(mad, SMP_DATA_OFFSET);
      const t = dumpFields(txt(name));
      expect(v.nodeType).toBe(type);
      expect(v.numPorts).toBe(ports);
      expect(v.baseVersion).toBe(Number(t.get('BaseVers')));
      expect(v.nodeGuid).toBe(BigInt(t.get('Guid')!));
      expect(v.portGuid).toBe(BigInt(t.get('PortGuid')!));
      expect(v.systemImageGuid).toBe(BigInt(t.get('SystemGuid')!));
      expect(v.partitionCap).toBe(Number(t.get('PartCap')));
      expect(v.revision).toBe(Number(t.get('Revision')));
      expect(v.localPortNum).toBe(Number(t.get('LocalPort')));
      expect(v.vendorId).toBe(Number(t.get('VendorId')));
      expect(expectDumpAgrees(NodeInfo, v, txt(name))).toBe(t.size);
      expectEncodesTo(NodeInfo, v, mad);
    });
  }
});

describe('NodeDescription golden (smpquery nodedesc)', () => {
  for (const [name, desc] of [
    ['nodedesc-switch', 'Switch1'],
    ['nodedesc-ca', 'Hca1'],
  ] as const) {
    it(name, () => {
      const mad = madFor(name, SmpAttr.NodeDescription);
      const v = NodeDescription.decode(mad, SMP_DATA_OFFSET);
      expect(txt(name)).toMatch(new RegExp(`Node Description:\\.+${desc}\\n`));
      expect(v.description).toBe(desc);
      expectEncodesTo(NodeDescription, v, mad);
    });
  }
});

describe('SwitchInfo golden (smpquery switchinfo)', () => {
  it('decodes what smpquery printed and re-encodes the same bytes', () => {
    const mad = madFor('switchinfo', SmpAttr.SwitchInfo);
    const v = SwitchInfo.decode(mad, SMP_DATA_OFFSET);
    const t = dumpFields(txt('switchinfo'));
    expect(v.linearFdbCap).toBe(Number(t.get('LinearFdbCap')));
    expect(v.multicastFdbCap).toBe(Number(t.get('McastFdbCap')));
    expect(v.linearFdbTop).toBe(Number(t.get('LinearFdbTop')));
    expect(v.linearFdbTop).toBeGreaterThan(0); // OpenSM programmed it
    expect(v.lifeTimeValue).toBe(Number(t.get('LifeTime')));
    expect(v.partitionEnforcementCap).toBe(Number(t.get('PartEnforceCap')));
    expect(v.filterRawInboundCap).toBe(Number(t.get('FilterRawInbound')));
    expect(expectDumpAgrees(SwitchInfo, v, txt('switchinfo'))).toBe(t.size);
    expectEncodesTo(SwitchInfo, v, mad);
  });
});

describe('PortInfo golden (smpquery portinfo)', () => {
  // CapMask/CapabilityMask2: smpquery prints "0x%x" plus one line per flag; Mkey is hidden.
  const SKIP = ['Mkey', 'CapMask', 'CapabilityMask2'];
  for (const [name, port] of [
    ['portinfo-switch-p0', 0],
    ['portinfo-switch-p1', 1],
    ['portinfo-ca', 1],
  ] as const) {
    it(name, () => {
      const mad = madFor(name, SmpAttr.PortInfo, mods.portInfoMod(port));
      const v = PortInfo.decode(mad, SMP_DATA_OFFSET);
      const t = dumpFields(txt(name));
      expect(v.lid).toBe(Number(t.get('Lid')));
      expect(v.masterSmLid).toBe(Number(t.get('SMLid')));
      expect(v.gidPrefix).toBe(BigInt(t.get('GidPrefix')!));
      expect(v.capabilityMask).toBe(Number(t.get('CapMask')));
      expect(v.capabilityMask2).toBe(Number(t.get('CapabilityMask2')));
      expect(v.portState).toBe(4); // Active after OpenSM
      expect(v.mkeyLeasePeriod).toBe(Number(t.get('MkeyLeasePeriod')));
      expect(v.subnetTimeout).toBe(Number(t.get('SubnetTimeout')));
      expect(v.respTimeValue).toBe(Number(t.get('RespTimeVal')));
      expect(v.vlStallCount).toBe(Number(t.get('VLStallCount')));
      expect(v.guidCap).toBe(Number(t.get('GuidCap')));
      // every other field, in smpquery's own formatting
      expect(expectDumpAgrees(PortInfo, v, txt(name), SKIP)).toBe(t.size - SKIP.length);
      expectEncodesTo(PortInfo, v, mad);
    });
  }
  it('flags in CapMask are the ones smpquery lists', () => {
    const v = PortInfo.decode(madFor('portinfo-switch-p0', SmpAttr.PortInfo), SMP_DATA_OFFSET);
    const text = txt('portinfo-switch-p0');
    expect(v.capabilityMask & PortCap.IsSM).toBe(text.includes('\t\t\t\tIsSM\n') ? PortCap.IsSM : 0);
    expect((v.capabilityMask & PortCap.IsTrapSupported) !== 0).toBe(text.includes('IsTrapSupported'));
    expect((v.capabilityMask & PortCap.IsSLMappingSupported) !== 0).toBe(text.includes('IsSLMappingSupported'));
  });
  it('dump prints the same label lines as smpquery', () => {
    const v = PortInfo.decode(madFor('portinfo-ca', SmpAttr.PortInfo), SMP_DATA_OFFSET);
    const ours = PortInfo.dump(v).split('\n');
    const theirs = txt('portinfo-ca').split('\n');
    for (const label of ['Lid:', 'SMLid:', 'LinkWidthEnabled:', 'LinkWidthSupported:', 'LinkSpeedSupported:', 'LinkState:', 'PhysLinkState:', 'NeighborMTU:', 'VLCap:', 'InitType:', 'OperVLs:', 'LinkSpeedExtActive:']) {
      const line = theirs.find((l) => l.startsWith(label));
      expect(line, label).toBeDefined();
      expect(ours).toContain(line);
    }
  });
});

describe('P_KeyTable golden (smpquery pkeys)', () => {
  it('decodes the block smpquery printed', () => {
    const mad = madFor('pkeys-ca', SmpAttr.PKeyTable, mods.pkeyBlockMod(0, 1));
    const v = PKeyTable.decode(mad, SMP_DATA_OFFSET);
    const printed = txt('pkeys-ca')
      .split('\n')
      .filter((l) => /^\s*\d+:/.test(l))
      .flatMap((l) => l.split(':')[1]!.trim().split(/\s+/).map(Number));
    expect(v.pkeys).toEqual(printed.slice(0, 32));
    expect(v.pkeys[0]).toBe(0xffff);
    expectEncodesTo(PKeyTable, v, mad);
  });
});

describe('SLtoVLMappingTable golden (smpquery sl2vl)', () => {
  it('decodes every in/out port pair smpquery printed', () => {
    const rows = txt('sl2vl-switch')
      .split('\n')
      .map((l) => /^ports: in\s+(\d+), out\s+(\d+): \|(.*)\|$/.exec(l))
      .filter((r): r is RegExpExecArray => r !== null);
    expect(rows.length).toBe(9);
    for (const r of rows) {
      const mad = madFor('sl2vl-switch', SmpAttr.SLtoVLMappingTable, mods.sl2vlMod(Number(r[1]), Number(r[2])));
      const v = SLtoVLMappingTable.decode(mad, SMP_DATA_OFFSET);
      expect(v.vls).toEqual(r[3]!.split('|').map((x) => Number(x.trim())));
      expectEncodesTo(SLtoVLMappingTable, v, mad);
    }
  });
});

describe('VLArbitrationTable golden (smpquery vlarb)', () => {
  it('decodes the low and high priority blocks', () => {
    const lines = txt('vlarb-ca').split('\n');
    const cells = (prefix: string, nth: number): number[] =>
      lines
        .filter((l) => l.startsWith(prefix))
        [nth]!.split('|')
        .slice(1, -1)
        .map((x) => Number(x.trim()));
    for (const [block, nth] of [
      [mods.VlArbBlock.LowFirst, 0],
      [mods.VlArbBlock.HighFirst, 1],
    ] as const) {
      const mad = madFor('vlarb-ca', SmpAttr.VLArbitrationTable, mods.vlArbMod(1, block));
      const v = VLArbitrationTable.decode(mad, SMP_DATA_OFFSET);
      const vl = cells('VL    :', nth);
      const weight = cells('WEIGHT:', nth);
      expect(v.entries.slice(0, vl.length)).toEqual(vl.map((x, i) => ({ vl: x, weight: weight[i] })));
      expectEncodesTo(VLArbitrationTable, v, mad);
    }
  });
});

describe('GUIDInfo golden (smpquery guidinfo)', () => {
  it('decodes the GUIDs of every block', () => {
    const printed = txt('guidinfo-ca')
      .split('\n')
      .filter((l) => /^\s*\d+:/.test(l))
      .flatMap((l) => l.split(':')[1]!.trim().split(/\s+/).map(BigInt));
    for (let block = 0; block < 4; block++) {
      const mad = madFor('guidinfo-ca', SmpAttr.GUIDInfo, mods.guidInfoMod(block));
      const v = GUIDInfo.decode(mad, SMP_DATA_OFFSET);
      expect(v.guids).toEqual(printed.slice(block * 8, block * 8 + 8));
      expectEncodesTo(GUIDInfo, v, mad);
    }
    expect(printed[0]).toBe(0x100001n);
  });
});

describe('LinearForwardingTable golden (ibroute)', () => {
  it('decodes the ports ibroute printed for block 0', () => {
    const mad = madFor('lft-switch', SmpAttr.LinearForwardingTable, mods.lftBlockMod(0));
    const v = LinearForwardingTable.decode(mad, SMP_DATA_OFFSET);
    const routes = txt('lft-switch')
      .split('\n')
      .map((l) => /^0x([0-9a-f]{4}) (\d{3}) :/.exec(l))
      .filter((r): r is RegExpExecArray => r !== null);
    expect(routes.length).toBe(6);
    for (const r of routes) expect(v.ports[parseInt(r[1]!, 16)]).toBe(Number(r[2]));
    expect(v.ports[7]).toBe(0xff); // beyond LinearFDBTop: unrouted
    expectEncodesTo(LinearForwardingTable, v, mad);
  });
});

describe('MulticastForwardingTable golden', () => {
  it('decodes the (empty) blocks ibroute -M read', () => {
    const all = madsFor('mft-switch', SmpAttr.MulticastForwardingTable);
    expect(txt('mft-switch')).toMatch(/0 valid mlids dumped/);
    expect(all.map(attrModOf)).toEqual(Array.from({ length: 32 }, (_, b) => mods.mftMod(b, 0)));
    for (const mad of all) {
      const v = MulticastForwardingTable.decode(mad, SMP_DATA_OFFSET);
      expect(v.portMasks.every((m) => m === 0)).toBe(true);
      expectEncodesTo(MulticastForwardingTable, v, mad);
    }
  });
  it('encodes a hand-written block: entry i is a big-endian 16-bit mask, bit n = port 16*position+n', () => {
    const bytes = new Uint8Array(256).fill(0);
    // MLID 0xC000: ports 1 and 3 -> 0x000a ; MLID 0xC001: port 0 -> 0x0001 ; MLID 0xC01F: port 15 -> 0x8000
    bytes.set([0x00, 0x0a, 0x00, 0x01], 64);
    bytes.set([0x80, 0x00], 64 + 62);
    const v = MulticastForwardingTable.decode(bytes, 64);
    expect(v.portMasks[0]).toBe(0x000a);
    expect(v.portMasks[1]).toBe(0x0001);
    expect(v.portMasks[31]).toBe(0x8000);
    expectEncodesTo(MulticastForwardingTable, v, bytes);
  });
});

describe('SMInfo golden (sminfo)', () => {
  it('decodes what sminfo printed', () => {
    const mad = madFor('sminfo', SmpAttr.SMInfo);
    const v = SMInfo.decode(mad, SMP_DATA_OFFSET);
    const r = /sm guid (0x[0-9a-f]+), activity count (\d+) priority (\d+) state (\d+)/.exec(txt('sminfo'))!;
    expect(r).not.toBeNull();
    expect(v.guid).toBe(BigInt(r[1]!));
    expect(v.actCount).toBe(Number(r[2]));
    expect(v.priority).toBe(Number(r[3]));
    expect(v.smState).toBe(Number(r[4]));
    expect(v.smState).toBe(3); // MASTER
    expectEncodesTo(SMInfo, v, mad);
  });
});

/** Hand-written spec bytes: `hex` is the attribute, spaces and comments ignored. */
function specBytes(lines: string[]): Uint8Array {
  const hex = lines.map((l) => l.replace(/#.*$/, '')).join('').replace(/\s+/g, '');
  const mad = new Uint8Array(256);
  mad.set(Buffer.from(hex, 'hex'), SMP_DATA_OFFSET);
  return mad;
}

describe('hand-written spec goldens', () => {
  it('RandomForwardingTable: 16 x {LID 16, Valid 1, LMC 3, reserved 4, Port 8}', () => {
    const mad = specBytes([
      '0005 a0 03', // LID 5, valid 1, LMC 2 (0b1_010_0000), port 3
      '1234 f0 ff', // LID 0x1234, valid 1, LMC 7, port 255
      '0000 00 00'.repeat(13),
      'ffff 10 01', // LID 0xffff, valid 0, LMC 1, port 1
    ]);
    const v = RandomForwardingTable.decode(mad, SMP_DATA_OFFSET);
    expect(v.entries[0]).toEqual({ lid: 5, valid: 1, lmc: 2, port: 3 });
    expect(v.entries[1]).toEqual({ lid: 0x1234, valid: 1, lmc: 7, port: 255 });
    expect(v.entries[15]).toEqual({ lid: 0xffff, valid: 0, lmc: 1, port: 1 });
    expectEncodesTo(RandomForwardingTable, v, mad);
  });
  it('LEDInfo: LedMask is the top bit of a 32-bit word', () => {
    const mad = specBytes(['80 00 00 00']);
    const v = LEDInfo.decode(mad, SMP_DATA_OFFSET);
    expect(v).toEqual({ ledMask: 1 });
    expectEncodesTo(LEDInfo, v, mad);
  });
  it('VendorDiag: NextIndex 16, reserved 16, DiagData 60 bytes', () => {
    const mad = specBytes(['0102', '0000', '00'.repeat(59) + 'ee']);
    const v = VendorDiag.decode(mad, SMP_DATA_OFFSET);
    expect(v.nextIndex).toBe(0x0102);
    expect(v.diagData.length).toBe(60);
    expect(v.diagData[59]).toBe(0xee);
    expectEncodesTo(VendorDiag, v, mad);
  });
  it('PortInfo: a hand-written block checks the sub-byte fields', () => {
    const mad = specBytes([
      '0102030405060708', // M_Key
      'fe80000000000000', // GidPrefix
      '0011 0001', // LID 17, MasterSMLID 1
      '0250c04a', // CapabilityMask
      '0000 0010', // DiagCode, M_KeyLeasePeriod 16
      '03 03 1f 02', // LocalPort 3, LinkWidthEnabled 1X|4X, Supported 0x1f, Active 4X
      '74', // LinkSpeedSupported 7, PortState 4 (Active)
      '52', // PortPhysicalState 5 (LinkUp), LinkDownDefaultState 2 (Polling)
      '85', // M_KeyProtectBits 2, reserved 000, LMC 5
      '11', // LinkSpeedActive 1, LinkSpeedEnabled 1
      '4a', // NeighborMTU 4 (2048), MasterSMSL 10
      '43', // VLCap 4 (VL0-7), InitType 3
      '04 08 08', // VLHighLimit 4, VLArbHighCap 8, VLArbLowCap 8
      '25', // InitTypeReply 2, MTUCap 5 (4096)
      'f3', // VLStallCount 7, HOQLife 19
      '4f', // OperationalVLs 4, PartEnf in/out, FilterRaw in/out all 1
      '0001 0002 0003', // M_Key, P_Key, Q_Key violations
      '20', // GUIDCap 32
      'd2', // ClientReregister 1, McastPkeyTrapSuppression 2 (0b10), SubnetTimeout 18
      '13', // reserved 000, RespTimeValue 19
      'a5', // LocalPhyErrors 10, OverrunErrors 5
      '1234', // MaxCreditHint
      '00 abcdef', // reserved, LinkRoundTripLatency
      '0030', // CapabilityMask2
      '21', // LinkSpeedExtActive 2, LinkSpeedExtSupported 1
      '1e', // reserved 000, LinkSpeedExtEnabled 30
    ]);
    const v = PortInfo.decode(mad, SMP_DATA_OFFSET);
    expect(v).toMatchObject({
      mkey: 0x0102030405060708n,
      lid: 17,
      masterSmLid: 1,
      capabilityMask: 0x0250c04a,
      mkeyLeasePeriod: 16,
      localPortNum: 3,
      linkWidthEnabled: 3,
      linkWidthSupported: 0x1f,
      linkWidthActive: 2,
      linkSpeedSupported: 7,
      portState: 4,
      portPhysicalState: 5,
      linkDownDefaultState: 2,
      mkeyProtectBits: 2,
      lmc: 5,
      linkSpeedActive: 1,
      linkSpeedEnabled: 1,
      neighborMtu: 4,
      masterSmSl: 10,
      vlCap: 4,
      initType: 3,
      vlHighLimit: 4,
      initTypeReply: 2,
      mtuCap: 5,
      vlStallCount: 7,
      hoqLife: 19,
      operationalVls: 4,
      partitionEnforcementInbound: 1,
      partitionEnforcementOutbound: 1,
      filterRawInbound: 1,
      filterRawOutbound: 1,
      mkeyViolations: 1,
      pkeyViolations: 2,
      qkeyViolations: 3,
      guidCap: 32,
      clientReregister: 1,
      multicastPkeyTrapSuppressionEnabled: 2,
      subnetTimeout: 18,
      respTimeValue: 19,
      localPhyErrors: 10,
      overrunErrors: 5,
      maxCreditHint: 0x1234,
      linkRoundTripLatency: 0xabcdef,
      capabilityMask2: 0x30,
      linkSpeedExtActive: 2,
      linkSpeedExtSupported: 1,
      linkSpeedExtEnabled: 30,
    });
    expectEncodesTo(PortInfo, v, mad);
    const d = PortInfo.dump(v);
    expect(d).toContain('LinkWidthEnabled:................1X or 4X');
    expect(d).toContain('LinkSpeedExtEnabled:.............Extended link speeds disabled');
    expect(d).toContain('MtuCap:..........................4096');
  });
  it('PortInfo byte 56 (XDR): LinkSpeedExtActive2 bits 6:5, Supported2 bits 4:3, Enabled2 bits 2:0, bit 7 reserved', () => {
    // libibmad fields.c: BITSOFFS(449, 2) "LinkSpeedExtActive2", BITSOFFS(451, 2) "LinkSpeedExtSupported2",
    // BITSOFFS(453, 3) "LinkSpeedExtEnabled2": byte 56 = 0b0_01_01_111 = 0x2f (XDR active, XDR supported, 7 = set to Supported2)
    const bytes = new Uint8Array(64);
    bytes[56] = 0x2f;
    bytes[58] = 0xcd; // RoundTrip's middle byte: untouched by byte 56
    bytes[60] = 0x18; // CapabilityMask2 0x1800: IsExtendedSpeeds2Supported (11), IsLinkSpeedXDRSupported (12)
    const mad = specBytes([Buffer.from(bytes).toString('hex')]);
    const v = PortInfo.decode(mad, SMP_DATA_OFFSET);
    expect(v).toMatchObject({ linkSpeedExtActive2: 1, linkSpeedExtSupported2: 1, linkSpeedExtEnabled2: 7, linkRoundTripLatency: 0xcd00, capabilityMask2: 0x1800 });
    expect(v.capabilityMask2).toBe(PortCap2.IsExtendedSpeeds2Supported | PortCap2.IsLinkSpeedXDRSupported);
    expectEncodesTo(PortInfo, v, mad);
    // one field at a time lands on its own bits
    const one = (f: Partial<PortInfo>): number => PortInfo.encode({ ...PortInfo.decode(new Uint8Array(64)), ...f })[56]!;
    expect(one({ linkSpeedExtActive2: 3 })).toBe(0x60);
    expect(one({ linkSpeedExtSupported2: 3 })).toBe(0x18);
    expect(one({ linkSpeedExtEnabled2: 7 })).toBe(0x07);
    // the reserved bit 7 is cleared on re-encode
    bytes[56] = 0x80;
    expect(PortInfo.encode(PortInfo.decode(bytes))[56]).toBe(0);
    const d = PortInfo.dump(v);
    expect(d).toContain('LinkSpeedExtActive2:.............212.5 Gbps');
    expect(d).toContain('LinkSpeedExtSupported2:..........212.5 Gbps');
    // byte 56 stays one SA component (IB_PIR_COMPMASK_RESV5 of ib_types.h): the components after it keep their numbers
    const c = PortInfo.components.find((x) => x.bit === 448)!;
    expect(c.width).toBe(8);
    expect(PortInfo.components.filter((x) => x.bit >= 448 && x.bit < 456)).toHaveLength(1);
  });
  it('CapabilityMask2 bits as rdma-core/NVIDIA name them: 4 2x, 5 HDR, 10 NDR, 11 ExtendedSpeeds2, 12 XDR', () => {
    expect(PortCap2.IsLinkWidth2xSupported).toBe(0x10);
    expect(PortCap2.IsLinkSpeedHDRSupported).toBe(0x20);
    expect(PortCap2.IsLinkSpeedNDRSupported).toBe(0x400);
    expect(PortCap2.IsExtendedSpeeds2Supported).toBe(0x800);
    expect(PortCap2.IsLinkSpeedXDRSupported).toBe(0x1000);
  });
});

describe('SMA_ATTRIBUTES', () => {
  it('maps every attribute ID to its layout', () => {
    expect(SMA_ATTRIBUTES[SmpAttr.PortInfo]).toBe(PortInfo);
    expect(SMA_ATTRIBUTES[SmpAttr.RandomForwardingTable]).toBe(RandomForwardingTable);
    for (const [name, id] of Object.entries(SmpAttr)) expect(SMA_ATTRIBUTES[id], name).toBeDefined();
    for (const l of Object.values(SMA_ATTRIBUTES)) expect(l.byteLength).toBeLessThanOrEqual(64);
  });
});

describe('attribute modifiers', () => {
  it('match the modifiers the tools put on the wire', () => {
    expect(madsFor('sl2vl-switch', SmpAttr.SLtoVLMappingTable).map(attrModOf)).toEqual(Array.from({ length: 9 }, (_, i) => mods.sl2vlMod(i, 1)));
    expect(madsFor('vlarb-ca', SmpAttr.VLArbitrationTable).map(attrModOf)).toEqual([mods.vlArbMod(1, 1), mods.vlArbMod(1, 3)]);
    expect(madsFor('pkeys-ca', SmpAttr.PKeyTable).map(attrModOf)).toEqual([mods.pkeyBlockMod(0, 1), mods.pkeyBlockMod(1, 1)]);
    expect(madsFor('guidinfo-ca', SmpAttr.GUIDInfo).map(attrModOf)).toEqual([0, 1, 2, 3].map(mods.guidInfoMod));
  });
  it('use the bit positions OpenSM uses', () => {
    expect(mods.mftMod(3, 2)).toBe(0x20000003);
    expect(mods.mftMod(0x1ff, 15)).toBe(0xf00001ff);
    expect(mods.vlArbMod(5, 4)).toBe(0x00040005);
    expect(mods.sl2vlMod(0, 0, { allInputPorts: true, allOutputPorts: true })).toBe(0x30000);
    expect(mods.sl2vlMod(0, 7, { allInputPorts: true })).toBe(0x20007);
    expect(mods.pkeyBlockMod(2, 9)).toBe(0x00090002);
    expect(mods.smInfoMod(mods.SmInfoControl.Handover)).toBe(1);
    expect(mods.smInfoMod(mods.SmInfoControl.Discover)).toBe(5);
    expect(mods.portInfoMod(36)).toBe(36);
    // bit 31 SMSupportExtendedSpeeds (OpenSM: cl_hton32(port_num) | cl_hton32(1 << 31))
    expect(mods.portInfoMod(36, true)).toBe(0x80000024);
    expect(mods.lftBlockMod(767)).toBe(767);
    expect(mods.rftMod(3)).toBe(3);
  });
  it('decode back to their arguments', () => {
    expect(mods.decodeMftMod(mods.mftMod(300, 9))).toEqual({ block: 300, position: 9 });
    expect(mods.decodeVlArbMod(mods.vlArbMod(12, 3))).toEqual({ port: 12, block: 3 });
    expect(mods.decodeSl2vlMod(mods.sl2vlMod(4, 6, { allOutputPorts: true }))).toEqual({ inPort: 4, outPort: 6, allOutputPorts: true, allInputPorts: false });
    expect(mods.decodePkeyBlockMod(mods.pkeyBlockMod(3, 2))).toEqual({ block: 3, port: 2 });
    expect(mods.decodeGuidInfoMod(mods.guidInfoMod(31))).toEqual({ block: 31 });
    expect(mods.decodeLftBlockMod(mods.lftBlockMod(100))).toEqual({ block: 100 });
    expect(mods.decodeRftMod(mods.rftMod(100))).toEqual({ block: 100 });
    expect(mods.decodePortInfoMod(mods.portInfoMod(254))).toEqual({ port: 254, smSupportsExtendedSpeeds: false });
    expect(mods.decodePortInfoMod(mods.portInfoMod(3, true))).toEqual({ port: 3, smSupportsExtendedSpeeds: true });
    expect(mods.decodeSmInfoMod(mods.smInfoMod(mods.SmInfoControl.Standby))).toEqual({ control: 4 });
  });
  it('reject out-of-range arguments with EncodeError', () => {
    expect(() => mods.mftMod(512, 0)).toThrow(EncodeError);
    expect(() => mods.mftMod(0, 16)).toThrow(EncodeError);
    expect(() => mods.vlArbMod(1, 0)).toThrow(/1\.\.4/);
    expect(() => mods.portInfoMod(256)).toThrow(EncodeError);
    expect(() => mods.sl2vlMod(-1, 0)).toThrow(EncodeError);
    expect(() => mods.guidInfoMod(1.5)).toThrow(EncodeError);
  });
});
