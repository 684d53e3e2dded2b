/** Start-up (#16): what `ibsm run` loads before its first SMP. On a device (--umad) it loads the SM,
 * the SA and the transport, not the simulator, the topology-file loaders nor the multi-subnet
 * runner, which only --sim uses. Observed with a module-loading hook on the
 * tsc build (dist/cli/main.js): every file of dist/ that Node loads is named on stderr. The --umad
 * run names a CA that does not exist, so it stops at opening the device ("no usable device"),
 * after everything the run path loads is loaded, whatever hardware the machine has. */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { hasCode, logRe } from './helpers/log-lines.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const MAIN = path.join(ROOT, 'dist/cli/main.js');

function loadedBy(args: string[]): { status: number | null; stderr: string; files: string[] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-startup-'));
  try {
    const hooks = path.join(dir, 'hooks.mjs');
    writeFileSync(hooks, "import { writeSync } from 'node:fs';\nexport async function load(url, context, next) {\n  if (url.startsWith('file:')) writeSync(2, 'LOADED ' + url + '\\n');\n  return next(url, context);\n}\n");
    const reg = path.join(dir, 'register.mjs');
    writeFileSync(reg, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.LD_PRELOAD; // never ibsim's preload: the device is looked up and not found
    const r = spawnSync(process.execPath, ['--import', pathToFileURL(reg).href, MAIN, ...args], { cwd: dir, encoding: 'utf8', env, timeout: 60_000 });
    const dist = pathToFileURL(path.join(ROOT, 'dist')).href + '/';
    const files = [...r.stderr.matchAll(/^LOADED (\S+)$/gm)].map((m) => m[1]!).filter((u) => u.startsWith(dist)).map((u) => u.slice(dist.length));
    return { status: r.status, stderr: r.stderr, files };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// (model/generators.js is still loaded: sa/inter-subnet.ts imports model/subnets.ts, which imports it.)
const SIM_ONLY = ['sim/fabric.js', 'model/load.js', 'model/netfile.js', 'cli/run-subnets.js', 'api/subnets.js'];

describe('what ibsm run loads', () => {
  it('--umad: the SM, SA and transport, none of the simulator, topology loaders or multi-subnet runner', () => {
    const r = loadedBy(['run', '--umad', '--ca', 'ibsm-no-such-ca', '--once']);
    expect(r.status, r.stderr).toBe(1);
    expect(hasCode(r.stderr, 'IBSM-9103')).toBe(true);
    for (const f of ['cli/run.js', 'api/sm.js', 'subnet.js', 'sm/sm.js', 'sa/server.js', 'transport/umad.js']) expect(r.files, f).toContain(f);
    for (const f of SIM_ONLY) expect(r.files, f).not.toContain(f);
    expect(r.files.filter((f) => f.startsWith('sim/'))).toEqual([]);
  }, 90_000);

  it('--sim: the same run path loads them (the witness that the hook sees them)', () => {
    const r = loadedBy(['run', '--sim', 'gen:fattree2:leaves=1,spines=1,hosts=1', '--once']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(logRe('IBSM-1001'));
    for (const f of ['sim/fabric.js', 'model/load.js', 'model/generators.js', 'cli/run.js', 'sa/server.js']) expect(r.files, f).toContain(f);
  }, 90_000);
});
