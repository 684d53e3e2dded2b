#!/usr/bin/env node
// Bundles the ibsm command with esbuild into one file, so start-up reads and compiles one file
// instead of resolving, reading and compiling ~150 modules one by one. What main.ts imports when a
// command runs (the SM and SA for `run`, discovery for `discover`, the simulator for --sim, ...) is
// in the file but evaluated only then. (One file beat esbuild's code splitting into ~40 chunks:
// resolving the chunks cost more than compiling them.)
//
//   dist/bundle/main.cjs        the bundle (CommonJS: Node 20 has a code cache for scripts only)
//   dist/bundle/main.cjs.cache  V8's code cache of it, made here by one `ibsm run --once` on the
//                               default simulated fabric, so the functions start-up and a sweep use
//                               are in it compiled
//   dist/bundle/ibsm.cjs        the package's bin: compiles main.cjs with that cache (V8 checks it
//                               against its version, flags and the source, and compiles afresh
//                               when it does not fit) and runs the command
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
import { installEarlySignals } from '../dist/cli/signals.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist/bundle');
const code = path.join(outdir, 'main.cjs');
const bin = path.join(outdir, 'ibsm.cjs');
// The bin's V8 flags: a young generation of at most 4 MB per semi-space (V8's default lets it grow
// to 16 MB: three of them are RSS the SM's short-lived MAD objects never need; measured on the
// 432-host fat tree through ibsim: peak RSS 104 to 84 MB, CPU unchanged). Only the shebang can
// give them (V8 reads them before any script runs); the code cache is made with the same flags.
// (2 MB was measured too, with TurboFan held on a device, src/cli/tiering.ts: peak RSS at 432
// hosts 59.9 to 56.8 MB, but on ft3-large CPU 1,330 to 1,838 ms, median of 3: not taken.)
// --inspect-port: where Node's own SIGUSR1 handler would open the inspector (127.0.0.1:9229 by
// default, a debugger anyone on the host could attach to in a root process) is an address bind
// refuses (link-local, no interface): during Node's start-up, before the bin's first statement
// takes SIGUSR1 (src/cli/signals.ts), a SIGUSR1 opens nothing.
const NODE_FLAGS = ['--max-semi-space-size=4', '--inspect-port=[fe80::1]:9229'];
// What the shebang's env(1) drops before node starts: NODE_EXTRA_CA_CERTS makes Node 20 read and
// parse that certificate file at start-up, before any script runs (~45 ms of CPU for a system
// bundle of ~140 certificates, measured here with \`node -e 0\`: 88 vs 40 ms), and ibsm makes no TLS
// connection (its HTTP endpoints are plain HTTP; node:crypto serves the web view's WebSocket hash).
const UNSET_ENV = ['NODE_EXTRA_CA_CERTS'];
const SHEBANG = `#!/usr/bin/env -S ${UNSET_ENV.map((v) => `-u ${v} `).join('')}node ${NODE_FLAGS.join(' ')}`;

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

writeFileSync(
  bin,
  `${SHEBANG}
// The ibsm command (scripts/build-bundle.mjs): main.cjs compiled with its V8 code cache, then run.
'use strict';
// SIGTERM, SIGINT, SIGHUP and SIGUSR1 taken before anything else (src/cli/signals.ts): held for
// \`run\`, never Node's inspector.
(${installEarlySignals.toString()})(process.argv[2] === 'run');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const file = path.join(__dirname, 'main.cjs');
const argv = process.argv.slice(2);
// ibsm run --umad (and discover, query): the addon loaded first and asked to list the CAs on a thread of its own while
// this one compiles and evaluates the bundle (libibumad's first call reads sysfs; under ibsim,
// umad2sim writes its whole sysfs tree then, ~10 ms). The bundle takes the addon from here
// (transport/native.ts, the same path); any failure is left to it, which names the fix. (Under
// umad2sim with no ibsim listening the thread lists nothing: that first call would never return.)
const optsEnd = argv.indexOf('--');
const opts = optsEnd < 0 ? argv : argv.slice(0, optsEnd);
if ((argv[0] === 'run' || argv[0] === 'discover' || argv[0] === 'query') && opts.includes('--umad') && !opts.some((a) => a === '--help' || a === '-h' || a === '--version' || a === '-V')) {
  try {
    const addon = { exports: {} };
    process.dlopen(addon, path.join(__dirname, '../../build/Release/ibsm_umad.node'));
    globalThis.__ibsmNative = addon.exports;
    // The thread waited for at exit: libibumad (and umad2sim) not left half way through.
    if (typeof addon.exports.prefetchCas === 'function' && addon.exports.prefetchCas()) process.once('exit', () => addon.exports.endPrefetch());
  } catch {}
}
let cachedData;
try {
  cachedData = fs.readFileSync(file + '.cache');
} catch {}
// latin1: the bundle is ASCII (built so), read into a one-byte string without a UTF-8 decode.
// CommonJS's wrapper written out, and this file's require handed to the bundle (it requires only
// node: builtins, and sits in this directory): node:module, which Module.wrap and createRequire
// would load, costs 1-2 ms of start-up (node:module loads the ESM loader and source maps).
const script = new vm.Script('(function (exports, require, module, __filename, __dirname) { ' + fs.readFileSync(file, 'latin1') + '\\n});', { filename: file, cachedData });
const hadCache = cachedData !== undefined;
// The cache's 0.8 MB buffer is not needed once compiled: let it go (it would stay for the process's life).
cachedData = undefined;
if (process.env.IBSM_CODE_CACHE === 'report') process.stderr.write('ibsm: code cache ' + (hadCache ? (script.cachedDataRejected ? 'rejected' : 'accepted') : 'absent') + '\\n');
// --opt back first: V8 checks a cache against the hash of its flags, and run --umad sets --no-opt for a while (src/cli/tiering.ts).
if (process.env.IBSM_CODE_CACHE === 'write') process.once('exit', () => (require('node:v8').setFlagsFromString('--opt'), fs.writeFileSync(file + '.cache', script.createCachedData())));
const m = { exports: {} };
script.runInThisContext().call(m.exports, m.exports, require, m, file, __dirname);
// PROCESS_IO: stdout/stderr made only when used (src/cli/stdio.ts)
// ibsm run is done when main resolves (the SM stopped, its log lines written synchronously, its
// sockets closed): it exits there, without Node's teardown of the V8 heap (4-5 ms from SUBNET UP
// to exit with --once, median of 15 through ibsim). The other commands may still be writing.
m.exports.main(argv, m.exports.PROCESS_IO).then((code) => {
  process.exitCode = code;
  if (argv[0] === 'run') process.exit(code);
});
`,
);
chmodSync(bin, 0o755);

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
