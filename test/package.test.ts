/** The package as a user gets it: `npm pack`, the tarball installed into an empty directory, and
 * every example of docs/api.md type-checked there with `tsc --strict` against the installed
 * declarations (importing `ibsm` by name) and run. The quick start is the done-when: SM on
 * a generated fabric, subnet-up event, a PathRecord, a link down seen as the topology change that
 * names the port. */
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const TSC = require.resolve('typescript/bin/tsc');
const TYPE_ROOTS = path.dirname(path.dirname(require.resolve('@types/node/package.json')));
const EXAMPLES = readdirSync(path.join(ROOT, 'docs/examples')).filter((f) => f.endsWith('.ts')).sort();

/** What each example must print (its own asserts check the rest). */
const EXPECT: Record<string, RegExp[]> = {
  'quickstart.ts': [/^subnet up: 8 nodes, 8 end ports, \d+ SMPs$/m, /^PathRecord to host-\d+ HCA-1: slid \d+ dlid \d+/m, /^topology changed: port 1 of "host-\d+ HCA-1" \(0x[0-9a-f]+\) removed$/m],
  'sa-client.ts': [/^10 NodeRecords, \d+ LinkRecords$/m, /^group created ff12:/m, /^group deleted mlid 0xc/m, /^report: trap 65 /m],
  'offline-route.ts': [/^engine ftree \(skipped: none\); \d+ CA pairs/m, /^round trip: \d+ nodes/m],
  'sim-faults.ts': [/^up through 5% MAD loss: [1-9]\d* MADs dropped/m, /^link down: /m, /^link up again; port state changes seen: .*->Down/m],
};

const run = (cmd: string, args: string[], cwd: string): string => execFileSync(cmd, args, { cwd, encoding: 'utf8', timeout: 240_000, stdio: ['ignore', 'pipe', 'pipe'] });

describe('the npm package', () => {
  it('docs/api.md shows every example verbatim, and every example is checked here', () => {
    const doc = readFileSync(path.join(ROOT, 'docs/api.md'), 'utf8');
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(4);
    for (const f of EXAMPLES) {
      const src = readFileSync(path.join(ROOT, 'docs/examples', f), 'utf8');
      expect(doc, f).toContain(`<!-- example: docs/examples/${f} -->\n\`\`\`ts\n${src}\`\`\``);
      expect(EXPECT[f], f).toBeDefined();
    }
  });

  it('packs, installs into an empty directory, and runs the examples type-checked with tsc --strict, importing ibsm by name', () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'ibsm-pack-'));
    // Stage the package's files with a fresh build (the repo's own dist/ is left alone), then pack.
    const stage = path.join(tmp, 'stage');
    mkdirSync(path.join(stage, 'scripts'), { recursive: true });
    for (const f of ['package.json', 'README.md', 'binding.gyp', 'native', 'docs/ibsm.8']) cpSync(path.join(ROOT, f), path.join(stage, f), { recursive: true });
    cpSync(path.join(ROOT, 'scripts/build-native.mjs'), path.join(stage, 'scripts/build-native.mjs'));
    run(process.execPath, [TSC, '-p', path.join(ROOT, 'tsconfig.json'), '--outDir', path.join(stage, 'dist')], ROOT);
    const packed = JSON.parse(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], stage)) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = packed[0]!.files.map((f) => f.path);
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files.some((f) => f.startsWith('src/') || f.startsWith('test/'))).toBe(false);

    // An empty project; ibsm's one dependency (the addon headers) comes from this checkout, offline.
    const app = path.join(tmp, 'app');
    mkdirSync(path.join(app, 'node_modules'), { recursive: true });
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
    cpSync(path.dirname(require.resolve('node-addon-api/package.json')), path.join(app, 'node_modules/node-addon-api'), { recursive: true });
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-save', path.join(tmp, packed[0]!.filename)], app);
    const pkg = JSON.parse(readFileSync(path.join(app, 'node_modules/ibsm/package.json'), 'utf8')) as { exports: Record<string, unknown>; types: string };
    expect(pkg.types).toBe('dist/index.d.ts');

    for (const f of EXAMPLES) cpSync(path.join(ROOT, 'docs/examples', f), path.join(app, f));
    // The examples' imports resolve through node_modules/ibsm's exports and its .d.ts only.
    run(process.execPath, [TSC, '--strict', '--noEmitOnError', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', TYPE_ROOTS, '--outDir', 'out', ...EXAMPLES], app);
    for (const f of EXAMPLES) {
      const out = run(process.execPath, [path.join('out', f.replace(/\.ts$/, '.js'))], app);
      for (const re of EXPECT[f]!) expect(out, `${f}:\n${out}`).toMatch(re);
    }
    // A type error in a program using the package is caught (the check is not vacuous).
    writeFileSync(path.join(app, 'wrong.ts'), "import { openSm } from 'ibsm';\nawait openSm({ lmc: 'one' });\n");
    let diagnostics = '';
    try {
      run(process.execPath, [TSC, '--strict', '--noEmit', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', TYPE_ROOTS, 'wrong.ts'], app);
    } catch (e) {
      diagnostics = String((e as { stdout?: string }).stdout);
    }
    expect(diagnostics).toMatch(/wrong\.ts\(2,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
  }, 300_000);
});
