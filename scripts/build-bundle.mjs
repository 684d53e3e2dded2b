#!/usr/bin/env node
// Bundles the ibsm command with esbuild into one file, dist/bundle/ibsm.js (the package's bin), so
// start-up reads and compiles one file instead of resolving, reading and compiling ~150 modules one
// by one. What main.ts imports when a command runs (the SM and SA for `run`, discovery for
// `discover`, the simulator for --sim, ...) is in the file but evaluated only then. (One file beat
// esbuild's code splitting into ~40 chunks: resolving the chunks cost more than compiling them.)
//
// dist/bundle/ sits at the depth of dist/cli/, so the paths the code derives from import.meta.url
// (../../package.json, ../../build/Release/ibsm_umad.node) hold in the bundle as in dist/cli/.
// The tsc build (dist/) stays what the library exports and what the tests run.
import { chmodSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist/bundle');
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [path.join(root, 'src/cli/main.ts')],
  outfile: path.join(outdir, 'ibsm.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  minifySyntax: true,
  logLevel: 'warning',
  // node: builtins are external on platform node; nothing else is: ibsm has no runtime dependency
  // but node-addon-api, which is a build-time header package.
});
chmodSync(path.join(outdir, 'ibsm.js'), 0o755);
