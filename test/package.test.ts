/** The package as a user gets it: `npm pack`, the tarball installed into an empty directory, and
 * every example of docs/api.md type-checked there with `tsc --strict` against the installed
 * declarations (importing `ibsm` and its subpaths by name, under moduleResolution nodenext, node16
 * and bundler) and run. The quick start is the done-when: SM on a generated fabric,
 * subnet-up event, a PathRecord, a link down seen as the topology change that names the port.
 * The root stays small (at most 40 names; the rest in ibsm/routing, ibsm/wire, ibsm/sim,
 * ibsm/config), and the SM's snapshot is read-only to a program (a mutation does not compile). */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

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
  'subnets.ts': [/^path to fec0:0000:0000:0002:\S+: local slid \d+ dlid \d+ \(the router\), remote SA answered$/m, /^probe arrived at "s2-host-3 HCA-1" after \d+ hops$/m],
  'sim-faults.ts': [/^up through 5% MAD loss: [1-9]\d* MADs dropped/m, /^link down: /m, /^link up again; port state changes seen: .*->Down/m],
};

/** The subpaths of the package (package.json "exports"), each with one name a program imports. */
const SUBPATHS: Record<string, string> = { 'ibsm/routing': 'routeWithFallback', 'ibsm/wire': 'PathRecord', 'ibsm/sim': 'createSimFabric', 'ibsm/config': 'OPTIONS' };

/** README's "As a library" example (type-checked here: it starts an SM it does not stop). */
function readmeExample(): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## As a library'), readme.indexOf('\n## ', readme.indexOf('## As a library') + 1));
  const m = /```ts\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error('README "As a library" has no ts example');
  return m[1]!;
}

const execFileP = promisify(execFile);
/** A command's stdout (asynchronously: a compile of a minute must not starve vitest's worker). */
const run = async (cmd: string, args: string[], cwd: string): Promise<string> => (await execFileP(cmd, args, { cwd, encoding: 'utf8', timeout: 240_000, maxBuffer: 64 << 20 })).stdout;

describe('the npm package', () => {
  it('docs/api.md shows every example verbatim, and every example is checked here', () => {
    const doc = readFileSync(path.join(ROOT, 'docs/api.md'), 'utf8');
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(4);
    for (const f of EXAMPLES) {
      const src = readFileSync(path.join(ROOT, 'docs/examples', f), 'utf8');
      expect(doc, f).toContain(`<!-- example: docs/examples/${f} -->\n\`\`\`ts\n${src}\`\`\``);
      expect(EXPECT[f], f).toBeDefined();
    }
    // no other code block in docs/api.md: every example there is one of the files run below
    expect(doc.match(/```ts\n/g)?.length).toBe(EXAMPLES.length);
  });

  it('packs, installs into an empty directory, and runs the examples type-checked with tsc --strict, importing ibsm by name', async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'ibsm-pack-'));
    // Stage the package's files with a fresh build (the repo's own dist/ is left alone), then pack.
    const stage = path.join(tmp, 'stage');
    mkdirSync(path.join(stage, 'scripts'), { recursive: true });
    for (const f of ['package.json', 'README.md', 'binding.gyp', 'native', 'docs/ibsm.8']) cpSync(path.join(ROOT, f), path.join(stage, f), { recursive: true });
    cpSync(path.join(ROOT, 'scripts/build-native.mjs'), path.join(stage, 'scripts/build-native.mjs'));
    await run(process.execPath, [TSC, '-p', path.join(ROOT, 'tsconfig.json'), '--outDir', path.join(stage, 'dist')], ROOT);
    const packed = JSON.parse(await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], stage)) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = packed[0]!.files.map((f) => f.path);
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files.some((f) => f.startsWith('src/') || f.startsWith('test/'))).toBe(false);

    // An empty project; ibsm's one dependency (the addon headers) comes from this checkout, offline.
    const app = path.join(tmp, 'app');
    mkdirSync(path.join(app, 'node_modules'), { recursive: true });
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
    cpSync(path.dirname(require.resolve('node-addon-api/package.json')), path.join(app, 'node_modules/node-addon-api'), { recursive: true });
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-save', path.join(tmp, packed[0]!.filename)], app);
    const pkg = JSON.parse(readFileSync(path.join(app, 'node_modules/ibsm/package.json'), 'utf8')) as { exports: Record<string, unknown>; types: string };
    expect(pkg.types).toBe('dist/index.d.ts');

    for (const f of EXAMPLES) cpSync(path.join(ROOT, 'docs/examples', f), path.join(app, f));
    writeFileSync(path.join(app, 'readme.ts'), readmeExample());
    // The examples' imports resolve through node_modules/ibsm's exports and its .d.ts only, under
    // each resolution a TypeScript program may use for an ESM package.
    const strict = ['--strict', '--target', 'es2022', '--types', 'node', '--typeRoots', TYPE_ROOTS];
    for (const [mod, res] of [['node16', 'node16'], ['esnext', 'bundler']]) await run(process.execPath, [TSC, ...strict, '--noEmit', '--module', mod!, '--moduleResolution', res!, ...EXAMPLES, 'readme.ts'], app);
    await run(process.execPath, [TSC, ...strict, '--noEmitOnError', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--outDir', 'out', ...EXAMPLES], app);
    for (const f of EXAMPLES) {
      const out = await run(process.execPath, [path.join('out', f.replace(/\.ts$/, '.js'))], app);
      for (const re of EXPECT[f]!) expect(out, `${f}:\n${out}`).toMatch(re);
    }
    // tsc --strict on one file in the app: '' when it compiles, else its diagnostics.
    const check = async (name: string, text: string): Promise<string> => {
      writeFileSync(path.join(app, name), text);
      try {
        await run(process.execPath, [TSC, ...strict, '--noEmit', '--module', 'nodenext', '--moduleResolution', 'nodenext', name], app);
        return '';
      } catch (e) {
        return String((e as { stdout?: string }).stdout) || String(e);
      }
    };
    // A type error in a program using the package is caught (the check is not vacuous).
    expect(await check('wrong.ts', "import { openSm } from 'ibsm';\nawait openSm({ lmc: 'one' });\n")).toMatch(/wrong\.ts\(2,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);

    // The snapshot is read-only all the way down: reading it compiles, each mutation does not.
    const head = "import { openSm, type ReadonlySnapshot } from 'ibsm';\nconst sm = await openSm({ sim: 'gen:fattree2:leaves=2,spines=2,hosts=2' });\nconst snap = sm.snapshot!;\n";
    const reads = 'const d: string = snap.fabric.nodes[0]!.desc;\nconst s: ReadonlySnapshot | undefined = sm.snapshot;\nsm.events.on(\'subnetUp\', (e) => console.log(d, s, e.snapshot.fabric.nodes.length, snap.routing.lfts.get(1)?.[0]));\n';
    expect(await check('reads.ts', head + reads)).toBe('');
    const mutations: Array<[string, RegExp]> = [
      ["snap.fabric.nodes[0]!.desc = 'x';", /TS2540: Cannot assign to 'desc' because it is a read-only property/],
      ['snap.fabric.nodes.push(snap.fabric.nodes[0]!);', /TS2339: Property 'push' does not exist on type 'readonly/],
      ['snap.fabric.nodes[0]!.ports[1]!.lid = 7;', /TS2540: Cannot assign to 'lid' because it is a read-only property/],
      ['snap.routing.lfts.set(1, new Uint8Array(64));', /TS2339: Property 'set' does not exist on type 'ReadonlyMap/],
      ['snap.routing.lfts.get(1)![0] = 2;', /TS2542: Index signature in type 'Readonly<Uint8Array/],
      ['snap.discovery.nodes[0]!.path.push(1);', /TS2339: Property 'push' does not exist on type 'readonly number\[\]'/],
      ["sm.events.on('subnetUp', (e) => { e.snapshot.fabric.nodes.length = 0; });", /TS2540: Cannot assign to 'length' because it is a read-only property/],
    ];
    // one file, a mutation a line: each line has its own error
    const diagnostics = await check('mutate.ts', head + mutations.map(([line]) => line).join('\n') + '\n');
    mutations.forEach(([line, error], i) => {
      const at = diagnostics.split('\n').filter((d) => d.startsWith(`mutate.ts(${4 + i},`)).join('\n');
      expect(at, line).toMatch(error);
    });

    // The root is small; the rest is in the subpaths, each importable from the installed package.
    const probe = [
      "const root = await import('ibsm');",
      'const names = Object.keys(root);',
      ...Object.entries(SUBPATHS).map(([sub, name], i) => `const m${i} = await import('${sub}');\nif (m${i}.${name} === undefined) throw new Error('${sub} lacks ${name}');`),
      `console.log(JSON.stringify({ root: names.length, moved: names.filter((n) => ${JSON.stringify(Object.values(SUBPATHS))}.includes(n)) }));`,
    ].join('\n');
    writeFileSync(path.join(app, 'surface.mjs'), probe + '\n');
    const surface = JSON.parse(await run(process.execPath, ['surface.mjs'], app)) as { root: number; moved: string[] };
    expect(surface.root).toBeGreaterThanOrEqual(20);
    expect(surface.root).toBeLessThanOrEqual(40);
    expect(surface.moved).toEqual([]);
    // and typed: each subpath's name resolves through its "types" condition
    const typed = Object.entries(SUBPATHS).map(([sub, name]) => `import { ${name} } from '${sub}';\nconsole.log(${name});`).join('\n');
    expect(await check('subpaths.ts', typed + '\n')).toBe('');
    expect(pkg.exports).toHaveProperty(['./routing', 'types']);
  }, 300_000);
});
