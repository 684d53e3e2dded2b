/** SmConfig is computed from the option table (config/option-types.ts), not restated (#31): `tsc
 * --strict` on a program against the built declarations shows each config key of `ibsm run` with the
 * type of its value (an enum's choices as a literal union), the API's two extras (`sim` may be a
 * Fabric, `roots`), no other key; and a misspelt key, an old key, a bad enum value or a number for
 * a 64-bit key does not compile. */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { optionsOf, type OptionSpec } from '../src/config/options.js';
import { smConfigMarkdown } from '../src/api/sm-config.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const DIST = path.join(ROOT, 'dist');

/** The TS type a table entry's value has, written out. */
function typeText(o: OptionSpec): string {
  if (o.type === 'enum') return o.choices!.map((c) => `'${c}'`).join(' | ');
  return { boolean: 'boolean', string: 'string', int: 'number', key64: 'bigint', list: 'string[]' }[o.type];
}

/** tsc --strict on one file: its diagnostics, '' when it compiles. */
async function tsc(text: string): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-option-types-'));
  writeFileSync(path.join(dir, 't.ts'), text);
  const args = [TSC, '--strict', '--noEmit', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', '--typeRoots', path.join(ROOT, 'node_modules/@types'), 't.ts'];
  try {
    await promisify(execFile)(process.execPath, args, { cwd: dir, encoding: 'utf8', timeout: 240_000 });
    return '';
  } catch (e) {
    return String((e as { stdout?: string }).stdout ?? e);
  }
}

const HEAD = [
  `import type { SmConfig } from '${DIST}/api/sm-config.js';`,
  `import type { Fabric } from '${DIST}/model/fabric.js';`,
  'type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;',
  'declare function expectType<T extends true>(): void;',
];

describe('SmConfig, derived from the option table', () => {
  it('has every config key of ibsm run with its value type, and the API extras, and no other key', async () => {
    const run = optionsOf('run').filter((o) => o.key !== undefined);
    const keys = [...run.map((o) => o.key!), 'roots'];
    const lines = [
      ...HEAD,
      `expectType<Equal<keyof SmConfig, ${keys.map((k) => `'${k}'`).join(' | ')}>>();`,
      ...run.filter((o) => o.key !== 'sim').map((o) => `expectType<Equal<SmConfig['${o.key}'], ${typeText(o)} | undefined>>();`),
      "expectType<Equal<SmConfig['sim'], string | Fabric | undefined>>();",
      "expectType<Equal<SmConfig['roots'], bigint[] | undefined>>();",
      // the brief's examples, spelt out
      "expectType<Equal<SmConfig['sweepIntervalS'], number | undefined>>();",
      "expectType<Equal<SmConfig['logFormat'], 'text' | 'json' | undefined>>();",
      "expectType<Equal<SmConfig['smKey'], bigint | undefined>>();",
      "export const ok: SmConfig = { sim: 'gen:torus:3x3', sweepIntervalS: 0, pollIntervalMs: 250, mkeyLeaseS: 60, perfmgrIntervalS: 10, logMaxSizeMb: 1, logFormat: 'json', smKey: 1n, routing: ['minhop'], roots: [1n] };",
    ];
    expect(await tsc(lines.join('\n') + '\n')).toBe('');
  }, 300_000);

  it('a misspelt key, an old key, a wrong enum value, a number for a 64-bit key: each does not compile', async () => {
    const bad: Array<[string, RegExp]> = [
      ['export const a: SmConfig = { sweepIntervall: 1 };', /'sweepIntervall' does not exist in type 'SmConfig'/],
      ['export const b: SmConfig = { sweepInterval: 1 };', /'sweepInterval' does not exist in type 'SmConfig'\. Did you mean to write 'sweepIntervalS'\?/],
      ["export const c: SmConfig = { logFormat: 'xml' };", /Type '"xml"' is not assignable to type '"text" \| "json" \| undefined'/],
      ['export const d: SmConfig = { smKey: 1 };', /Type 'number' is not assignable to type 'bigint'/],
      ["export const e: SmConfig = { partEnforce: 'none' };", /Type '"none"' is not assignable to type '"both" \| "in" \| "out" \| "off" \| undefined'/],
    ];
    const out = await tsc([...HEAD, ...bad.map(([l]) => l)].join('\n') + '\n');
    bad.forEach(([line, error], i) => {
      const at = out.split('\n').filter((d) => d.startsWith(`t.ts(${HEAD.length + 1 + i},`)).join('\n');
      expect(at, line).toMatch(error);
    });
  }, 300_000);

  it("docs/api.md lists SmConfig's keys with type, unit, default and help, as the table has them (node scripts/gen-docs.mjs)", () => {
    const doc = readFileSync(path.join(ROOT, 'docs/api.md'), 'utf8');
    expect(doc).toContain(`<!-- sm-config -->\n${smConfigMarkdown()}\n<!-- /sm-config -->`);
    const rows = smConfigMarkdown().split('\n').slice(2);
    expect(rows.length).toBe(optionsOf('run').filter((o) => o.key !== undefined).length + 1);
    expect(rows).toContain("| `sweepIntervalS` | `number` | s | 10 | light sweep interval in seconds (0: none); each reads every switch and a share of the CA ports, every CA port at least once per 60 s of intervals (`--sweep-interval`, opensm.conf `sweep_interval`). |");
    expect(rows.find((r) => r.startsWith('| `logFormat` '))).toMatch(/^\| `logFormat` \| `'text' \\\| 'json'` \| {2}\| text \|/);
    expect(rows.find((r) => r.startsWith('| `logMaxSizeMb` '))).toMatch(/^\| `logMaxSizeMb` \| `number` \| MB \| 256 \|/);
  });
});
