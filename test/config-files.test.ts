/** Files accepted that should not be (#29 item 4): partitions.conf membership words and empty
 * member lists refused at their line, P_Key tables too small for a port's partitions said and
 * counted, guid2lid duplicates resolved by OpenSM's rule and said, qos-policy.conf errors at the
 * bad line. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePartitions, PartitionConfigError } from '../src/model/partitions.js';
import { parseQosPolicy } from '../src/model/qos-policy.js';
import { parseGuid2Lid } from '../src/sm/lids.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { openSm } from '../src/index.js';
import { renderMetrics } from '../src/api/metrics.js';
import { snapshotPorts } from '../src/model/snapshot.js';

describe('partitions.conf refuses what OpenSM would quietly take', () => {
  it('an unknown membership word (ALL=fool) is an error at its line, not a limited member', () => {
    expect(() => parsePartitions('Default=0x7fff :\n  ALL=fool ;', 'p.conf')).toThrow(/^p\.conf:2: "ALL=fool": unknown membership "fool" \(full, limited or both\)/);
    expect(() => parsePartitions('P=0x10, defmember=fulll : ALL ;', 'p.conf')).toThrow(/p\.conf:1: .*unknown membership "fulll"/);
    // the three words, any case, and their beginnings as OpenSM reads them (its man page writes `limi`), still work
    expect(parsePartitions('P=0x10 : 0x1=FULL, 0x2=Limited, 0x3=both ;').pkeysFor(0x3n)).toEqual([0x7fff, 0x8010, 0x0010]);
    expect(parsePartitions('P=0x10 : 0x1=limi, 0x2=f ;').pkeysFor(0x1n)).toEqual([0x7fff, 0x0010]);
    expect(parsePartitions('P=0x10 : 0x1=limi, 0x2=f ;').pkeysFor(0x2n)).toEqual([0x7fff, 0x8010]);
  });
  it('"Default=," (a P_Key left out after "=") is refused, not given an automatic P_Key 0x8001', () => {
    expect(() => parsePartitions('Default=, ipoib : ALL=full ;', 'p.conf')).toThrow(/p\.conf:1: "Default=" gives no P_Key after "="/);
  });
  it('an empty member list is refused with its line', () => {
    expect(() => parsePartitions('\n\nP1=0x10 : ;', 'p.conf')).toThrow(/p\.conf:3: partition P1 has an empty member list/);
    expect(() => parsePartitions('P1=0x10 : , ,\n ;', 'p.conf')).toThrow(PartitionConfigError);
  });
  it('a bad member is reported at its own line, not the statement\'s first', () => {
    expect(() => parsePartitions('P1=0x10 :\n  0x1=full,\n  0x2,\n  bogus ;', 'p.conf')).toThrow(/^p\.conf:4: "bogus" is not a port GUID/);
  });
});

describe('qos-policy.conf errors at the bad line', () => {
  it('a bad value inside a block names its own line', () => {
    const text = ['qos-levels', '  qos-level', '    name: A', '    sl: 3', '    mtu-limit: 9', '  end-qos-level', 'end-qos-levels', ''].join('\n');
    expect(() => parseQosPolicy(text, 'q.conf')).toThrow(/^q\.conf:5: mtu-limit must be a number 0\.\.5/);
  });
  it('an undefined port group in a match rule names the source line', () => {
    const text = [
      'port-groups', '  port-group', '    name: G', '    port-guid: 0x1', '  end-port-group', 'end-port-groups',
      'qos-levels', '  qos-level', '    name: L', '    sl: 1', '  end-qos-level', 'end-qos-levels',
      'qos-match-rules', '  qos-match-rule', '    qos-level-name: L', '    destination: G', '    source: Nope', '  end-qos-match-rule', 'end-qos-match-rules', '',
    ].join('\n');
    expect(() => parseQosPolicy(text, 'q.conf')).toThrow(/^q\.conf:17: qos-match-rule: port-group "Nope" is not defined/);
  });
  it('a bad port-guid range names its line', () => {
    const text = ['port-groups', '  port-group', '    name: G', '    node-type: CA', '    port-guid: 0x1-zz', '  end-port-group', 'end-port-groups', ''].join('\n');
    expect(() => parseQosPolicy(text, 'q.conf')).toThrow(/^q\.conf:5: /);
  });
});

describe('guid2lid duplicates: OpenSM\'s rule, said', () => {
  it('one GUID twice: the later line is used', () => {
    const dropped: string[] = [];
    const m = parseGuid2Lid('0x0000000000000011 0x0005 0x0005\n0x0000000000000022 0x0006 0x0006\n0x0000000000000011 0x0007 0x0007\n', 'g2l', dropped);
    expect(m.get(0x11n)).toEqual({ base: 7, lmc: 0 });
    expect(m.get(0x22n)).toEqual({ base: 6, lmc: 0 });
    expect(dropped).toEqual([expect.stringMatching(/^g2l:1: port GUID 0x0000000000000011 is given again at line 3: the later line is used$/)]);
  });
  it('two GUIDs on one LID: the earlier line keeps it, the later entry is not used', () => {
    const dropped: string[] = [];
    const m = parseGuid2Lid('0x0000000000000011 0x0005 0x0005\n0x0000000000000022 0x0005 0x0005\n0x0000000000000033 0x0004 0x0007\n', 'g2l', dropped);
    expect([...m.keys()]).toEqual([0x11n]);
    expect(dropped).toHaveLength(2);
    expect(dropped[0]).toMatch(/^g2l:2: port GUID 0x0000000000000022: LID 0x5 is already port GUID 0x0000000000000011's \(line 1\)/);
    expect(dropped[1]).toMatch(/^g2l:3: port GUID 0x0000000000000033: /);
  });
  it('ibsm run logs each (IBSM-9010) and the ports come up with distinct LIDs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ibsm-g2l-'));
    const file = join(dir, 'guid2lid');
    const sink = new MemorySink();
    // first run: learn the GUIDs, then write a file giving two of them one LID
    const sm0 = await openSm({ sim: 'gen:fattree2:leaves=2,spines=1,hosts=2', seed: 1, sweepIntervalS: 0, guid2lid: file, log: new Logger(new MemorySink(), 'info') });
    await sm0.start();
    const guids = [...parseGuid2Lid((await import('node:fs')).readFileSync(file, 'utf8'))].map(([g]) => g);
    await sm0.stop();
    const hex = (g: bigint): string => `0x${g.toString(16).padStart(16, '0')}`;
    writeFileSync(file, `${hex(guids[0]!)} 0x0009 0x0009\n${hex(guids[1]!)} 0x0009 0x0009\n`);
    const sm = await openSm({ sim: 'gen:fattree2:leaves=2,spines=1,hosts=2', seed: 1, sweepIntervalS: 0, guid2lid: file, log: new Logger(sink, 'info', 'json') });
    await sm.start();
    const lines = sink.lines.map((l) => JSON.parse(l) as { code: string; problem?: string });
    expect(lines.filter((l) => l.code === 'IBSM-9010').map((l) => l.problem)).toEqual([expect.stringContaining(`${file}:2: port GUID ${hex(guids[1]!)}: LID 0x9 is already`)]);
    const ports = snapshotPorts(sm.subnet.sm.current!).byGuid;
    expect(ports.get(guids[0]!)?.lid).toBe(9);
    expect(ports.get(guids[1]!)?.lid).not.toBe(9);
    await sm.stop();
  });
});

describe('P_Key tables too small for a port\'s partitions', () => {
  it('warns naming the port and the partitions left out (IBSM-2038), and counts them in a metric', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ibsm-pk-'));
    const file = join(dir, 'partitions.conf');
    // 40 partitions + the default: 41 P_Keys for every port; the simulated ports hold 32
    writeFileSync(file, ['Default=0x7fff, ipoib : ALL=full ;', ...Array.from({ length: 40 }, (_, i) => `part${i}=0x${(0x100 + i).toString(16)} : ALL=full ;`)].join('\n') + '\n');
    const sink = new MemorySink();
    const sm = await openSm({ sim: 'gen:fattree2:leaves=2,spines=1,hosts=2', seed: 1, sweepIntervalS: 0, partitions: file, log: new Logger(sink, 'info', 'json') });
    await sm.start();
    const full = sink.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.code === 'IBSM-2038');
    expect(full.length).toBeGreaterThan(0);
    expect(full[0]).toMatchObject({ capacity: 32, partitions: 41, leftOut: 9 });
    expect(full[0]!.nodeGuid).toMatch(/^0x[0-9a-f]{16}$/);
    expect(full[0]!.port).toBeGreaterThan(0);
    expect(String(full[0]!.node)).not.toBe('');
    expect(String(full[0]!.first)).toMatch(/^part31,part32,/);
    const text = renderMetrics(sm.subnet, sm.backend.rpc);
    const n = Number(/^ibsm_pkey_tables_full (\d+)$/m.exec(text)?.[1]);
    expect(n).toBe(full.length);
    await sm.stop();
  });
});
