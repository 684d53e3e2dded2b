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
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
// The bin's V8 flags: a young generation of at most 4 MB per semi-space (V8's default lets it grow
// to 16 MB: three of them are RSS the SM's short-lived MAD objects never need; measured on the
// 432-host fat tree through ibsim: peak RSS 104 to 84 MB, CPU unchanged). Only the shebang can
// give them: V8 reads them before any script runs.
const out = path.join(outdir, 'ibsm.js');
const text = readFileSync(out, 'utf8');
if (!text.startsWith('#!/usr/bin/env node\n')) throw new Error(`${out} does not start with the expected #!/usr/bin/env node line`);
writeFileSync(out, '#!/usr/bin/env -S node --max-semi-space-size=4\n' + text.slice(text.indexOf('\n') + 1));
chmodSync(out, 0o755);
