/** The ibsm command in-process (src/cli/main.ts's main), its output captured. */
import { main } from '../../src/cli/main.js';

export async function runCli(argv: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main([...argv], { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } });
  return { code, out, err };
}
