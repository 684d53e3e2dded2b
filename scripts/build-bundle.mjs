#!/usr/bin/env node
// Bundles the ibsm command with esbuild into one file, so start-up reads and compiles one file
// instead of resolving, reading and compiling ~150 modules one by one. What main.ts imports when a
// command runs (the SM and SA for `run`, discovery for `discover`, the simulator for --sim, ...) is
// in the file but evaluated only then. (One file beat esbuild's code splitting into ~40 chunks:
// resolving the chunks cost more than compiling them.)
//
//   node scripts/build-bundle.mjs [--out DIR/SUBDIR]   (default dist/bundle)
//
//   dist/bundle/main.cjs        the bundle (CommonJS: Node 20 has a code cache for scripts only)
//   dist/bundle/main.cjs.cache  V8's code cache of it, made here by one `ibsm run --once` on the
//                               default simulated fabric, so the functions start-up and a sweep use
//                               are in it compiled
//   dist/bundle/ibsm.cjs        the package's bin (scripts/launcher.mjs): compiles main.cjs with that cache (V8 checks it
//                               against its version, flags and the source, and compiles afresh
//                               when it does not fit) and runs the command
//   dist/bundle/ibsm            the launcher (native/ibsm-launch.c): signals handled from the
//                               process's first instant, ibsm.cjs run as its child
//
// dist/bundle/ sits at the depth of dist/cli/, so the paths the code derives from import.meta.url
// (../../package.json, ../../build/Release/ibsm_umad.node) hold in the bundle as in dist/cli/.
// The tsc build (dist/) stays what the library exports and what the tests run; it comes first
// (the bin takes src/cli/signals.ts's installEarlySignals from dist/cli/signals.js).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildLauncher } from './build-native.mjs';
import { launcher, NODE_FLAGS, SET_ENV, UNSET_ENV } from './launcher.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// --out DIR: another directory at dist/bundle's depth (so the derived paths hold), for a build
// that must not race another (test/package-deb builds its own in .tmp/ while test/bundle rebuilds
// dist/bundle).
const outIdx = process.argv.indexOf('--out');
const outdir = outIdx > 0 ? path.resolve(process.argv[outIdx + 1]) : path.join(root, 'dist/bundle');
if (path.dirname(path.dirname(outdir)) !== root) {
  console.error(`build-bundle: --out ${outdir}: the bundle must sit two levels under ${root} (it finds ../../package.json and the addon from there)`);
  process.exit(2);
}
const code = path.join(outdir, 'main.cjs');
const bin = path.join(outdir, 'ibsm.cjs');
// The bin's node flags and shebang, and its text: scripts/launcher.mjs (the single executable's too).

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });
await build({
  entryPoints: [path.join(root, 'src/cli/main.ts')],
  outfile: code,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  minifySyntax: true,
  // Whitespace and comments out (990 to 718 KB): less to read, hash and hold as a string at every
  // start. Names stay (no identifier minifying): stack traces and class names read as in src/.
  minifyWhitespace: true,
  legalComments: 'none',
  logLevel: 'warning',
  // import.meta.url as the ESM modules see it: the bundle's own file URL.
  define: { 'import.meta.url': '__ibsmMetaUrl' },
  banner: { js: "var __ibsmMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  // node: builtins are external on platform node; nothing else is: ibsm has no runtime dependency
  // but node-addon-api, which is a build-time header package.
});
// The entry's shebang line stays out of the bundle (the bin wraps the source in a function).
// The source is kept ASCII: one non-ASCII character makes V8 hold the whole script as a two-byte
// string (twice its ~1 MB, and a slower UTF-8 decode at every start). esbuild escapes strings
// (charset ascii); what it leaves is in the comments it keeps, escaped here the same way.
let text = readFileSync(code, 'utf8');
if (text.startsWith('#!')) text = '//' + text.slice(2);
const ascii = (t) => t.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
writeFileSync(code, ascii(text));

writeFileSync(bin, launcher('bin'));
chmodSync(bin, 0o755);
// The launcher (native/ibsm-launch.c): the process signals are sent to from its first instant,
// running the bin with the node this was built with (or IBSM_NODE, or node on PATH), the
// shebang's flags and environment. The packaged entry; npm's bin stays ibsm.cjs (a script).
try {
  buildLauncher({ out: path.join(outdir, 'ibsm'), target: path.basename(bin), node: process.execPath, flags: NODE_FLAGS, unset: UNSET_ENV, set: SET_ENV });
} catch (e) {
  console.warn(`build-bundle: no launcher (dist/bundle/ibsm): ${e.message}`);
}

// The generated codecs, precompiled: the layout engine generates each layout's encoder, decoder
// and view class from its field table on first use (src/wire/codegen.ts, view.ts), with
// `new Function`, which V8's code cache cannot hold: every start parsed and compiled them again.
// One SM run on the default simulated fabric records the sources it generates; they go at the top
// of the bundle as functions (so the cache below holds them compiled), in a map by a short key,
// where codegen.ts's generatedFactory finds them and uses one only when its source is exactly the
// text it generated. A source the run did not generate is compiled as before. The generated code names nothing of the bundle (only its
// parameters and the globals Array and BigInt): checked below, as the bundle declares neither.
const recorded = path.join(outdir, 'codegen-record.json');
const recorder = path.join(outdir, 'codegen-record.cjs');
writeFileSync(recorder, `globalThis.__ibsmCodegenRecord = [];\nprocess.once('exit', () => require('node:fs').writeFileSync(${JSON.stringify(recorded)}, JSON.stringify(globalThis.__ibsmCodegenRecord)));\n`);
const rec = spawnSync(process.execPath, [...NODE_FLAGS, '--require', recorder, bin, 'run', '--once'], { cwd: outdir, env: process.env, encoding: 'utf8', timeout: 120_000 });
rmSync(recorder, { force: true });
if (rec.status === 0 && existsSync(recorded)) {
  if (/(?<![.\w$])(?:Array|BigInt)\s*=(?!=)|(?:function|class)\s+(?:Array|BigInt)\b|(?:var|let|const)\s+(?:[\w$]+\s*(?:=[^,;]*)?,\s*)*(?:Array|BigInt)\b/.test(text)) {
    throw new Error('build-bundle: the bundle declares Array or BigInt, which the precompiled codecs would see instead of the globals');
  }
  const seen = new Map(JSON.parse(readFileSync(recorded, 'utf8')));
  const prelude = `globalThis.__ibsmCodecs = new Map([\n${[...seen].map(([k, f]) => `[${JSON.stringify(k)}, ${f}],\n`).join('')}]);\n`;
  writeFileSync(code, ascii(prelude + text));
  // The source map: its lines move down by the prelude's.
  const map = JSON.parse(readFileSync(code + '.map', 'utf8'));
  map.mappings = ';'.repeat(prelude.split('\n').length - 1) + map.mappings;
  writeFileSync(code + '.map', JSON.stringify(map));
} else {
  console.warn(`build-bundle: no precompiled codecs (ibsm run --once exited ${rec.status ?? rec.signal}): ${(rec.stderr || '').trim().split('\n').pop()}`);
}
rmSync(recorded, { force: true });

// The code cache: one SM run on the default simulated fabric, cached after it ran.
const r = spawnSync(process.execPath, [...NODE_FLAGS, bin, 'run', '--once'], { cwd: outdir, env: { ...process.env, IBSM_CODE_CACHE: 'write' }, encoding: 'utf8', timeout: 120_000 });
if (r.status !== 0 || !existsSync(code + '.cache')) {
  console.warn(`build-bundle: no code cache (ibsm run --once exited ${r.status ?? r.signal}): ${(r.stderr || '').trim().split('\n').pop()}`);
  rmSync(code + '.cache', { force: true });
}
