import { describe, expect, it } from 'vitest';
import { routeMain } from '../src/cli/route.js';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await routeMain(argv, { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } });
  return { code, out, err };
}

describe('ibsm route', () => {
  it('prints the figures as a table', async () => {
    const r = await run(['gen:fattree2:radix=8', '--engine', 'ftree']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^engine\s+ftree$/m);
    expect(r.out).toMatch(/^switches\s+12$/m);
    expect(r.out).toMatch(/^end ports\s+32 \(LMC 0\)$/m);
    expect(r.out).toMatch(/^reachability\s+OK/m);
    expect(r.out).toMatch(/^CDG VL0\s+acyclic/m);
    expect(r.out).toMatch(/^routes per link\s+max 28 {2}mean 28/m);
  });

  it('falls back and reports JSON', async () => {
    const r = await run(['gen:torus:3x3,hosts=1', '--engine', 'ftree,updn', '--lmc', '1', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as { engine: string; skipped: Array<{ engine: string }>; verify: { ok: boolean; lids: number }; roots: string[] };
    expect(j.engine).toBe('updn');
    expect(j.skipped[0]!.engine).toBe('ftree');
    expect(j.verify.ok).toBe(true);
    expect(j.verify.lids).toBe(9 * 2 + 9);
    expect(j.roots[0]).toMatch(/^0x[0-9a-f]{16}$/);
  });

  it('dfsssp reports its layers', async () => {
    const r = await run(['gen:torus:5x5,hosts=1', '--engine', 'dfsssp', '--json']);
    const j = JSON.parse(r.out) as { vlsUsed: number; verify: { deadlockFree: boolean; cdg: unknown[] } };
    expect(r.code).toBe(0);
    expect(j.vlsUsed).toBeGreaterThan(1);
    expect(j.verify.deadlockFree).toBe(true);
    expect(j.verify.cdg).toHaveLength(j.vlsUsed);
  });

  it('usage errors exit 2 with a message', async () => {
    expect((await run([])).code).toBe(2);
    const bad = await run(['gen:torus:3x3', '--engine', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/unknown routing engine "nope"( \(did you mean "nue"\?\))?; known engines: minhop, updn, ftree, dfsssp, torus, nue/);
    expect((await run(['gen:torus:3x3', '--lmc', '9'])).err).toMatch(/--lmc must be an integer from 0 to 7, got "9"/);
    expect((await run(['gen:torus:3x3', '--roots', 'xyz'])).err).toMatch(/not a GUID/);
    const nf = await run(['/nonexistent/topo.net']);
    expect(nf.code).toBe(2);
    expect(nf.err).toMatch(/cannot read the topology file/);
    const na = await run(['gen:torus:3x3', '--engine', 'ftree']);
    expect(na.code).toBe(2);
    expect(na.err).toMatch(/no engine applies: ftree:/);
  });
});
