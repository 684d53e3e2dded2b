/** The layering of src/: every import of every file (static `import … from`, `import '…'`,
 * `export … from`, type-only ones included, and dynamic `import('…')`), resolved to the top-level
 * directory of src/ it lands in, must point down the stack:
 *
 *   util → (nothing)            wire → util                 transport → wire, util
 *   rpc → transport, wire, util model → wire, util          routing → model, wire, util (pure: no node: builtins)
 *   sim → model, transport, wire, util
 *   sm → rpc, transport, model, routing, wire, util (never sa)
 *   sa → rpc, transport, model, routing, wire, util (never sm)
 *   view → model, wire, util (pure: pictures of the fabric)
 *   web (the live web view's server) → everything below api but config
 *   root files (src/*.ts: subnet.ts, events.ts, index.ts) → anything but cli
 *   config (the option table, parser, config files), api (the package's API) → anything but cli (config not web)
 *   entry (the package's subpath entries, ibsm/routing, ibsm/wire, …) → anything but cli and web; nothing imports entry
 *   cli → anything; nothing but cli imports cli.
 *
 * A layer may always import itself; node builtins and npm packages are allowed except in routing.
 * The imports are read with TypeScript's own pre-processor (comments and strings are not imports). */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import ts from 'typescript';

const SRC = path.resolve(import.meta.dirname, '../src');
const ROOT = '(root)';

const LOWER: Record<string, readonly string[]> = {
  util: [],
  wire: ['util'],
  transport: ['wire', 'util'],
  rpc: ['transport', 'wire', 'util'],
  model: ['wire', 'util'],
  routing: ['model', 'wire', 'util'],
  sim: ['model', 'transport', 'wire', 'util'],
  sm: ['rpc', 'transport', 'model', 'routing', 'wire', 'util'],
  sa: ['rpc', 'transport', 'model', 'routing', 'wire', 'util'],
  view: ['model', 'wire', 'util'],
  web: ['util', 'wire', 'transport', 'rpc', 'model', 'routing', 'sim', 'sm', 'sa', 'view', ROOT],
  [ROOT]: ['util', 'wire', 'transport', 'rpc', 'model', 'routing', 'sim', 'sm', 'sa', 'view', ROOT, 'config', 'api'],
  config: ['util', 'wire', 'transport', 'rpc', 'model', 'routing', 'sim', 'sm', 'sa', 'view', ROOT, 'api'],
  api: ['util', 'wire', 'transport', 'rpc', 'model', 'routing', 'sim', 'sm', 'sa', 'view', ROOT, 'config', 'web'],
  entry: ['util', 'wire', 'transport', 'rpc', 'model', 'routing', 'sim', 'sm', 'sa', 'view', 'config', 'api'],
  cli: ['util', 'wire', 'transport', 'rpc', 'model', 'routing', 'sim', 'sm', 'sa', 'view', ROOT, 'config', 'api', 'web', 'cli'],
};
/** Layers that may not use node builtins. */
const PURE = new Set(['routing', 'view']);
const BUILTINS = new Set(builtinModules);

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) return walk(p);
    return /\.(ts|mts|cts)$/.test(e) && !e.endsWith('.d.ts') ? [p] : [];
  });
}

/** The layer of a path under src/ (a file directly in src/ is a root file). */
function layerOf(abs: string): string | undefined {
  const rel = path.relative(SRC, abs);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined; // outside src/
  const parts = rel.split(path.sep);
  return parts.length === 1 ? ROOT : parts[0];
}

interface Arrow {
  file: string;
  spec: string;
  from: string;
  to: string;
}

function importsOf(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName);
}

/** Every offending arrow, as "file → import (from → to: why)". */
function violations(): { arrows: Arrow[]; bad: string[] } {
  const arrows: Arrow[] = [];
  const bad: string[] = [];
  for (const file of walk(SRC).sort()) {
    const rel = path.relative(SRC, file).split(path.sep).join('/');
    const from = layerOf(file)!;
    if (!(from in LOWER)) {
      bad.push(`${rel}: not in any known layer (${from}); add it to the layering`);
      continue;
    }
    for (const spec of new Set(importsOf(file))) {
      if (spec.startsWith('.') || spec.startsWith('/')) {
        const target = path.resolve(path.dirname(file), spec);
        const to = layerOf(target);
        if (to === undefined) {
          bad.push(`${rel} → ${spec}: outside src/`);
          continue;
        }
        arrows.push({ file: rel, spec, from, to });
        if (to !== from && !LOWER[from]!.includes(to)) bad.push(`${rel} → ${spec} (${from} → ${to})`);
        continue;
      }
      const builtin = spec.startsWith('node:') || BUILTINS.has(spec.split('/')[0]!);
      if (builtin && PURE.has(from)) bad.push(`${rel} → ${spec} (${from} is pure: no node builtins)`);
      // npm packages and (elsewhere) builtins are allowed
    }
  }
  return { arrows, bad };
}

describe('layering of src/', () => {
  it('the import reader sees static, type-only, re-export and dynamic imports, and no commented-out ones', () => {
    const seen = ts.preProcessFile(
      [
        "// import x from './commented.js';",
        "import {\n  a,\n  b,\n} from './multi-line.js';",
        "import type { T } from './type-only.js';",
        "export * from './re-export.js';",
        "export { c } from './named-re-export.js';",
        "import './side-effect.js';",
        "const m = await import('./dynamic.js');",
        "const s = \"import('./in-a-string.js')\";",
      ].join('\n'),
      true,
      true,
    ).importedFiles.map((f) => f.fileName);
    expect(seen).toEqual(['./multi-line.js', './type-only.js', './re-export.js', './named-re-export.js', './side-effect.js', './dynamic.js']);
    // and on the real tree: every layer is seen importing something (the walk is not vacuous)
    const { arrows } = violations();
    const froms = new Set(arrows.map((a) => a.from));
    for (const l of ['util', 'wire', 'transport', 'rpc', 'model', 'routing', 'sim', 'sm', 'sa', 'view', 'config', 'api', 'entry', 'cli', ROOT]) expect(froms.has(l), l).toBe(true);
    expect(arrows.length).toBeGreaterThan(100);
    expect(arrows.some((a) => a.file === 'cli/main.ts' && a.spec === './route.js')).toBe(true); // a dynamic import
  });

  it('every import points down the stack', () => {
    expect(violations().bad).toEqual([]);
  });
});

/** The SM's decision core (issue #31): sm/controller.ts and the files it is made of. They, and
 * everything they import, are pure: only the core itself, wire/ and util/ (no clock, no logger:
 * util/clock.ts and util/log.ts are I/O), no node builtin or npm package, and no ambient time,
 * timer, randomness or process state in the core's own code (time comes in as an argument). */
const CORE = ['sm/controller.ts', 'sm/controller-types.ts', 'sm/election.ts', 'sm/sweep-schedule.ts'];
const CORE_MAY_REACH = (rel: string): boolean => CORE.includes(rel) || ((rel.startsWith('wire/') || rel.startsWith('util/')) && rel !== 'util/clock.ts' && rel !== 'util/log.ts');
const AMBIENT = /\b(Date\s*\.\s*now|new\s+Date|setTimeout|setInterval|setImmediate|queueMicrotask|Math\s*\.\s*random|performance\s*\.|process\s*\.|globalThis)\b/;

function resolveTs(fromFile: string, spec: string): string {
  return path.resolve(path.dirname(fromFile), spec).replace(/\.js$/, '.ts');
}

/** Code without its comments and string literals (what AMBIENT is matched against). */
function codeOnly(text: string): string {
  const sc = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, text);
  let out = '';
  for (let k = sc.scan(); k !== ts.SyntaxKind.EndOfFileToken; k = sc.scan()) {
    if (k === ts.SyntaxKind.StringLiteral || k === ts.SyntaxKind.NoSubstitutionTemplateLiteral) out += '""';
    else out += sc.getTokenText() + ' ';
  }
  return out;
}

/** Every file the core reaches through its imports, and what is wrong with each. */
function coreReach(): { reached: string[]; bad: string[] } {
  const seen = new Set<string>();
  const bad: string[] = [];
  const todo = CORE.map((f) => path.join(SRC, f));
  while (todo.length) {
    const file = todo.pop()!;
    const rel = path.relative(SRC, file).split(path.sep).join('/');
    if (seen.has(rel)) continue;
    seen.add(rel);
    if (!CORE_MAY_REACH(rel)) bad.push(`${rel}: reached from the controller, outside its pure core (wire/, util/ but clock and log)`);
    for (const spec of importsOf(file)) {
      if (spec.startsWith('.')) todo.push(resolveTs(file, spec));
      else bad.push(`${rel} → ${spec}: the controller's core imports no builtin or package`);
    }
    if (CORE.includes(rel) && AMBIENT.test(codeOnly(readFileSync(file, 'utf8')))) bad.push(`${rel}: uses ambient time, timers, randomness or process state (${AMBIENT.exec(codeOnly(readFileSync(file, 'utf8')))![0]})`);
  }
  return { reached: [...seen].sort(), bad };
}

describe("the SM controller's pure core", () => {
  it('the checks see a timer in code and not in a comment or a string', () => {
    expect(AMBIENT.test(codeOnly('const x = 1; // setTimeout(f, 1)\nconst s = "Date.now()";'))).toBe(false);
    expect(AMBIENT.test(codeOnly('const t = Date.now();'))).toBe(true);
    expect(CORE_MAY_REACH('util/clock.ts')).toBe(false);
    expect(CORE_MAY_REACH('sm/sm.ts')).toBe(false);
  });

  it('imports only itself, wire/ and util/ (no clock, no log), and reads no ambient time', () => {
    const { reached, bad } = coreReach();
    expect(bad).toEqual([]);
    for (const f of CORE) expect(reached, f).toContain(f);
    expect(reached.some((f) => f.startsWith('wire/'))).toBe(true); // the walk follows imports
  });
});
