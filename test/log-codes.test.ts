/** Stable log codes: every log message in src/ has a code in src/util/log-codes.ts (with the level
 * it is logged at), every code is used, docs/log-codes.md is the generated text, and the Logger
 * prints the code (text column, JSON field). Also the TTY progress line a log line clears. */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { LOG_AREAS, LOG_CODES, logCodeOf, logCodesMarkdown } from '../src/util/log-codes.js';
import { Logger, MemorySink, ProgressTty } from '../src/util/log.js';
import { render } from './helpers/terminal.js';

const SRC = path.resolve('src');

function sources(dir = SRC): string[] {
  const out: string[] = [];
  for (const f of readdirSync(dir)) {
    const p = path.join(dir, f);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Every call `x.info('...')`, `warn("...")`, ... whose first argument is a literal: file, level,
 * quote and text (unescaped). Template literals are found too (they must not be there). */
function logCalls(): Array<{ file: string; level: string; quote: string; msg: string }> {
  const re = /(?:\.|\b)(debug|info|warn|error)\(\s*(['"`])((?:\\.|(?!\2)[^\\])*)\2/g;
  const out: Array<{ file: string; level: string; quote: string; msg: string }> = [];
  for (const file of sources()) {
    if (file.endsWith(path.join('util', 'log-codes.ts'))) continue;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(re)) out.push({ file: path.relative(SRC, file), level: m[1]!, quote: m[2]!, msg: m[3]!.replace(/\\(.)/g, '$1') });
  }
  return out;
}

describe('log codes', () => {
  const calls = logCalls();

  it('finds the log calls of the source (the scan is not vacuous)', () => {
    expect(calls.length).toBeGreaterThan(80);
    expect(calls.some((c) => c.msg === 'SUBNET UP' && c.level === 'info')).toBe(true);
    expect(calls.some((c) => c.msg === 'port is in no partition' && c.level === 'warn')).toBe(true); // through a callback
  });

  it('no log message is a template string: constant text, the variable parts in the fields', () => {
    expect(calls.filter((c) => c.quote === '`').map((c) => `${c.file}: ${c.msg}`)).toEqual([]);
  });

  it('every log message of src/ has a code, logged at the level the table gives', () => {
    const missing = calls.filter((c) => logCodeOf(c.msg) === undefined).map((c) => `${c.file}: ${c.level} "${c.msg}"`);
    expect(missing).toEqual([]);
    const byMsg = new Map(LOG_CODES.map((c) => [c.msg, c]));
    const wrongLevel = calls.filter((c) => byMsg.get(c.msg)!.level !== c.level).map((c) => `${c.file}: ${c.level} "${c.msg}" (table: ${byMsg.get(c.msg)!.level})`);
    expect(wrongLevel).toEqual([]);
  });

  it('every code of the table is used: its message is a string in src/', () => {
    const text = sources()
      .filter((f) => !f.endsWith(path.join('util', 'log-codes.ts')))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const quoted = (m: string): string[] => [`'${m.replace(/'/g, "\\'")}'`, `"${m}"`];
    const unused = LOG_CODES.filter((c) => !quoted(c.msg).some((q) => text.includes(q))).map((c) => `${c.code} "${c.msg}"`);
    expect(unused).toEqual([]);
  });

  it('codes are unique, well-formed and in a known area; messages are unique; meanings are one line', () => {
    const codes = LOG_CODES.map((c) => c.code);
    expect(new Set(codes).size).toBe(codes.length);
    expect(new Set(LOG_CODES.map((c) => c.msg)).size).toBe(codes.length);
    const areas = new Set(LOG_AREAS.map((a) => a.digit));
    for (const c of LOG_CODES) {
      expect(c.code).toMatch(/^IBSM-[1-9]\d{3}$/);
      expect(areas.has(c.code[5]!)).toBe(true);
      expect(c.meaning).not.toMatch(/\n/);
      expect(c.meaning.length).toBeGreaterThan(5);
    }
  });

  it('docs/log-codes.md is the text generated from the table (npm run docs), listing every code', () => {
    const doc = readFileSync(path.resolve('docs/log-codes.md'), 'utf8');
    expect(doc).toBe(logCodesMarkdown());
    for (const c of LOG_CODES) expect(doc).toContain(`| ${c.code} | ${c.level} |`);
    // and nothing but the table's codes
    expect(new Set(doc.match(/IBSM-\d{4}/g)).size).toBe(LOG_CODES.length);
  });

  it('the Logger prints the code: a fixed column in text, a "code" field in JSON', () => {
    const sink = new MemorySink();
    const now = (): Date => new Date('2026-01-02T03:04:05.000Z');
    const text = new Logger(sink, 'debug', 'text', {}, now);
    text.warn('trap storm: traps from this port damped (repressed, not logged, no sweep) until it calms down', { lid: 7 });
    text.info('SUBNET UP', { nodes: 3 });
    text.info('a message without a code');
    expect(sink.lines[0]).toBe('2026-01-02T03:04:05.000Z warn  IBSM-3003 trap storm: traps from this port damped (repressed, not logged, no sweep) until it calms down lid=7');
    expect(sink.lines[1]).toBe('2026-01-02T03:04:05.000Z info  IBSM-1001 SUBNET UP nodes=3');
    expect(sink.lines[2]).toBe('2026-01-02T03:04:05.000Z info  -         a message without a code');
    const js = new MemorySink();
    const json = new Logger(js, 'info', 'json', {}, now);
    json.info('SUBNET UP', { nodes: 3, code: 'not this' });
    json.info('a message without a code');
    expect(JSON.parse(js.lines[0]!)).toEqual({ time: '2026-01-02T03:04:05.000Z', level: 'info', code: 'IBSM-1001', msg: 'SUBNET UP', nodes: 3 });
    expect(JSON.parse(js.lines[1]!).code).toBeNull();
  });

  it('a field named in the message in braces is said there (the "handover to <guid>" contract); the code stays', () => {
    const sink = new MemorySink();
    const now = (): Date => new Date('2026-01-02T03:04:05.000Z');
    new Logger(sink, 'info', 'text', {}, now).info('handover to {master}', { master: 0x2c9n, lid: 4 });
    expect(sink.lines[0]).toBe('2026-01-02T03:04:05.000Z info  IBSM-1024 handover to 0x00000000000002c9 lid=4');
    const js = new MemorySink();
    new Logger(js, 'info', 'json', {}, now).info('handover to {master}', { master: 0x2c9n });
    expect(JSON.parse(js.lines[0]!)).toMatchObject({ code: 'IBSM-1024', msg: 'handover to 0x00000000000002c9', master: '0x00000000000002c9' });
  });
});

describe('TTY progress line', () => {
  it('a log line clears the progress line first and draws it again after', () => {
    const out: string[] = [];
    const tty = new ProgressTty((s) => out.push(s));
    const log = new Logger(tty, 'info', 'text', {}, () => new Date(0));
    log.info('SUBNET UP'); // no progress line yet: written as is
    tty.progress('discover: nodes=3 smps=9');
    tty.progress('discover: nodes=3 smps=9'); // the same text is not drawn again
    log.warn('node left out of this sweep: it could not be read', { guid: 1n });
    tty.progress('lft: blocks=4');
    tty.end();
    log.info('SUBNET UP');
    expect(out).toEqual([
      '1970-01-01T00:00:00.000Z info  IBSM-1001 SUBNET UP\n',
      '\rdiscover: nodes=3 smps=9\x1b[K',
      '\r\x1b[K1970-01-01T00:00:00.000Z warn  IBSM-2002 node left out of this sweep: it could not be read guid=0x0000000000000001\ndiscover: nodes=3 smps=9',
      '\rlft: blocks=4\x1b[K',
      '\n',
      '1970-01-01T00:00:00.000Z info  IBSM-1001 SUBNET UP\n',
    ]);
    // On the screen (a terminal applying \r and ESC[K), every log line stands alone on its line.
    const screen = render(out.join(''));
    expect(screen).toEqual([
      '1970-01-01T00:00:00.000Z info  IBSM-1001 SUBNET UP',
      '1970-01-01T00:00:00.000Z warn  IBSM-2002 node left out of this sweep: it could not be read guid=0x0000000000000001',
      'lft: blocks=4',
      '1970-01-01T00:00:00.000Z info  IBSM-1001 SUBNET UP',
      '',
    ]);
  });
});

