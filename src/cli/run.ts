/** `ibsm run`: the SM daemon — the API's openSm with the effective configuration, plus the
 * logger (stderr, a TTY with the progress line, or --log-file), --once, signals, and fatal errors
 * logged in the configured format with their code. */
import { fileLogSink, openSm, type IbsmSm, type OpenSmOptions } from '../api/sm.js';
import { setting, type EffectiveConfig } from '../config/file.js';
import type { Server } from 'node:net';
import { Logger, ProgressTty, stderrSink, type LogSink } from '../util/log.js';
import type { Fabric } from '../model/fabric.js';
import { PROCESS_IO, stderrIsTty } from './stdio.js';
import { checkTurbofanHold } from './tiering.js';

/** The effective configuration as the API's options (the config keys are the option names there). */
export function smOptionsOf(c: EffectiveConfig): OpenSmOptions {
  const o: Record<string, unknown> = {};
  for (const s of c.settings.values()) if (s.option.key !== undefined && s.value !== undefined) o[s.option.key] = s.value;
  return o as OpenSmOptions;
}

/** Where the process writes: stderr for fatal errors when the log goes to a file. */
export interface RunIo {
  stderr: { write(s: string): unknown };
  /** Whether stderr is a terminal (the progress line is drawn there). */
  isTTY: boolean;
  /** stderr is the process's own (log lines go to fd 2 with writeSync). */
  own?: boolean;
}

/** The process's stderr, its stream made only if written to (cli/stdio.ts). */
const processIo: RunIo = {
  get stderr() {
    return PROCESS_IO.stderr;
  },
  isTTY: false,
  own: true,
};
let ttyChecked = false;
function processRunIo(): RunIo {
  if (!ttyChecked) {
    ttyChecked = true;
    processIo.isTTY = stderrIsTty();
  }
  return processIo;
}

/** The RunIo of a command's io: a TTY only when it is the process's own stderr. */
export function runIoOf(io: { stderr: { write(s: string): unknown } }): RunIo {
  if (io === PROCESS_IO) return processRunIo();
  return { stderr: io.stderr, isTTY: io.stderr === process.stderr && process.stderr.isTTY === true, own: io.stderr === process.stderr };
}

/** The log format asked for on the command line, read before the configuration is checked (so a
 * configuration refused is reported in that format too). */
export function logFormatOfArgv(argv: readonly string[]): 'text' | 'json' {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (a === '--log-format=json' || (a === '--log-format' && argv[i + 1] === 'json')) return 'json';
  }
  return 'text';
}

/** A fatal error's message (with its stable code) by what failed, and the exit status. */
function fatalOf(e: unknown, phase: 'start' | 'sweep' | 'control'): { msg: string; exit: number } {
  const name = (e as Error | undefined)?.name ?? '';
  const sys = (e as NodeJS.ErrnoException | undefined)?.syscall;
  if (phase === 'control') return { msg: 'control socket not available; ibsm stops', exit: 1 };
  if (name === 'MetricsListenError') return { msg: 'metrics address not available; ibsm stops', exit: 1 };
  if (['UsageError', 'PartitionConfigError', 'QosPolicyError', 'TopologyError', 'GuidFileError', 'Guid2LidError'].includes(name) || sys === 'open' || sys === 'read')
    return { msg: 'configuration refused; ibsm stops', exit: name === 'UsageError' ? 2 : 1 };
  if (['PortNotFoundError', 'TransportError', 'SimFabricError'].includes(name)) return { msg: 'no usable device; ibsm stops', exit: 1 };
  if (phase === 'sweep') return { msg: 'first sweep failed; ibsm stops', exit: 1 };
  return { msg: 'fatal error; ibsm stops', exit: 1 };
}

/** Log an error that ends the process through `log` (its format, its code); when the log goes to
 * a file, say it on stderr too, so whoever started ibsm sees why it stopped. Returns the exit status. */
export function logFatal(log: Logger, e: unknown, phase: 'start' | 'sweep' | 'control', toFile: boolean, io: RunIo = processRunIo()): number {
  const f = fatalOf(e, phase);
  const err = e as Error;
  const fields = { error: err?.message ?? String(e), errorType: err?.name ?? 'Error' };
  switch (f.msg) {
    case 'configuration refused; ibsm stops':
      log.error('configuration refused; ibsm stops', fields);
      break;
    case 'metrics address not available; ibsm stops':
      log.error('metrics address not available; ibsm stops', fields);
      break;
    case 'no usable device; ibsm stops':
      log.error('no usable device; ibsm stops', fields);
      break;
    case 'first sweep failed; ibsm stops':
      log.error('first sweep failed; ibsm stops', fields);
      break;
    case 'control socket not available; ibsm stops':
      log.error('control socket not available; ibsm stops', fields);
      break;
    default:
      log.error('fatal error; ibsm stops', fields);
  }
  if (toFile) io.stderr.write(`ibsm: ${fields.errorType !== 'Error' ? fields.errorType + ': ' : ''}${fields.error}\n`);
  if (process.env.IBSM_DEBUG && err?.stack) io.stderr.write(`${err.stack}\n`);
  return f.exit;
}

/** The logger of `ibsm run`: --log-file (with its size limit and reopen), else stderr; on a TTY
 * the progress line lives under the log lines (with a log file, alone on the terminal). */
export function runLogger(c: EffectiveConfig, io: RunIo = processRunIo()): { log: Logger; tty?: ProgressTty; file?: ReturnType<typeof fileLogSink> } {
  const format = setting<'text' | 'json'>(c, 'log-format') ?? 'text';
  const level = setting<boolean>(c, 'verbose') ? 'debug' : 'info';
  const path = setting<string>(c, 'log-file');
  // The progress line is drawn on a terminal whether the log goes there or to a file.
  const tty = io.isTTY ? new ProgressTty((s) => io.stderr.write(s)) : undefined;
  if (path) {
    let file: ReturnType<typeof fileLogSink>;
    try {
      file = fileLogSink(path, setting<number>(c, 'log-max-size') ?? 0);
    } catch (e) {
      // A local problem, said before the first SMP, naming the option and the path.
      throw Object.assign(new Error(`--log-file ${path}: cannot open it: ${(e as Error).message}`), { syscall: (e as NodeJS.ErrnoException).syscall ?? 'open' });
    }
    return { log: new Logger(file, level, format), file, tty };
  }
  const sink: LogSink = tty ?? sinkOf(io);
  return { log: new Logger(sink, level, format), tty };
}

/** Log lines to `io`'s stderr: the process's is written synchronously (util/log.ts). */
function sinkOf(io: RunIo): LogSink {
  return io.own ? stderrSink : { write: (l) => void io.stderr.write(l + '\n') };
}

export async function runSm(c: EffectiveConfig, io: RunIo = processRunIo()): Promise<number> {
  let out: ReturnType<typeof runLogger>;
  try {
    out = runLogger(c, io);
  } catch (e) {
    // The log file cannot be opened: said on stderr, in the configured format.
    return logFatal(new Logger(sinkOf(io), 'info', setting<'text' | 'json'>(c, 'log-format') ?? 'text'), e, 'start', false, io);
  }
  const { log, tty, file } = out;
  const fatal = (e: unknown, phase: 'start' | 'sweep' | 'control'): number => {
    tty?.end();
    const code = logFatal(log, e, phase, file !== undefined, io);
    file?.close();
    return code;
  };
  // The control socket's path is checked before anything is opened on the fabric (before the
  // first SMP): a path that is not a socket, or one another ibsm serves, is refused there (a busy
  // or unusable default path is not a reason to stop managing the fabric: logged, no socket).
  let socketPath = setting<string>(c, 'control-socket');
  const socketGiven = c.settings.get('control-socket')?.source !== 'default';
  let control: Server | undefined;
  const controlModule = socketPath && socketPath !== 'none' ? import('./control.js') : undefined;
  if (controlModule && socketPath) {
    try {
      await (await controlModule).checkControlPath(socketPath);
    } catch (e) {
      if (socketGiven) return fatal(new Error(`--control-socket ${socketPath}: ${(e as Error).message}`), 'control');
      log.warn('control socket not served', { path: socketPath, error: (e as Error).message });
      socketPath = undefined;
    }
  }
  let sm: IbsmSm;
  try {
    // Several subnets joined by routers on the in-process fabric: one SM+SA per subnet
    // (cli/run-subnets.ts). The fabric is loaded once, here; the topology loaders, the generators
    // and the multi-subnet runner (with the simulator) are loaded only for --sim.
    const simSpec = setting<string>(c, 'sim');
    let fabric: Fabric | undefined;
    if (simSpec !== undefined && !setting(c, 'umad')) {
      const [{ loadFabricSpec }, { isMultiSubnet }] = await Promise.all([import('../model/load.js'), import('../model/subnets.js')]);
      fabric = loadFabricSpec(simSpec, { seed: setting<number>(c, 'seed') });
      if (isMultiSubnet(fabric)) {
        const { runSubnets } = await import('./run-subnets.js');
        return await runSubnets(c, fabric, log);
      }
    }
    sm = await openSm({
      ...smOptionsOf(c),
      ...(fabric ? { sim: fabric } : {}),
      log,
      onProgress: (phase, d) => {
        checkTurbofanHold();
        tty?.progress(`${phase}: ${Object.entries(d).map(([k, v]) => `${k}=${v}`).join(' ')}`);
      },
    });
  } catch (e) {
    return fatal(e, 'start');
  }
  if (c.file) log.info('configuration read', { file: c.file.file, format: c.file.format });
  for (const n of c.file?.notes ?? []) log.warn('configuration', { file: c.file!.file, note: n });

  let stopping = false;
  const stop = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info('ibsm stopping', { reason: why });
    await sm.stop();
  };

  // Served before the first sweep: a local resource, bound before the first SMP.
  if (controlModule && socketPath) {
    try {
      // Loaded only for a daemon that serves it: node:net and the ops' views.
      const [{ serveControl }, { controlTargetOf }] = await Promise.all([controlModule, import('./ops.js')]);
      control = await serveControl(socketPath, controlTargetOf(sm), log);
      log.info('control socket served', { path: socketPath });
    } catch (e) {
      if (socketGiven) {
        await stop('error');
        return fatal(new Error(`--control-socket ${socketPath}: ${(e as Error).message}`), 'control');
      }
      log.warn('control socket not served', { path: socketPath, error: (e as Error).message });
    }
  }

  try {
    await sm.start();
  } catch (e) {
    await stop('error');
    await new Promise((r) => (control ? control.close(r) : r(undefined)));
    return fatal(e, 'sweep');
  }
  tty?.end();
  if (setting(c, 'once')) {
    await stop('--once');
    await new Promise((r) => (control ? control.close(r) : r(undefined)));
    file?.close();
    return 0;
  }
  // As OpenSM: SIGHUP sweeps the whole fabric again; SIGUSR1 reopens the log file (logrotate).
  const onHup = (): void => sm.subnet.sm.requestHeavySweep('SIGHUP', true);
  const onUsr1 = (): void => {
    file?.reopen();
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
  file?.close();
  return 0;
}
