/** `ibsm run`: the SM daemon — the API's openSm with the effective configuration, plus the
 * progress line, --once and signals. */
import { openSm, type OpenSmOptions } from '../api/sm.js';
import { setting, type EffectiveConfig } from '../config/file.js';
import type { Server } from 'node:net';
import { serveControl } from './control.js';
import { controlTargetOf } from './ops.js';
import { loadFabricSpec } from '../model/load.js';
import { isMultiSubnet } from '../model/subnets.js';
import { runSubnets } from './run-subnets.js';

/** The effective configuration as the API's options (the config keys are the option names there). */
export function smOptionsOf(c: EffectiveConfig): OpenSmOptions {
  const o: Record<string, unknown> = {};
  for (const s of c.settings.values()) if (s.option.key !== undefined && s.value !== undefined) o[s.option.key] = s.value;
  return o as OpenSmOptions;
}

export async function runSm(c: EffectiveConfig): Promise<number> {
  // several subnets joined by routers on the in-process fabric: one SM+SA per subnet (cli/run-subnets.ts)
  const simSpec = setting<string>(c, 'sim');
  const fabric = simSpec !== undefined && !setting(c, 'umad') ? loadFabricSpec(simSpec, { seed: setting<number>(c, 'seed') }) : undefined;
  if (fabric && isMultiSubnet(fabric)) return runSubnets(c, fabric);
  const progress = process.stderr.isTTY === true;
  let lastProgress = '';
  const sm = await openSm({
    ...smOptionsOf(c),
    // the fabric loaded above, not loaded again
    ...(fabric ? { sim: fabric } : {}),
    onProgress: progress
      ? (phase, d) => {
          const line = `\r${phase}: ${Object.entries(d).map(([k, v]) => `${k}=${v}`).join(' ')}`;
          if (line !== lastProgress) process.stderr.write((lastProgress = line) + '\x1b[K');
        }
      : undefined,
  });
  const log = sm.log;
  if (c.file) log.info('configuration read', { file: c.file.file, format: c.file.format });
  for (const n of c.file?.notes ?? []) log.warn('configuration', { file: c.file!.file, note: n });

  let stopping = false;
  const stop = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info('ibsm stopping', { reason: why });
    await sm.stop();
  };

  try {
    await sm.start();
  } catch (e) {
    log.error('first sweep failed', { error: (e as Error).message });
    await stop('error');
    throw e;
  }
  if (progress) process.stderr.write('\n');
  if (setting(c, 'once')) {
    await stop('--once');
    return 0;
  }
  // The control socket: a busy or unwritable default path is not a reason to stop managing the
  // fabric (logged); a path the operator gave is (a bad configuration).
  const socketPath = setting<string>(c, 'control-socket');
  let control: Server | undefined;
  if (socketPath && socketPath !== 'none') {
    try {
      control = await serveControl(socketPath, controlTargetOf(sm), log);
      log.info('control socket served', { path: socketPath });
    } catch (e) {
      if (c.settings.get('control-socket')?.source !== 'default') {
        await stop('error');
        throw new Error(`cannot serve the control socket ${socketPath}: ${(e as Error).message}`);
      }
      log.warn('control socket not served', { path: socketPath, error: (e as Error).message });
    }
  }
  // As OpenSM: SIGHUP sweeps the whole fabric again; SIGUSR1 reopens the log file (logrotate).
  const onHup = (): void => sm.subnet.sm.requestHeavySweep('SIGHUP', true);
  const onUsr1 = (): void => {
    sm.reopenLog?.();
    log.info('log file reopened', { signal: 'SIGUSR1' });
  };
  process.on('SIGHUP', onHup);
  process.on('SIGUSR1', onUsr1);
  await new Promise<void>((resolve) => {
    const onSig = (sig: string): void => {
      void stop(sig).then(resolve);
    };
    process.once('SIGINT', () => onSig('SIGINT'));
    process.once('SIGTERM', () => onSig('SIGTERM'));
  });
  process.off('SIGHUP', onHup);
  process.off('SIGUSR1', onUsr1);
  await new Promise((r) => (control ? control.close(r) : r(undefined)));
  return 0;
}
