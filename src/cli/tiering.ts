/** V8's optimizing compiler (TurboFan) held back while an SM on a device is young.
 *
 * On a device (--umad) the SM mostly waits for the fabric, and a run of a second or two spends
 * more CPU compiling its warm functions with TurboFan than the optimized code gives back, and
 * TurboFan's code and compile zones are a good part of its peak RSS. On the in-process simulator
 * holding it costs several times the run (the simulator and the routing engines are hot loops),
 * so it is never held there, and on a device it is held only until the process has used
 * TURBOFAN_AFTER_CPU_MS of CPU (every thread), or for a minute at most, or until a routing has run
 * for one progress tick (turbofanOnProgress): a daemon spends its life with TurboFan, and a
 * routing long enough to report progress is a hot loop TurboFan pays for at once (at 5k nodes the
 * discovery had not spent the budget when minhop began, which then ran ~3x slower held).
 * The interpreter and the baseline compiler (Sparkplug) run meanwhile; V8 reads the flag at each
 * tier-up decision, so setting it back takes effect at once.
 *
 * While TurboFan is held, Sparkplug compiles each function as soon as it is warm
 * (`--no-baseline-batch-compilation`) instead of waiting for a batch of them (4 KB of bytecode by
 * default): with nothing above it, a hot loop that waits in the interpreter for its batch would be
 * most of a short run. The measurements behind both choices: scripts/bench/README.md, "TurboFan
 * held on a device".
 *
 * A V8 flag changed at run time changes the flag hash V8 checks a code cache against: the bin
 * (scripts/build-bundle.mjs) sets `--opt` back before it writes the cache, and the hold sets the
 * rest back at exit, before the bin's own exit handler runs (prepended). */

export interface V8Flags {
  setFlagsFromString(flags: string): void;
}

let flags: V8Flags | undefined;

/** V8's flag setter. node:v8 itself loads node:stream and its kin (start-up time: scripts/bench/
 * README.md, "TurboFan held on a device"); the binding under it (what node:v8's
 * setFlagsFromString calls) loads nothing, and is asked for with its deprecation warning off. */
export async function v8Flags(): Promise<V8Flags> {
  if (flags) return flags;
  const p = process as unknown as { binding?: (name: string) => unknown; noDeprecation?: boolean };
  const quiet = p.noDeprecation;
  try {
    p.noDeprecation = true;
    const b = p.binding?.('v8') as Partial<V8Flags> | undefined;
    if (typeof b?.setFlagsFromString === 'function') return (flags = b as V8Flags);
  } catch {
    // a Node without process.binding: node:v8 below
  } finally {
    p.noDeprecation = quiet;
  }
  return (flags = await import('node:v8'));
}

/** CPU (user + system, every thread) after which TurboFan is back on. */
export const TURBOFAN_AFTER_CPU_MS = 2000;
/** ...or after this long (wall clock), whatever the CPU: a daemon on a small fabric that never
 * spends the budget stops looking. */
export const TURBOFAN_AFTER_MS = 60_000;
/** How often the CPU used is looked at (an unref'd timer: it never keeps the process up). */
const CHECK_MS = 250;

/** The flags while TurboFan is held, and those that undo them. */
const HOLD_FLAGS = '--no-opt --no-baseline-batch-compilation';
const RELEASE_FLAGS = '--opt --baseline-batch-compilation';

let held: ReturnType<typeof setInterval> | undefined;

/** Hold TurboFan back until the process has used `afterCpuMs` of CPU. */
export async function holdTurbofan(afterCpuMs = TURBOFAN_AFTER_CPU_MS): Promise<void> {
  if (held !== undefined) return;
  const v8 = await v8Flags();
  v8.setFlagsFromString(HOLD_FLAGS);
  process.prependOnceListener('exit', releaseTurbofan);
  heldUntil = Date.now() + TURBOFAN_AFTER_MS;
  heldCpuMs = afterCpuMs;
  held = setInterval(checkTurbofanHold, CHECK_MS);
  held.unref();
  checkTurbofanHold();
}

let heldUntil = 0;
let heldCpuMs = TURBOFAN_AFTER_CPU_MS;

/** TurboFan on again once the hold's CPU budget or time is spent. The hold's timer asks every
 * CHECK_MS; work that keeps the event loop for long (a routing of seconds: the SM's progress
 * between a routing engine's steps, RoutingEngine.steps, cli/run.ts) asks too, or it would run all its length without TurboFan (several times
 * slower: scripts/bench/README.md, "TurboFan held on a device"). */
export function checkTurbofanHold(): void {
  if (held === undefined) return;
  const u = process.cpuUsage();
  if ((u.user + u.system) / 1000 >= heldCpuMs || Date.now() >= heldUntil) releaseTurbofan();
}

/** The size (switches × nodes: the (switch, destination) pairs a routing fills) from which a
 * routing lets TurboFan go as it starts, not at its first progress tick. minhop held took ~0.2-0.35
 * µs a pair on ibsim's fabrics, so from here it would reach the tick (100 ms) held. */
export const TURBOFAN_ROUTING_PAIRS = 300_000;

/** The SM's progress report (its onProgress phases) seen by the hold: a routing still running at
 * its first progress tick (ROUTE_PROGRESS_MS in sm/sweep.ts) lets TurboFan go at once, whatever
 * the CPU spent (minhop at 5k nodes in a fresh process: ~830 ms held, ~250 ms not:
 * scripts/bench/README.md, "SUBNET UP at 5k"), and so does the start of a routing of
 * TURBOFAN_ROUTING_PAIRS or more (its report: `ms` 0, `nodes`, `switches`): the 100 ms before its
 * first tick, held, were as long again as the rest of it. Any other phase looks at the budget. */
export function turbofanOnProgress(phase: string, detail: Readonly<Record<string, number>> = {}): void {
  if (phase === 'routing' && (detail.ms !== 0 || (detail.nodes ?? 0) * (detail.switches ?? 0) >= TURBOFAN_ROUTING_PAIRS)) releaseTurbofan();
  else checkTurbofanHold();
}

/** TurboFan on again (at once). */
export function releaseTurbofan(): void {
  if (held === undefined) return;
  clearInterval(held);
  held = undefined;
  flags!.setFlagsFromString(RELEASE_FLAGS);
}

/** Whether TurboFan is held back now. */
export function turbofanHeld(): boolean {
  return held !== undefined;
}
