/** `ibsm run --sim <a fabric of several subnets>` (gen:subnets:..., or a topology file with routers
 * joining subnets): one SM+SA per subnet in this process (api/subnets.ts), each logging its own
 * `SUBNET UP` line with `prefix=<its subnet prefix>`; --once and SIGINT/SIGTERM as `ibsm run`. */
import type { Fabric } from '../model/fabric.js';
import { setting, type EffectiveConfig } from '../config/file.js';
import { openSubnets } from '../api/subnets.js';
import type { Logger } from '../util/log.js';
import { smOptionsOf } from './run.js';

/** Errors that end the run are thrown, for `ibsm run` to log them in the configured format. */
export async function runSubnets(c: EffectiveConfig, fabric: Fabric, log0: Logger): Promise<number> {
  const o = smOptionsOf(c);
  const net = await openSubnets({ ...o, sim: fabric, log: log0 });
  const log = net.log;
  log.info('subnets found', { subnets: net.subnets.length, routers: fabric.nodes.filter((n) => n.type === 3).length });
  let stopping = false;
  const stop = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info('ibsm stopping', { reason: why });
    await net.stop();
  };
  try {
    await net.start();
  } catch (e) {
    await stop('error');
    throw e;
  }
  log.info('router tables written', { subnets: net.subnets.length, routerPorts: net.subnets.reduce((n, s) => n + s.routers.length, 0) });
  if (setting(c, 'once')) {
    await stop('--once');
    return 0;
  }
  await new Promise<void>((resolve) => {
    const onSig = (sig: string): void => void stop(sig).then(resolve);
    process.once('SIGINT', () => onSig('SIGINT'));
    process.once('SIGTERM', () => onSig('SIGTERM'));
  });
  return 0;
}
