/** Issue #29 item 1, bounded by construction: what a host on the fabric sends cannot grow the
 * metrics' label sets or the log without bound. The one rate limit of remotely triggerable log
 * lines (util/log.ts LogLimiter) on its own, then through the real SM + SA on the in-process
 * fabric: SMInfo Sets with a wrong SM_Key, SA MADs with random attributes and methods, refusals
 * at the SA's bounds. */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { LOG_CODES } from '../src/util/log-codes.js';
import { LogLimiter, Logger, MemorySink } from '../src/util/log.js';
import { MgmtClass, Method, SmpAttr, SMP_DATA_OFFSET } from '../src/wire/mad.js';
import { SMInfo } from '../src/wire/sma.js';
import { JoinState, MCMemberRecord, SaAttr, SaStatus, SA_QKEY } from '../src/wire/sa.js';
import { saRequest } from '../src/wire/builders.js';
import { MC_CREATE_MASK } from '../src/sa/multicast.js';
import { SaStatusError } from '../src/sa/client.js';
import { SmMetrics } from '../src/api/metrics.js';
import { bringUp, client, pool } from './helpers/subnet-rig.js';
import { drive } from './helpers/drive.js';
import { Rng } from '../src/util/rng.js';

/** A limiter on a hand-driven clock: `tick()` runs the armed summary timer. */
function manualLimiter(o: { linesPerInterval?: number; maxKeys?: number } = {}) {
  let now = 0;
  let pending: (() => void) | undefined;
  const limiter = new LogLimiter({
    intervalMs: 60_000,
    now: () => now,
    schedule: (fn) => {
      pending = fn;
      return { cancel: () => (pending = undefined) };
    },
    ...o,
  });
  const sink = new MemorySink();
  const log = new Logger(sink, 'debug', 'text', {}, () => new Date(now), limiter);
  return {
    log,
    sink,
    limiter,
    advance(ms: number) {
      now += ms;
      const fn = pending;
      pending = undefined;
      fn?.();
    },
  };
}

const countCode = (lines: readonly string[], code: string): number => lines.filter((l) => l.includes(` ${code} `)).length;
const suppressedOf = (lines: readonly string[], code: string): number[] =>
  lines.filter((l) => l.includes('IBSM-8050') && l.includes(`suppressedCode=${code}`)).map((l) => Number(/ suppressed=(\d+)/.exec(l)![1]));

describe('LogLimiter: one line per source and code an interval, then "N more suppressed"', () => {
  it('a flood from one source writes its first line and one summary an interval with the count', () => {
    const t = manualLimiter();
    for (let i = 0; i < 1000; i++) t.log.from(7).warn('SMInfo Set from an SM with another SM_Key ignored', { lid: 7 });
    expect(countCode(t.sink.lines, 'IBSM-1029')).toBe(1);
    t.advance(60_000);
    expect(suppressedOf(t.sink.lines, 'IBSM-1029')).toEqual([999]);
    // still flooding: no new first line, one summary per interval
    for (let i = 0; i < 500; i++) t.log.from(7).warn('SMInfo Set from an SM with another SM_Key ignored', { lid: 7 });
    t.advance(60_000);
    expect(countCode(t.sink.lines, 'IBSM-1029')).toBe(1);
    expect(suppressedOf(t.sink.lines, 'IBSM-1029')).toEqual([999, 500]);
    // quiet for an interval: the pair is forgotten, the next line is written again
    t.advance(60_000);
    t.log.from(7).warn('SMInfo Set from an SM with another SM_Key ignored', { lid: 7 });
    expect(countCode(t.sink.lines, 'IBSM-1029')).toBe(2);
  });

  it('sources and codes are counted apart; a line not from a remote party is never limited', () => {
    const t = manualLimiter();
    for (let i = 0; i < 10; i++) {
      t.log.from(1).warn('malformed trap ignored', { from: 1 });
      t.log.from(2).warn('malformed trap ignored', { from: 2 });
      t.log.from(1).info('trap received', { trap: 128, from: 1 });
      t.log.info('heavy sweep requested', { reason: 'test' });
    }
    expect(countCode(t.sink.lines, 'IBSM-3002')).toBe(2);
    expect(countCode(t.sink.lines, 'IBSM-3001')).toBe(1);
    expect(countCode(t.sink.lines, 'IBSM-1003')).toBe(10);
  });

  it('many sources: at most linesPerInterval first lines, the rest in one summary of source "*"; keys bounded', () => {
    const t = manualLimiter({ linesPerInterval: 20, maxKeys: 50 });
    for (let s = 0; s < 10_000; s++) t.log.from(s).warn('malformed trap ignored', { from: s });
    expect(countCode(t.sink.lines, 'IBSM-3002')).toBe(20);
    t.advance(60_000);
    expect(suppressedOf(t.sink.lines, '\\*').length + suppressedOf(t.sink.lines, '*').length).toBeGreaterThan(0);
    expect(t.sink.lines.filter((l) => l.includes('source=*'))[0]).toContain('suppressed=9980');
    // The next interval: 20 more sources, and never more than maxKeys pairs remembered.
    for (let s = 0; s < 10_000; s++) t.log.from(s + 10_000).warn('malformed trap ignored', { from: s });
    expect(countCode(t.sink.lines, 'IBSM-3002')).toBe(40);
    expect(t.sink.lines.length).toBeLessThan(50);
  });

  it('flush writes what is pending (at stop)', () => {
    const t = manualLimiter();
    for (let i = 0; i < 3; i++) t.log.from('10.0.0.1').warn('web view request failed', { url: '/' });
    t.limiter.flush();
    expect(suppressedOf(t.sink.lines, 'IBSM-8031')).toEqual([2]);
  });
});

describe('the remote lines of the log-code table are the lines logged through Logger.from', () => {
  it('every call through from(...) has a row marked remote, and every remote row is logged so', () => {
    const src = (dir: string): string[] =>
      readdirSync(dir).flatMap((f) => {
        const p = path.join(dir, f);
        return statSync(p).isDirectory() ? src(p) : p.endsWith('.ts') ? [readFileSync(p, 'utf8')] : [];
      });
    const text = src(path.resolve('src')).join('\n');
    // `x.from(source).warn('msg'` or a RemoteLog kept in a variable named remote: `remote.warn('msg'`
    const viaFrom = new Set([...text.matchAll(/(?:\.from\([^;]*?\)|\bremote)\.(?:debug|info|warn|error)\(\s*'((?:\\.|[^'\\])*)'/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1')));
    const remoteRows = new Set(LOG_CODES.filter((c) => c.remote).map((c) => c.msg));
    expect([...viaFrom].filter((m) => !remoteRows.has(m))).toEqual([]);
    expect([...remoteRows].filter((m) => !viaFrom.has(m))).toEqual([]);
  });
});

describe('through the SM and SA on the in-process fabric', () => {
  it('5,000 SMInfo Sets with another SM_Key from one host: refused, and one IBSM-1029 line, not 5,000', async () => {
    const r = await bringUp('gen:fattree2:leaves=2,spines=1,hosts=2', { subnet: { smKey: 0x1111n } });
    const ep = r.sim.attach(r.cas[1]!);
    ep.register(MgmtClass.SubnLid, 1);
    const answers: number[] = [];
    ep.onReceive((m: { data: Uint8Array }) => answers.push(((m.data[4]! << 8) | m.data[5]!) & 0x7fff));
    const smLid = r.subnet.sm.current!.smLid;
    const rpc = r.rpc;
    for (let i = 0; i < 5000; i++) {
      const mad = rpc.buildSmpLid(Method.Set, SmpAttr.SMInfo, 1 /* HANDOVER */);
      SMInfo.encode({ guid: 0xbad0n + BigInt(i), smKey: 0x2222n, actCount: i, priority: 15, smState: 3 }, mad, SMP_DATA_OFFSET);
      mad[8] = (i >>> 24) & 0xff; // a TID of its own
      mad[9] = (i >>> 16) & 0xff;
      mad[10] = (i >>> 8) & 0xff;
      mad[11] = i & 0xff;
      ep.send(mad, { lid: smLid, qpn: 0 });
      if (i % 250 === 249) await r.clock.advanceAsync(1);
    }
    await r.clock.advanceAsync(10);
    expect(answers.length).toBe(5000);
    expect(answers.every((s) => s === 7)).toBe(true); // refused, every one
    expect(r.subnet.sm.state).toBe('master');
    expect(countCode(r.sink.lines, 'IBSM-1029')).toBe(1);
    (r.subnet as unknown as { o: { log: Logger } }).o.log.limiter.flush();
    expect(suppressedOf(r.sink.lines, 'IBSM-1029')).toEqual([4999]);
    r.subnet.stop();
  });

  it('SA MADs with random attributes and methods: the metrics keep one "other" series, not one per ID', async () => {
    const r = await bringUp('gen:fattree2:leaves=2,spines=1,hosts=2');
    const metrics = new SmMetrics(r.subnet, r.rpc);
    const ep = r.sim.attach(r.cas[1]!);
    ep.register(MgmtClass.SubnAdm, 2);
    const smLid = r.subnet.sm.current!.smLid;
    const rng = new Rng(29);
    const before = metrics.render();
    for (let i = 0; i < 4000; i++) {
      const mad = saRequest({ method: Method.Get, attrId: SaAttr.NodeRecord, tid: BigInt(i + 1) });
      const attr = rng.int(0x10000);
      mad[16] = attr >> 8;
      mad[17] = attr & 0xff;
      // a method the SA agent takes (the transport drops the others), now and then one it does not
      mad[3] = i % 8 === 7 ? rng.int(0x80) : [Method.Get, Method.GetTable, Method.Set, Method.Delete, Method.GetMulti, Method.GetTraceTable][rng.int(6)]!;
      ep.send(mad, { lid: smLid, qpn: 1, qkey: SA_QKEY });
      if (i % 200 === 199) await r.clock.advanceAsync(1);
    }
    await r.clock.advanceAsync(10);
    expect(r.subnet.sa!.stats.received).toBeGreaterThan(3000);
    // Methods the umad agent would not pass reach the server from a transport that passes all.
    for (let i = 0; i < 300; i++) {
      const mad = saRequest({ method: Method.Get, attrId: SaAttr.NodeRecord, tid: BigInt(100_000 + i) });
      mad[3] = 0x20 + (i % 0x50);
      mad[16] = 0xff;
      mad[17] = i & 0xff;
      r.subnet.sa!.process({ data: mad, addr: { lid: 3, qpn: 1, qkey: SA_QKEY }, status: 0 });
    }
    const text = metrics.render();
    const attrs = new Set([...text.matchAll(/^ibsm_sa_requests_total\{attribute="([^"]+)"\}/gm)].map((m) => m[1]));
    expect(attrs.has('other')).toBe(true);
    expect([...attrs].every((a) => a === 'other' || /^[A-Z][A-Za-z]+$/.test(a!))).toBe(true);
    expect(attrs.size).toBeLessThanOrEqual(Object.keys(SaAttr).length + 1);
    const durations = new Set([...text.matchAll(/^ibsm_sa_request_duration_seconds_count\{([^}]*)\}/gm)].map((m) => m[1]));
    expect(durations.size).toBeLessThanOrEqual((Object.keys(SaAttr).length + 1) * (Object.keys(Method).length + 1));
    expect([...durations].some((d) => d!.includes('attribute="other"'))).toBe(true);
    expect([...durations].some((d) => d!.includes('method="other"'))).toBe(true);
    // Every series exists from the start: the flood adds none (only the answers' statuses may).
    const series = (t: string, name: string) => t.split('\n').filter((l) => l.startsWith(name + '{')).map((l) => l.replace(/ [^ ]+$/, ''));
    expect(series(text, 'ibsm_sa_request_duration_seconds_bucket')).toEqual(series(before, 'ibsm_sa_request_duration_seconds_bucket'));
    expect(series(text, 'ibsm_sa_requests_total')).toEqual(series(before, 'ibsm_sa_requests_total'));
    expect(text.length).toBeLessThan(before.length * 1.1);
    metrics.close();
    r.subnet.stop();
  });

  it('refusals at an SA bound are logged, once per requester an interval (the README says so)', async () => {
    const r = await bringUp('gen:fattree2:leaves=2,spines=1,hosts=4', { subnet: { saLimits: { groupsPerRequester: 4 } } });
    const hosts = [await client(r, r.cas[1]!), await client(r, r.cas[2]!)];
    const create = (c: (typeof hosts)[number]) => () =>
      c.sa.set(SaAttr.MCMemberRecord, MCMemberRecord, { mgid: 0n, portGid: c.gid, qKey: 1, pKey: 0xffff, joinState: JoinState.FullMember, tClass: 0, flowLabel: 0, sl: 0 }, MC_CREATE_MASK);
    const res = await drive(r.clock, pool(8, hosts.flatMap((h) => Array.from({ length: 50 }, () => create(h)))), 600_000);
    const refused = res.filter((x) => x.status === 'rejected' && x.reason instanceof SaStatusError && x.reason.status === SaStatus.NoResources).length;
    expect(refused).toBe(2 * 46);
    const lines = r.sink.lines.filter((l) => l.includes('IBSM-5006'));
    expect(lines.length).toBe(2); // one per requester
    expect(lines.map((l) => / lid=(\d+)/.exec(l)![1]).sort()).toEqual(hosts.map((h) => String(h.lid)).sort());
    r.subnet.stop();
  });
});
