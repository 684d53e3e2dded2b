#!/usr/bin/env node
// Builds the single executable ibsm (Node's single-executable applications, Node >= 20.12): a copy
// of the node running this script with a blob injected (postject) that holds
//   main        the launcher (scripts/launcher.mjs, 'sea'), CommonJS as a SEA's main must be
//   main.cjs, main.cjs.cache   the bundle and its V8 code cache (scripts/build-bundle.mjs, run first)
//   ibsm_umad.node             the native addon (npm run build:native), written out at its first use
//                              to a private per-version path and loaded with process.dlopen
// It runs with no Node installed: the node binary needs glibc, libstdc++ and libgcc (Node's
// official Linux builds link the rest in), the addon libibumad.
//
//   node scripts/build-sea.mjs [--out FILE] [--bundle DIR]   (defaults dist/sea/ibsm, dist/bundle)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launcher } from './launcher.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outIdx = process.argv.indexOf('--out');
const out = outIdx > 0 ? path.resolve(process.argv[outIdx + 1]) : path.join(root, 'dist/sea/ibsm');
const work = path.join(path.dirname(out), `.sea-${process.pid}`);

const fail = (msg) => {
  rmSync(work, { recursive: true, force: true });
  console.error(`build-sea: ${msg}`);
  process.exit(1);
};
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 12)) fail(`Node ${process.versions.node} has no SEA assets (node:sea getAsset): Node 20.12 or later is needed`);
const bundleIdx = process.argv.indexOf('--bundle');
const bundle = path.join(bundleIdx > 0 ? path.resolve(process.argv[bundleIdx + 1]) : path.join(root, 'dist/bundle'), 'main.cjs');
const addon = path.join(root, 'build/Release/ibsm_umad.node');
if (!existsSync(bundle)) fail(`${bundle} is missing: run npm run build first`);
if (!existsSync(addon)) fail(`${addon} is missing: install libibumad-dev and run npm run build:native`);
if (!existsSync(bundle + '.cache')) console.warn('build-sea: the bundle has no code cache (dist/bundle/main.cjs.cache): the executable compiles it at every start');

const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const addonBytes = readFileSync(addon);
const addonName = `ibsm_umad-${version}-${createHash('sha256').update(addonBytes).digest('hex').slice(0, 16)}.node`;

mkdirSync(work, { recursive: true });
const main = path.join(work, 'main.cjs');
writeFileSync(main, launcher('sea', { version, addon: addonName }));
const assets = { 'main.cjs': bundle, 'ibsm_umad.node': addon };
if (existsSync(bundle + '.cache')) assets['main.cjs.cache'] = bundle + '.cache';
const blob = path.join(work, 'sea.blob');
const config = path.join(work, 'sea-config.json');
writeFileSync(config, JSON.stringify({ main, output: blob, disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: false, assets }));
const made = spawnSync(process.execPath, ['--experimental-sea-config', config], { encoding: 'utf8' });
if (made.status !== 0) fail(`node --experimental-sea-config: ${made.stderr.trim()}`);

const tmp = path.join(work, 'ibsm');
copyFileSync(process.execPath, tmp);
chmodSync(tmp, 0o755);
const postject = path.join(root, 'node_modules/postject/dist/cli.js');
const inject = spawnSync(process.execPath, [postject, tmp, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'], { encoding: 'utf8' });
if (inject.status !== 0) fail(`postject: ${(inject.stderr || inject.stdout).trim()}`);
// (Not stripped: strip drops what postject injected, and the executable crashes at start.)
const v = spawnSync(tmp, ['--version'], { encoding: 'utf8', env: { ...process.env, IBSM_CODE_CACHE: 'report' } });
if (v.stdout.trim() !== `ibsm ${version}`) fail(`the executable does not run: ${v.status ?? v.signal} ${v.stderr.trim()}`);
if (!v.stderr.includes('code cache accepted') && assets['main.cjs.cache']) console.warn(`build-sea: ${v.stderr.trim()}`);
copyFileSync(tmp, out + '.new');
chmodSync(out + '.new', 0o755);
renameSync(out + '.new', out);
rmSync(work, { recursive: true, force: true });
console.log(`build-sea: ${out} (ibsm ${version}, ${(readFileSync(out).length / 1048576).toFixed(1)} MB)`);
