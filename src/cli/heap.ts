/** V8's old generation kept close to its live size while `ibsm run`'s heap is small.
 *
 * After a mark-compact V8 lets the old generation grow to up to 4× what survived it (its heap
 * growing factor, highest where collecting is cheap: a small heap) before it collects again, so on
 * a small fabric several times the SM's live heap of garbage may pile up in the old space: issue
 * #29's abusive connections leave that much, since every TCP connection Node accepts promotes its
 * socket's objects whatever their lifetime (the figures: scripts/bench/README.md, "Where the peak
 * RSS went"). While the heap in use is under SMALL_HEAP_BYTES, V8 may grow the old generation by
 * GROWING_PERCENT only (`--heap-growing-percent`, at least its minimum step of 8 MB): a few more
 * short mark-compacts. Above it (a large fabric's own state) V8's factor again: the flag held for a
 * whole large run costs CPU in mark-compacts of a growing heap (scripts/bench/README.md, "Figures
 * behind source comments"). V8 reads the flag at each limit it sets (after each collection), so a
 * change takes effect at the next one.
 *
 * Set back at exit as TurboFan's hold is (cli/tiering.ts): V8 checks a code cache against the hash
 * of its flags, and the bin writes its cache at the exit of a run. */
import { v8Flags, type V8Flags } from './tiering.js';

/** The old generation grows by at most this much over its live size while the heap is small. */
export const GROWING_PERCENT = 50;
/** The heap in use (V8's heapUsed) above which V8's own growing factor is back... */
export const SMALL_HEAP_BYTES = 64 << 20;
/** ...and below which the hold is on again. */
const SMALL_AGAIN_BYTES = 32 << 20;
/** How often the heap is looked at (an unref'd timer: it never keeps the process up). Once a
 * second: each look wakes an idle SM's event loop (at 250 ms those wake-ups were a third of an
 * idle SM's main-thread CPU under ibsim, issue #32). */
const CHECK_MS = 1000;

let timer: ReturnType<typeof setInterval> | undefined;
/** The heap in use: V8's heap statistics once node:v8 is loaded (its first check loads it, not the
 * start-up: 3.5 ms, cli/tiering.ts), the same heapUsed as process.memoryUsage() without reading
 * /proc for the RSS: 1.4 µs instead of 23 µs a call, four calls a second for the SM's whole life
 * (issue #32). */
let heapUsedNow = (): number => process.memoryUsage().heapUsed;
let loading = false;
const tick = (): void => {
  if (!loading) {
    loading = true;
    void import('node:v8').then(
      (v8) => void (heapUsedNow = () => v8.getHeapStatistics().used_heap_size),
      () => undefined, // process.memoryUsage() stays
    );
  }
  checkHeapGrowth();
};
let flags: V8Flags | undefined;
let holding = false;

const set = (on: boolean): void => {
  holding = on;
  flags!.setFlagsFromString(`--heap-growing-percent=${on ? GROWING_PERCENT : 0}`);
};

/** Hold the old generation's growth while the heap is small (`ibsm run`). */
export async function holdHeapGrowth(): Promise<void> {
  if (timer !== undefined) return;
  flags = await v8Flags();
  process.prependOnceListener('exit', releaseHeapGrowth);
  timer = setInterval(tick, CHECK_MS);
  timer.unref();
  set(true);
  checkHeapGrowth();
}

/** The hold on or off for the heap in use now (its timer asks every CHECK_MS). */
export function checkHeapGrowth(heapUsed = heapUsedNow()): void {
  if (timer === undefined) return;
  if (holding && heapUsed > SMALL_HEAP_BYTES) set(false);
  else if (!holding && heapUsed < SMALL_AGAIN_BYTES) set(true);
}

/** V8's own growing factor again, for good (at exit). */
export function releaseHeapGrowth(): void {
  if (timer === undefined) return;
  clearInterval(timer);
  timer = undefined;
  if (holding) set(false);
}

/** Whether the old generation's growth is held now. */
export function heapGrowthHeld(): boolean {
  return holding;
}
