/** `ibsm run --sim <a fabric of several subnets>` (gen:subnets:..., or a topology file with routers
 * joining subnets): one SM+SA per subnet in this process (api/subnets.ts), each logging its own
 * `SUBNET UP` line with `prefix=<its subnet prefix>`; --once and SIGINT/SIGTERM as `ibsm run` (`stopped`: cli/run.ts's signals). */
import type { Fabric } from '../model/fabric.js';
import { setting, type EffectiveConfig } from '../config/file.js';
import { openSubnets } from '../api/subnets.js';
import type { Logger } from '../util/log.js';
import { smOptionsOf } from './run.js';

/** Errors that end the run are thrown, for `ibsm run` to log them in the configured format. */
export async function runSubnets(c: EffectiveConfig, fabric: Fabric, log0: Logger, stopped: Promise<string>): Promise<number> {
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
  let why: string | undefined;
  void stopped.then((w) => (why = w));
  try {
    // The first sweeps, or a stop asked for during them.
    const started = net.start().then(() => true);
    started.catch(() => undefined); // a failure after a stop is the stop's, not unhandled
    const up = await Promise.race([started, stopped.then(() => false)]);
    if (!up) {
      await stop(why!);
      return 0;
    }
  } catch (e) {
    await stop(why ?? 'error');
    if (why !== undefined) return 0;
    throw e;
  }
  log.info('router tables written', { subnets: net.subnets.length, routerPorts: net.subnets.reduce((n, s) => n + s.routers.length, 0) });
  if (setting(c, 'once')) {
    await stop('--once');
    return 0;
  }
  await stop(await stopped);
  return 0;
}
