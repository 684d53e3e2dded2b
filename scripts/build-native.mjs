#!/usr/bin/env node
// Builds the libibumad addon with node-gyp against the local Node headers (no download).
// With --optional (the npm install hook) a machine without libibumad-dev is not an error:
// the simulated fabric still works, and asking for the umad backend names the missing package.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const optional = process.argv.includes('--optional');
const header = '/usr/include/infiniband/umad.h';

if (!existsSync(path.join(root, 'binding.gyp'))) process.exit(0);
if (!existsSync(header)) {
  const msg = `ibsm: ${header} not found; the native umad transport is not built (install the Debian package libibumad-dev, then run: npm run build:native)`;
  if (optional) {
    console.warn(msg);
    process.exit(0);
  }
  console.error(msg);
  process.exit(1);
}
const require = createRequire(import.meta.url);
let gyp;
try {
  gyp = require.resolve('node-gyp/bin/node-gyp.js');
} catch {
  gyp = null;
}
const nodedir = existsSync('/usr/include/node/node_api.h') ? ['--nodedir=/usr'] : [];
const args = gyp ? [gyp, 'rebuild', ...nodedir] : [path.join(path.dirname(process.execPath), '../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js'), 'rebuild', ...nodedir];
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
if (r.status !== 0) {
  const msg = 'ibsm: building the native umad addon failed (see the node-gyp output above)';
  if (optional) {
    console.warn(msg + '; the simulated fabric still works');
    process.exit(0);
  }
  console.error(msg);
  process.exit(1);
}
