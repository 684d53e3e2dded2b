/** `ibsm run`: the SM daemon — the API's openSm with the effective configuration, plus the
 * logger (stderr, a TTY with the progress line, or --log-file), --once, signals, and fatal errors
 * logged in the configured format with their code. */
import { fileLogSink, openSm, type IbsmSm } from '../api/sm.js';
import { smOptionsOf } from '../api/sm-config.js';
import { setting, type EffectiveConfig } from '../config/file.js';
import type { Server } from 'node:net';
import { Logger, ProgressTty, stderrSink, type LogSink } from '../util/log.js';
import type { Fabric } from '../model/fabric.js';
import { PROCESS_IO, stderrIsTty } from './stdio.js';
import { turbofanOnProgress } from './tiering.js';
import { claimSignals, type IbsmSignal } from './signals.js';

export { smOptionsOf } from '../api/sm-config.js';

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
  if (name === 'ConfigFileError') return { msg: 'configuration refused; ibsm stops', exit: 1 }; // as a file that does not parse always was (a runtime failure, the file and line named)
  if (['UsageError', 'PartitionConfigError', 'QosPolicyError', 'TopologyError', 'GuidFileError', 'Guid2LidError'].includes(name) || sys === 'open' || sys === 'read')
    return { msg: 'configuration refused; ibsm stops', exit: name === 'UsageError' ? 2 : 1 };
  if (['PortNotFoundError', 'TransportError', 'SimFabricError', 'SmPortBusyError'].includes(name)) return { msg: 'no usable device; ibsm stops', exit: 1 };
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
      file = fileLogSink(path, setting<number>(c, 'log-max-size') ?? 0, setting<boolean>(c, 'log-truncate') === true);
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

/** `reread`: the configuration read again (the file and the command line), for a reload. */
export async function runSm(c: EffectiveConfig, io: RunIo = processRunIo(), reread?: () => EffectiveConfig): Promise<number> {
  // The signals first (cli/signals.ts): those received since the process started are replayed
  // here, so a SIGTERM before the first SMP stops the SM before it sends one.
  const sig = new RunSignals();
  const release = claimSignals((s) => sig.on(s));
  try {
    return await runSmWith(c, io, sig, reread);
  } finally {
    release();
  }
}

/** What `ibsm run` does with the signals, from before the SM exists to its stop. As OpenSM:
 * SIGHUP reloads the configuration, SIGUSR1 reopens the log file (logrotate); SIGTERM and SIGINT
 * stop the SM. */
class RunSignals {
  /** The stop asked for (by a signal), and why. */
  stopWhy?: string;
  private wake?: () => void;
  /** Resolves when a stop is asked for. */
  readonly stopped = new Promise<string>((resolve) => {
    this.wake = () => resolve(this.stopWhy!);
  });
  /** What SIGHUP and SIGUSR1 do once the SM runs (before: remembered, done then). */
  private hup?: () => void;
  private usr1?: () => void;
  private hupPending = false;
  private usr1Pending = false;

  on(s: IbsmSignal): void {
    if (s === 'SIGTERM' || s === 'SIGINT') {
      if (this.stopWhy !== undefined) return;
      this.stopWhy = s;
      this.wake!();
    } else if (s === 'SIGHUP') {
      if (this.hup) this.hup();
      else this.hupPending = true;
    } else if (this.usr1) this.usr1();
    else this.usr1Pending = true;
  }

  /** SIGHUP and SIGUSR1 act from now on (one received before acts now). */
  serve(hup: () => void, usr1: () => void): void {
    this.hup = hup;
    this.usr1 = usr1;
    if (this.usr1Pending) usr1();
    if (this.hupPending) hup();
    this.usr1Pending = this.hupPending = false;
  }
}

/** `ibsm run` from its logger to its exit: the phases below, in order; each returns the exit
 * status when the run ends there. */
async function runSmWith(c: EffectiveConfig, io: RunIo, sig: RunSignals, reread?: () => EffectiveConfig): Promise<number> {
  let out: ReturnType<typeof runLogger>;
  try {
    out = runLogger(c, io);
  } catch (e) {
    // The log file cannot be opened: said on stderr, in the configured format.
    return logFatal(new Logger(sinkOf(io), 'info', setting<'text' | 'json'>(c, 'log-format') ?? 'text'), e, 'start', false, io);
  }
  const run = new RunSession(c, io, sig, out, reread);
  if (sig.stopWhy !== undefined) return run.stoppedEarly();
  const ended = (await run.checkControlPath()) ?? (await run.openSm()) ?? (await run.serveControl()) ?? (await run.firstSweep());
  if (ended !== undefined) return ended;
  // As OpenSM: SIGHUP reloads the configuration (and sweeps the whole fabric again).
  sig.serve(() => void run.reload('SIGHUP'), run.onUsr1);
  await sig.stopped;
  await run.stop(sig.stopWhy!);
  return run.end();
}

/** One `ibsm run`: its log (with the progress line and the log file), its signals, the control
 * socket and the SM. */
class RunSession {
  private readonly log: Logger;
  private readonly tty?: ProgressTty;
  private readonly file?: ReturnType<typeof fileLogSink>;
  private socketPath?: string;
  private readonly socketGiven: boolean;
  private controlModule?: Promise<typeof import('./control.js')>;
  private control?: Server;
  private sm!: IbsmSm;
  /** The in-process fabric, loaded once (a reload with the same --sim keeps it). */
  private fabric?: Fabric;
  private stopping?: Promise<void>;
  /** Reloads run one at a time (a second waits for the first). */
  private reloading = Promise.resolve<unknown>(undefined);

  constructor(
    private readonly c: EffectiveConfig,
    private readonly io: RunIo,
    private readonly sig: RunSignals,
    out: ReturnType<typeof runLogger>,
    private readonly reread?: () => EffectiveConfig,
  ) {
    ({ log: this.log, tty: this.tty, file: this.file } = out);
    this.socketPath = setting<string>(c, 'control-socket');
    this.socketGiven = c.settings.get('control-socket')?.source !== 'default';
  }

  fatal(e: unknown, phase: 'start' | 'sweep' | 'control'): number {
    this.tty?.end();
    const code = logFatal(this.log, e, phase, this.file !== undefined, this.io);
    this.file?.close();
    return code;
  }

  /** A stop asked for before the SM existed (or before it was up): logged, and the exit is 0. */
  stoppedEarly(): number {
    this.tty?.end();
    this.log.info('ibsm stopping', { reason: this.sig.stopWhy! });
    this.file?.close();
    return 0;
  }

  /** The control socket's path is checked before anything is opened on the fabric (before the
   * first SMP): a path that is not a socket, or one another ibsm serves, is refused there (a busy
   * or unusable default path is not a reason to stop managing the fabric: logged, no socket). */
  async checkControlPath(): Promise<number | undefined> {
    const path = this.socketPath;
    if (!path || path === 'none') return undefined;
    this.controlModule = import('./control.js');
    try {
      await (await this.controlModule).checkControlPath(path);
    } catch (e) {
      if (this.socketGiven) return this.fatal(new Error(`--control-socket ${path}: ${(e as Error).message}`), 'control');
      this.log.warn('control socket not served', { path, error: (e as Error).message });
      this.socketPath = undefined;
    }
    return undefined;
  }

  /** The files the configuration names, read and checked before the first SMP; then the SM (or,
   * on an in-process fabric of several subnets, their run to its end). */
  async openSm(): Promise<number | undefined> {
    const { c, sig, log, tty } = this;
    try {
      // A problem names where the file was given (an opensm.conf key and its line too) and what
      // the file is for. A partitions.conf in error is not one: the SM runs with the default
      // partition (IBSM-9012).
      const { loadConfigFiles, ConfigFileError } = await import('../config/files.js');
      const refused = (await loadConfigFiles(c, { topology: false })).problems.filter((p) => !(p.option === 'partitions' && p.kind === 'invalid'));
      if (refused.length) throw new ConfigFileError(refused);
      // Several subnets joined by routers on the in-process fabric: one SM+SA per subnet
      // (cli/run-subnets.ts). The fabric is loaded once, here; the topology loaders, the generators
      // and the multi-subnet runner (with the simulator) are loaded only for --sim.
      const simSpec = setting<string>(c, 'sim');
      if (simSpec !== undefined && !setting(c, 'umad')) {
        const [{ loadFabricSpec }, { isMultiSubnet }] = await Promise.all([import('../model/load.js'), import('../model/subnets.js')]);
        this.fabric = loadFabricSpec(simSpec, { seed: setting<number>(c, 'seed') });
        if (isMultiSubnet(this.fabric)) {
          const { runSubnets } = await import('./run-subnets.js');
          return await runSubnets(c, this.fabric, log, sig.stopped);
        }
      }
      if (sig.stopWhy !== undefined) return this.stoppedEarly();
      this.sm = await openSm({
        ...smOptionsOf(c),
        ...(this.fabric ? { sim: this.fabric } : {}),
        log,
        onProgress: (phase, d) => {
          turbofanOnProgress(phase, d);
          tty?.progress(`${phase}: ${Object.entries(d).map(([k, v]) => `${k}=${v}`).join(' ')}`);
        },
      });
    } catch (e) {
      if (sig.stopWhy !== undefined) return this.stoppedEarly();
      return this.fatal(e, 'start');
    }
    if (c.file) log.info('configuration read', { file: c.file.file, format: c.file.format });
    for (const n of c.file?.notes ?? []) log.warn('configuration', { file: c.file!.file, note: n });
    // A stop asked for from here on stops the SM at once, whatever it is doing (a sweep's SMPs in
    // flight are dropped with the RPC layer: sm/sm.ts logs the action as cut short by the stop).
    void sig.stopped.then((why) => this.stop(why));
    // SIGUSR1 from now on; SIGHUP once the subnet is up (before, it is remembered).
    sig.serve(() => undefined, this.onUsr1);
    return undefined;
  }

  readonly onUsr1 = (): void => {
    this.file?.reopen();
    this.log.info('log file reopened', { signal: 'SIGUSR1' });
  };

  stop(why: string): Promise<void> {
    this.stopping ??= (async () => {
      this.tty?.end();
      this.log.info('ibsm stopping', { reason: why });
      await this.sm.stop();
    })();
    return this.stopping;
  }

  /** The end of a run that got the SM going: the control socket and the log file closed. */
  async end(): Promise<number> {
    await new Promise((r) => (this.control ? this.control.close(r) : r(undefined)));
    this.file?.close();
    return 0;
  }

  /** Reload (SIGHUP, `ibsm reload`): the configuration read again and checked whole; what can
   * change live applied, what cannot named; a bad file leaves the running configuration. One at a
   * time (a second waits for the first). */
  reload(why: string): Promise<unknown> {
    const run = (): Promise<unknown> => this.reloadNow(why);
    const p = this.reloading.then(run, run);
    this.reloading = p.catch(() => undefined);
    return p;
  }

  private async reloadNow(why: string): Promise<unknown> {
    const { sm, log, c } = this;
    if (!this.reread) {
      sm.subnet.sm.requestHeavySweep(why, true);
      return { reloaded: false, reason: 'no configuration to read again; a heavy sweep instead' };
    }
    let next: EffectiveConfig | undefined;
    let r: Awaited<ReturnType<IbsmSm['reload']>>;
    try {
      next = this.reread();
      r = await sm.reload({ ...smOptionsOf(next), ...(this.fabric && setting(next, 'sim') === setting(c, 'sim') ? { sim: this.fabric } : {}) });
    } catch (e) {
      const error = (e as Error).message;
      log.error('configuration reload failed; the running configuration is kept', { trigger: why, error, errorType: (e as Error).name });
      // (sm.reload counts and reports its own failures; a configuration file refused here.)
      if (next === undefined) sm.subnet.noteReload({ ok: false, error });
      throw e;
    }
    log.info('configuration reloaded', { trigger: why, reread: r.reread.join(',') || 'none', applied: r.applied.join(',') || 'none', groupsCreated: r.groupsCreated, groupsUpdated: r.groupsUpdated, groupsReleased: r.groupsReleased });
    if (r.restartNeeded.length) log.warn('configuration changes need a restart', { settings: r.restartNeeded.join(','), note: 'the running values are kept until ibsm is restarted' });
    for (const n of next.file?.notes ?? []) log.warn('configuration', { file: next.file!.file, note: n });
    return { reloaded: true, ...r };
  }

  /** The control socket, served before the first sweep: a local resource, bound before the first SMP. */
  async serveControl(): Promise<number | undefined> {
    const path = this.socketPath;
    if (!this.controlModule || !path) return undefined;
    try {
      // Loaded only for a daemon that serves it: node:net and the ops' views.
      const [{ serveControl }, { controlTargetOf }] = await Promise.all([this.controlModule, import('./ops.js')]);
      this.control = await serveControl(path, { ...controlTargetOf(this.sm), reload: () => this.reload('control socket') }, this.log);
      this.log.info('control socket served', { path });
    } catch (e) {
      if (this.socketGiven) {
        await this.stop('error');
        return this.fatal(new Error(`--control-socket ${path}: ${(e as Error).message}`), 'control');
      }
      this.log.warn('control socket not served', { path, error: (e as Error).message });
    }
    return undefined;
  }

  /** The first sweep, or a stop asked for during it; then --once ends the run. */
  async firstSweep(): Promise<number | undefined> {
    const { sig } = this;
    try {
      const started = this.sm.start().then(() => true);
      started.catch(() => undefined); // a failure after a stop is the stop's (below), not unhandled
      const up = await Promise.race([started, sig.stopped.then(() => false)]);
      if (!up) {
        await this.stop(sig.stopWhy!);
        this.file?.close();
        return 0;
      }
    } catch (e) {
      if (sig.stopWhy !== undefined) {
        await this.stop(sig.stopWhy);
        this.file?.close();
        return 0;
      }
      await this.stop('error');
      await new Promise((r) => (this.control ? this.control.close(r) : r(undefined)));
      return this.fatal(e, 'sweep');
    }
    this.tty?.end();
    if (setting(this.c, 'once') && sig.stopWhy === undefined) {
      await this.stop('--once');
      return this.end();
    }
    return undefined;
  }
}
