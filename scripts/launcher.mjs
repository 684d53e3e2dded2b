// The launcher of the bundled ibsm command: the script that compiles the bundle (dist/bundle/main.cjs)
// with its V8 code cache and runs the command. One text, two homes:
//   'bin'  dist/bundle/ibsm.cjs (scripts/build-bundle.mjs): the bundle and its cache are files beside
//          it, the addon is build/Release/ibsm_umad.node, node is on PATH (the shebang);
//   'sea'  the single executable (scripts/build-sea.mjs): a copy of node that runs this as its main
//          script; the bundle, its cache and the addon are assets in the executable (node:sea), the
//          addon written out to a private per-version path before process.dlopen can load it.
import { installEarlySignals } from '../dist/cli/signals.js';

// The V8 flags ibsm runs with: a young generation of at most 4 MB per semi-space (V8's default lets
// it grow to 16 MB: three of them are RSS the SM's short-lived MAD objects never need; measured on
// the 432-host fat tree through ibsim: peak RSS 104 to 84 MB, CPU unchanged). (2 MB was measured
// too, with TurboFan held on a device, src/cli/tiering.ts: peak RSS at 432 hosts 59.9 to 56.8 MB,
// but on ft3-large CPU 1,330 to 1,838 ms, median of 3: not taken.) V8 reads it when it makes the
// heap, before any script runs: the bin gives it in its shebang; the single executable takes no
// node options of its own but NODE_OPTIONS (the package's systemd units set it), and sets it at
// its first statement too, where it no longer sizes the heap but keeps V8's flag hash, which a
// code cache is checked against, the one the cache was made with.
export const V8_FLAGS = ['--max-semi-space-size=4'];
// --inspect-port: where Node's own SIGUSR1 handler would open the inspector (127.0.0.1:9229 by
// default, a debugger anyone on the host could attach to in a root process) is an address bind
// refuses (link-local, no interface): during Node's start-up, before the launcher's first statement
// takes SIGUSR1 (src/cli/signals.ts), a SIGUSR1 opens nothing.
export const NODE_FLAGS = [...V8_FLAGS, '--inspect-port=[fe80::1]:9229'];
// What the shebang's env(1) drops before node starts: NODE_EXTRA_CA_CERTS makes Node 20 read and
// parse that certificate file at start-up, before any script runs (~45 ms of CPU for a system
// bundle of ~140 certificates, measured here with `node -e 0`: 88 vs 40 ms), and ibsm makes no TLS
// connection (its HTTP endpoints are plain HTTP; node:crypto serves the web view's WebSocket hash).
// (The single executable cannot drop it: Node reads it before the executable's script runs.)
export const UNSET_ENV = ['NODE_EXTRA_CA_CERTS'];
// What it sets: one malloc arena for every thread (glibc's default gives each of V8's and libuv's
// worker threads its own, whose freed memory stays resident): issue #29's 10,000 abusive
// connections left ~5 MB more RSS without it (peak 82.3 against 77.3 MB, idle 58); on the
// 11,664-host in-process run, median of 5, CPU 5.52 against 5.41 s, peak RSS 314 against 303 MB
// (scripts/bench/README.md, "Where the peak RSS went"). The package's units set it too.
export const SET_ENV = ['MALLOC_ARENA_MAX=1'];
export const SHEBANG = `#!/usr/bin/env -S ${UNSET_ENV.map((v) => `-u ${v} `).join('')}${SET_ENV.join(' ')} node ${NODE_FLAGS.join(' ')}`;

/** The single executable's addon: where it is written (root: under the package's cache
 * directory; another user: under that user's cache), checked private before it is trusted. Runs
 * inside the launcher (its source is written there): self-contained. `name` is per version and
 * per build (the addon's hash), so an upgrade never loads the old one. */
function seaAddonPath(name) {
  const fs = require('node:fs');
  const path = require('node:path');
  const euid = process.geteuid();
  const cache = euid === 0 ? '/var/cache' : process.env.XDG_CACHE_HOME || path.join(process.env.HOME || '/nonexistent', '.cache');
  const dir = path.join(cache, 'ibsm', 'native');
  const file = path.join(dir, name);
  // Every directory on the way, once it exists, is a directory of root's or this user's that no
  // one else may write to: no other user can put a file where this process loads code from.
  const fix = (p, what) => new Error(`${p} ${what}: the addon is loaded from ${file}; fix the directory's owner and mode (chown ${euid} ${p}; chmod go-w ${p}) or remove it`);
  const check = (p, leaf) => {
    const st = fs.lstatSync(p);
    if (!st.isDirectory()) throw fix(p, 'is not a directory');
    if (st.uid !== 0 && st.uid !== euid) throw fix(p, `belongs to uid ${st.uid}`);
    if ((st.mode & 0o022) !== 0 && !((st.mode & 0o1000) !== 0 && !leaf)) throw fix(p, 'is writable by group or others');
    if (leaf && (st.uid !== euid || (st.mode & 0o077) !== 0)) throw fix(p, 'is not private (mode 0700, this user\'s)');
  };
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const real = fs.realpathSync(dir);
  let p = '/';
  for (const part of real.split('/').filter(Boolean)) check((p = path.join(p, part)), p === real);
  const bytes = new Uint8Array(require('node:sea').getAsset('ibsm_umad.node'));
  try {
    const st = fs.lstatSync(file);
    if (st.isFile() && st.uid === euid && (st.mode & 0o022) === 0 && Buffer.from(fs.readFileSync(file)).equals(bytes)) return file;
    fs.unlinkSync(file);
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  // Written whole under another name, then renamed: a process that finds the file finds all of it.
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, bytes, { mode: 0o444, flag: 'wx' });
  fs.renameSync(tmp, file);
  return file;
}

/** The launcher's source. `sea`: { version, addon } (the version the executable reports, the
 * addon's file name under the private directory); absent for the bin. */
export function launcher(kind, sea) {
  const isSea = kind === 'sea';
  return `${isSea ? '' : SHEBANG + '\n'}// The ibsm command (scripts/launcher.mjs, ${isSea ? 'the single executable' : 'the bundled bin'}): main.cjs compiled with its V8 code cache, then run.
'use strict';
// SIGTERM, SIGINT, SIGHUP and SIGUSR1 taken before anything else (src/cli/signals.ts): held for
// \`run\`, never Node's inspector.
(${installEarlySignals.toString()})(process.argv[2] === 'run');
const fs = require('node:fs');
const path = require('node:path');
${
  isSea
    ? `const sea = require('node:sea');
// The flag hash the code cache was made with (scripts/launcher.mjs, V8_FLAGS), through V8's binding
// (node:v8 loads node:stream and its kin: src/cli/tiering.ts).
{
  const quiet = process.noDeprecation;
  process.noDeprecation = true;
  try { process.binding('v8').setFlagsFromString(${JSON.stringify(V8_FLAGS.join(' '))}); } catch {}
  process.noDeprecation = quiet;
}
globalThis.__ibsmVersion = ${JSON.stringify(sea.version)};
// The bundle's paths inside the executable (stack traces name /usr/lib/ibsm/ibsm/main.cjs).
const file = path.join(process.execPath, 'main.cjs');
let addonFile;
globalThis.__ibsmSeaAddon = () => addonFile ?? (addonFile = (${seaAddonPath.toString()})(${JSON.stringify(sea.addon)}));
const addonPath = () => globalThis.__ibsmSeaAddon();`
    : `const file = path.join(__dirname, 'main.cjs');
const addonPath = () => path.join(__dirname, '../../build/Release/ibsm_umad.node');`
}
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
    process.dlopen(addon, addonPath());
    globalThis.__ibsmNative = addon.exports;
    // The thread waited for at exit: libibumad (and umad2sim) not left half way through.
    if (typeof addon.exports.prefetchCas === 'function' && addon.exports.prefetchCas()) process.once('exit', () => addon.exports.endPrefetch());
  } catch {}
}
let cachedData;
try {
  cachedData = ${isSea ? "Buffer.from(sea.getAsset('main.cjs.cache'))" : "fs.readFileSync(file + '.cache')"};
} catch {}
// latin1: the bundle is ASCII (built so), read into a one-byte string without a UTF-8 decode.
// CommonJS's wrapper written out, and this file's require handed to the bundle (it requires only
// node: builtins${isSea ? ', all the executable\'s require loads' : ', and sits in this directory'}): node:module, which Module.wrap and createRequire
// would load, costs 1-2 ms of start-up (node:module loads the ESM loader and source maps).
const script = new (require('node:vm').Script)('(function (exports, require, module, __filename, __dirname) { ' + ${isSea ? "Buffer.from(sea.getAsset('main.cjs')).latin1Slice()" : "fs.readFileSync(file, 'latin1')"} + '\\n});', { filename: file, cachedData });
const hadCache = cachedData !== undefined;
// The cache's 0.8 MB buffer is not needed once compiled: let it go (it would stay for the process's life).
cachedData = undefined;
if (process.env.IBSM_CODE_CACHE === 'report') process.stderr.write('ibsm: code cache ' + (hadCache ? (script.cachedDataRejected ? 'rejected' : 'accepted') : 'absent') + '\\n');
${
  isSea
    ? ''
    : `// --opt back first: V8 checks a cache against the hash of its flags, and run --umad sets --no-opt for a while (src/cli/tiering.ts).
if (process.env.IBSM_CODE_CACHE === 'write') process.once('exit', () => (require('node:v8').setFlagsFromString('--opt'), fs.writeFileSync(file + '.cache', script.createCachedData())));
`
}const m = { exports: {} };
script.runInThisContext().call(m.exports, m.exports, require, m, file, ${isSea ? 'process.execPath' : '__dirname'});
// PROCESS_IO: stdout/stderr made only when used (src/cli/stdio.ts)
// ibsm run is done when main resolves (the SM stopped, its log lines written synchronously, its
// sockets closed): it exits there, without Node's teardown of the V8 heap (4-5 ms from SUBNET UP
// to exit with --once, median of 15 through ibsim). The other commands may still be writing.
m.exports.main(argv, m.exports.PROCESS_IO).then((code) => {
  process.exitCode = code;
  if (argv[0] === 'run') process.exit(code);
});
`;
}
