import { describe, expect, it } from 'vitest';
import { parsePartitions, PartitionPlan, PartitionConfigError } from '../src/model/partitions.js';

describe('partitions.conf', () => {
  it('defaults to full membership in 0x7fff without a file', () => {
    expect(PartitionPlan.defaultPlan().pkeysFor(0x1n)).toEqual([0xffff]);
  });
  it('adds the implicit default rule when the file has none', () => {
    const p = parsePartitions('P1=0x8001 : 0x10=full, 0x11 ;');
    expect(p.pkeysFor(0x10n)).toEqual([0x7fff, 0x8001]);
    expect(p.pkeysFor(0x11n)).toEqual([0x7fff, 0x0001]);
    expect(p.pkeysFor(0x99n, 'ca', true)).toEqual([0xffff]);
  });
  it('parses the man page examples', () => {
    const p = parsePartitions(`
 Default=0x7fff : ALL, ALL_SWITCHES=full, SELF=full ;
 NewPartition , ipoib : 0x123456=full, 0x3456789034=limi, 0x2134af2306 ;
 ShareIO = 0x80 , defmember=full : 0x123451, 0x123452;
 # 0x123453, 0x123454 will be limited
 ShareIO = 0x80 : 0x123453, 0x123454, 0x123455=full;
 ShareIO = 0x80 : defmember=limited : 0x123456, 0x123457, 0x123458=full;
 Default=0x7fff,ipoib:
        mgid=ff12:401b::0707,sl=1 # random IPv4 group
        mgid=ff12::1,sl=1,Q_Key=0xDEADBEEF,rate=3,mtu=2 # random group
        ALL=full;
`);
    // Default: ALL (limited) merged with the later ALL=full gives one full entry.
    expect(p.pkeysFor(0x123451n)).toEqual([0xffff, 0x8080]);
    expect(p.pkeysFor(0x123453n)).toContain(0x0080);
    expect(p.pkeysFor(0x123458n)).toContain(0x8080);
    expect(p.pkeysFor(0x123456n)).toContain(0x8001); // NewPartition got the first auto P_Key
    const dflt = p.partitions.find((x) => x.pkey === 0x7fff)!;
    expect(dflt.mgroups.map((g) => g.mgid)).toEqual(['ff12:401b::0707', 'ff12::1']);
    expect(dflt.mgroups[1]!.flags['q_key']).toBe('0xDEADBEEF');
  });
  it('reports errors with line numbers', () => {
    expect(() => parsePartitions('\n\nX=0x10 : bogus-port ;')).toThrow(/partitions.conf:3/);
    expect(() => parsePartitions('X=0x10 : ALL')).toThrow(PartitionConfigError);
    expect(() => parsePartitions('X=zz : ALL;')).toThrow(/bad P_Key/);
  });
});
