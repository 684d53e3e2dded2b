import { it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startIbsim, startPreloaded, IBSIM_EXAMPLES } from './helpers/ibsim.js';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CLI = path.resolve('dist/cli/main.js');
function osm(ib: any, node: string, prio: number, tag: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exp-osm-'));
  const logFile = path.join(dir, 'opensm.log');
  writeFileSync(path.join(dir, 'c.conf'), 'force_log_flush TRUE\n');
  const proc = startPreloaded('opensm', ['-F', path.join(dir, 'c.conf'), '-p', String(prio), '-s', '1', '-D', '0xff', '-f', logFile], { ibsim: ib, simHost: node, cwd: dir, env: { OSM_CACHE_DIR: dir, OSM_TMP_DIR: dir }, timeoutMs: 600000 });
  return { proc, log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''), tag, dir };
}
function ibsm(ib: any, node: string, prio: number, tag: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exp-ibsm-'));
  const proc = startPreloaded('bash', ['-c', 'exec "$0" "$@" 2>&1', process.execPath, CLI, 'run', '--umad', '--sweep-interval', '1', '--priority', String(prio), '--sm-key', '1', '-v'], { ibsim: ib, simHost: node, cwd: dir, timeoutMs: 600000 });
  return { proc, log: () => proc.stdout(), tag, dir };
}
it('exp', async () => {
  const ib = await startIbsim(path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca'));
  const prioA = Number(process.env.PA ?? 2), prioB = Number(process.env.PB ?? 15);
  const first = process.env.FIRST === 'osm' ? osm(ib, 'Hca2', prioA, 'A') : ibsm(ib, 'Hca2', prioA, 'A');
  await sleep(6000);
  const b = osm(ib, 'Hca1', prioB, 'B');
  await sleep(8000);
  if (process.env.TERM_A) { process.kill(first.proc.pid, 'SIGTERM'); await sleep(6000); }
  writeFileSync('/tmp/exp/A.log', first.log());
  writeFileSync('/tmp/exp/B.log', b.log());
  writeFileSync('/tmp/exp/ibsim.log', ib.log());
  for (const p of [b, first]) { p.proc.stop('SIGTERM'); await sleep(1000); try { await p.proc.stop('SIGKILL'); } catch {} }
  await ib.stop();
}, 120000);
