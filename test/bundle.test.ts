/** The bundled command (scripts/build-bundle.mjs → dist/bundle/ibsm.js, the package's bin): one
 * file that runs every command path it was built from — the version read relative to the bundle,
 * `run` on the simulated fabric (the SM, SA and simulator evaluated on demand inside the file) and
 * `discover` — and a bin that names it. */
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const BUNDLE = path.join(ROOT, 'dist/bundle/ibsm.js');
const run = (args: string[]): string => execFileSync(process.execPath, [BUNDLE, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'] });

describe('the bundled ibsm command', () => {
  it('builds into one file that the package names as its bin, and runs version, run --once and discover', () => {
    execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-bundle.mjs')], { cwd: ROOT, stdio: 'pipe', timeout: 120_000 });
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
    expect(path.resolve(ROOT, pkg.bin.ibsm!)).toBe(BUNDLE);
    const src = readFileSync(BUNDLE, 'utf8');
    expect(src.split('\n')[0]).toBe('#!/usr/bin/env -S node --max-semi-space-size=4');
    expect(src, 'no import of another file of the package').not.toMatch(/from\s+["']\.\.?\//);
    expect(run(['--version']).trim()).toBe(`ibsm ${pkg.version}`);
    // run as the installed command is, through its shebang (and its V8 flag)
    expect(execFileSync(BUNDLE, ['--version'], { encoding: 'utf8', timeout: 60_000 }).trim()).toBe(`ibsm ${pkg.version}`);
    const up = spawnSync(process.execPath, [BUNDLE, 'run', '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2', '--once'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(up.status, up.stderr).toBe(0);
    expect(up.stdout + up.stderr).toMatch(/SUBNET UP nodes=7 switches=3 endPorts=7 /);
    const topo = run(['discover', '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2']);
    expect(topo.match(/^Switch\s/gm)?.length).toBe(3);
    expect(topo.match(/^Ca\s/gm)?.length).toBe(4);
  }, 180_000);
});
