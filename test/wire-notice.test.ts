/**
 * Notice and trap details: goldens written by hand from the spec / ib_mad_notice_attr_t, byte by
 * byte, then decoded, checked field by field and re-encoded into a poisoned buffer.
 */
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../src/wire/errors.js';
import { Notice, NoticeSmp, TRAP_DETAILS, Trap144Change, decodeNotice, encodeNotice, type TrapDetails } from '../src/wire/notice.js';

function hex(lines: string[]): Uint8Array {
  return Uint8Array.from(Buffer.from(lines.map((l) => l.replace(/#.*$/, '')).join('').replace(/\s+/g, ''), 'hex'));
}
/** Place `bytes` at offset 64 of a 256-byte SMP, as in a Trap(Notice) MAD. */
function inSmp(bytes: Uint8Array): Uint8Array {
  const mad = new Uint8Array(256);
  mad.set(bytes, 64);
  return mad;
}
function expectEncodes(encode: (buf: Uint8Array, off: number) => void, expected: Uint8Array): void {
  const buf = new Uint8Array(256).fill(0xa5);
  encode(buf, 64);
  expect(Buffer.from(buf.subarray(64, 64 + expected.length)).toString('hex')).toBe(Buffer.from(expected).toString('hex'));
  expect(buf.subarray(0, 64).every((b) => b === 0xa5)).toBe(true);
  expect(buf.subarray(64 + expected.length).every((b) => b === 0xa5)).toBe(true);
}

const HEADER_128 = [
  '83', // IsGeneric 1, Type 3 (subnet management)
  '000002', // ProducerType 2 (switch)
  '0080', // TrapNumber 128
  '0005', // IssuerLID 5
  '8003', // NoticeToggle 1, NoticeCount 3
];

describe('Notice header', () => {
  it('decodes a hand-written trap 128 (link state change) SMP notice', () => {
    const bytes = hex([...HEADER_128, '0005', '00'.repeat(52)]);
    expect(bytes.length).toBe(64);
    const d = decodeNotice(inSmp(bytes), 64);
    expect(d.notice).toMatchObject({ isGeneric: 1, type: 3, producerType: 2, trapNumber: 128, issuerLid: 5, noticeToggle: 1, noticeCount: 3 });
    expect(d.notice.issuerGid).toBeUndefined();
    expect(d.details).toEqual({ trap: 128, value: { lid: 5 } });
    expectEncodes((b, o) => encodeNotice({ type: 3, producerType: 2, issuerLid: 5, noticeToggle: 1, noticeCount: 3 }, { trap: 128, value: { lid: 5 } }, b, o), bytes);
    expect(NoticeSmp.dump(d.notice)).toContain('NoticeTrapNumber:................128');
  });
  it('the full form carries IssuerGID at byte 64', () => {
    const gid = 'fe800000000000000002c90300001234';
    const bytes = hex([...HEADER_128, '0005', '00'.repeat(52), gid]);
    const d = decodeNotice(bytes, 0, 'full');
    expect(d.notice.issuerGid).toBe(BigInt('0x' + gid));
    expectEncodes((b, o) => Notice.encode(d.notice as Notice, b, o), bytes);
  });
  it('a vendor notice carries no trap details', () => {
    const bytes = hex(['04', '0002c9', '1234', '0001', '0000', '11'.repeat(54)]);
    const d = decodeNotice(bytes);
    expect(d.notice.isGeneric).toBe(0);
    expect(d.notice.producerType).toBe(0x0002c9); // VendorID
    expect(d.notice.trapNumber).toBe(0x1234); // DeviceID
    expect(d.details).toBeNull();
  });
  it('rejects a short buffer with DecodeError', () => {
    expect(() => decodeNotice(new Uint8Array(63))).toThrow(DecodeError);
    expect(() => decodeNotice(new Uint8Array(64), 0, 'full')).toThrow(DecodeError);
  });
});

describe('trap details goldens', () => {
  const cases: { name: string; trap: number; details: string[]; value: TrapDetails['value'] }[] = [
    {
      name: 'trap 64 (GID in service)',
      trap: 64,
      details: ['00'.repeat(6), 'fe800000000000000002c90300abcdef', '00'.repeat(32)],
      value: { gid: 0xfe800000000000000002c90300abcdefn },
    },
    {
      name: 'trap 129 (link integrity)',
      trap: 129,
      details: ['0000', '0007', '0c', '00'.repeat(49)],
      value: { lid: 7, portNum: 12 },
    },
    {
      name: 'trap 144 (local changes)',
      trap: 144,
      details: [
        '0000', // reserved
        '0011', // LIDADDR 17
        '00', // reserved
        '01', // 7 reserved bits, OtherLocalChanges 1
        '0250c04a', // CapabilityMask
        '0001', // 10 reserved bits, ChangeFlags: NodeDescription
        '0030', // CapabilityMask2
        '00'.repeat(40),
      ],
      value: { lid: 17, otherLocalChanges: 1, capabilityMask: 0x0250c04a, changeFlags: Trap144Change.NodeDescription, capabilityMask2: 0x30 },
    },
    {
      name: 'trap 145 (system image GUID)',
      trap: 145,
      details: ['0000', '0009', '0000', '0002c90300000001', '00'.repeat(40)],
      value: { lid: 9, systemImageGuid: 0x0002c90300000001n },
    },
    {
      name: 'trap 256 (bad M_Key)',
      trap: 256,
      details: [
        '0000', // reserved
        '0003', // LIDADDR
        'ffff', // DRSLID
        '02', // Method (Set)
        '00', // reserved
        '0015', // AttributeID PortInfo
        '00000001', // AttributeModifier
        '1122334455667788', // M_Key
        '00', // reserved
        'c3', // DRNotice 1, DRPathTruncated 1, DRHopCount 3
        '000102', // return path
        '00'.repeat(27),
      ],
      value: {
        lid: 3,
        drSlid: 0xffff,
        method: 2,
        attrId: 0x15,
        attrMod: 1,
        mkey: 0x1122334455667788n,
        drNotice: 1,
        drPathTruncated: 1,
        drHopCount: 3,
        drReturnPath: [0, 1, 2, ...new Array<number>(27).fill(0)],
      },
    },
    {
      name: 'trap 257 (bad P_Key)',
      trap: 257,
      details: [
        '0000', // reserved
        '0004', // LIDADDR1
        '0006', // LIDADDR2
        '00007fff', // KEY
        '5' + '0' + '000abc', // SL 5, reserved, QP1 0xabc
        '00' + '000def', // reserved, QP2 0xdef
        'fe80000000000000000000000000000a', // GID1
        'fe80000000000000000000000000000b', // GID2
        '00000000',
      ],
      value: { lid1: 4, lid2: 6, key: 0x7fff, sl: 5, qp1: 0xabc, qp2: 0xdef, gid1: 0xfe80000000000000000000000000000an, gid2: 0xfe80000000000000000000000000000bn },
    },
    {
      name: 'trap 259 (bad P_Key at switch external port)',
      trap: 259,
      details: [
        'ffff', // DataValid
        '0004', // LIDADDR1
        '0006', // LIDADDR2
        '8001', // PKEY
        'f' + '0' + '000001', // SL 15, reserved, QP1 1
        '00' + 'ffffff', // reserved, QP2
        '00'.repeat(16), // GID1
        'fe80000000000000000000000000000b', // GID2
        '0002', // SWLIDADDR
        '07', // PORTNO
        '000000',
      ],
      value: { dataValid: 0xffff, lid1: 4, lid2: 6, pkey: 0x8001, sl: 15, qp1: 1, qp2: 0xffffff, gid1: 0n, gid2: 0xfe80000000000000000000000000000bn, swLid: 2, portNum: 7 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const details = hex(c.details);
      expect(details.length).toBe(54);
      const notice = hex(['83', '000001', c.trap.toString(16).padStart(4, '0'), '0004', '0001']);
      const bytes = new Uint8Array(64);
      bytes.set(notice, 0);
      bytes.set(details, 10);
      const d = decodeNotice(inSmp(bytes), 64);
      expect(d.details?.trap).toBe(c.trap);
      expect(d.details?.value).toMatchObject(c.value);
      // the details layout alone, at DataDetails
      expectEncodes((b, o) => TRAP_DETAILS[c.trap]!.encode(c.value, b, o), details);
      // the whole notice
      expectEncodes((b, o) => encodeNotice({ type: 3, producerType: 1, issuerLid: 4, noticeCount: 1 }, { trap: c.trap, value: c.value } as TrapDetails, b, o), bytes);
    });
  }
});
