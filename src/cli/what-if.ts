/** What-if as text and JSON (`ibsm route FILE --what-if ...`, `ibsm what-if ...` on the running
 * SM): one line per case as it is computed, then the summary with the worst cases
 * (routing/what-if.ts computes them); the running SM's side of `ibsm what-if` (liveWhatIf). */
import { intactOf, parseWhatIf, whatIfBaseline, whatIfSteps, WhatIfError, WHAT_IF_SYNTAX, type WhatIfBaseline, type WhatIfCaseResult, type WhatIfOptions, type WhatIfSummary } from '../routing/what-if.js';
import type { Fabric } from '../model/fabric.js';
import type { RoutingOptions, RoutingResult } from '../routing/types.js';
import type { Snapshot } from '../model/snapshot.js';
import type { SubnetOptions } from '../subnet.js';
import { LOCAL_MAX_CHANGES } from '../sm/local-sweep.js';
import { parseCommandLine, UsageError } from '../config/parse.js';
import { DEFAULT_CONTROL_SOCKET } from '../config/options.js';
import { ControlError, controlRequest } from './control.js';

const f2 = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(2));
const f3 = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(3));

export function whatIfHeader(what: string, b: WhatIfBaseline, cases: number): string {
  return `what-if: ${cases} case(s) (${what}) over ${b.switches} switches, ${b.endPorts} end ports, routed by ${b.engine}\nbaseline: busiest link ${b.busiestLink} routes, hops max ${b.hops.max} mean ${f3(b.hops.mean)}, stretch max ${f2(b.stretch.max)} mean ${f3(b.stretch.mean)}, ${b.deadlockFree ? 'deadlock-free' : 'CDG has cycles'}\n\n`;
}

/** One case as a line: the failure, the re-route, pairs lost, verifier verdict, busiest link,
 *  hops, LFT blocks that change. */
export function whatIfLine(r: WhatIfCaseResult): string {
  const verdict = r.ok ? (r.deadlockFree ? 'ok' : r.deadlockUnchecked ? 'ok (deadlock freedom not checked: the engine does not claim it)' : 'ok, CDG cycles') : `FAILED (${r.unreachablePairs} pairs unreachable, ${r.loopEntries} loop entries${r.deadlockFree ? '' : ', CDG cycles'})`;
  const lost = r.lostPairs ? `lost ${r.lostPairs} pairs (${r.lostEndPorts} end ports)` : 'lost 0';
  const hops = r.hops ? `hops ${r.hops.max}/${f3(r.hops.mean)}${r.stretch ? ` stretch ${f2(r.stretch.max)}/${f3(r.stretch.mean)}` : ''}` : '';
  return `${r.case}\n    ${r.reroute}${r.why && r.reroute === 'full' ? ` (${r.why})` : ''}: ${verdict}; ${lost}; busiest ${r.busiestLink}; ${hops ? hops + '; ' : ''}LFT ${r.lft.blocks} blocks (${r.lft.entries} entries, ${r.lft.switches} switches); ${Math.round(r.ms)} ms\n`;
}

export function whatIfSummaryText(s: WhatIfSummary): string {
  let out = `\nsummary: ${s.cases} cases in ${(s.ms / 1000).toFixed(1)} s (${s.incremental} incremental, ${s.full} full re-routes); ${s.failed} fail verification, ${s.losing} lose pairs\n`;
  const list = (title: string, l: WhatIfSummary['worst']['lostPairs'], fmt: (v: number) => string): void => {
    if (!l.length) return;
    out += `worst by ${title}:\n${l.map((w) => `  ${fmt(w.value).padStart(8)}  ${w.case}`).join('\n')}\n`;
  };
  list('pairs lost', s.worst.lostPairs, String);
  list(`busiest link (baseline ${s.baseline.busiestLink})`, s.worst.busiestLink, String);
  list(`mean hops (baseline ${f3(s.baseline.hops.mean)})`, s.worst.meanHops, f3);
  list('LFT blocks changed', s.worst.lftBlocks, String);
  return out;
}

/** A case for JSON: its figures, without the verifier's full report and the tables. */
export function whatIfCaseJson(r: WhatIfCaseResult): Omit<WhatIfCaseResult, 'report' | 'fabric' | 'routing'> & { cdgCycles?: number } {
  const { report, fabric: _f, routing: _r, ...rest } = r;
  return { ...rest, ms: Math.round(r.ms * 10) / 10, ...(report ? { cdgCycles: report.cdg.reduce((k, c) => k + c.cyclicComponents, 0) } : {}) };
}

/** Run `spec`'s cases over the routed fabric: each case's line through `write` as it is computed
 *  (text; none for JSON), then the summary; the JSON document's fields. */
export function runWhatIf(fabric: Fabric, routing: RoutingResult, spec: string, o: WhatIfOptions, write?: (s: string) => void): { summary: WhatIfSummary; json: Record<string, unknown> } {
  const cases = parseWhatIf(fabric, spec);
  const baseline = whatIfBaseline(fabric, routing);
  write?.(whatIfHeader(spec, baseline, cases.length));
  const steps = whatIfSteps(fabric, routing, cases, { ...o, baseline }, () => performance.now());
  const results: ReturnType<typeof whatIfCaseJson>[] = [];
  for (;;) {
    const s = steps.next();
    if (s.done) {
      write?.(whatIfSummaryText(s.value));
      return { summary: s.value, json: { baseline: s.value.baseline, cases: results, summary: { ...s.value, baseline: undefined } } };
    }
    results.push(whatIfCaseJson(s.value));
    write?.(whatIfLine(s.value));
  }
}

/** The SMs with a what-if running (one at a time each: a what-if holds the fabric's tables). */
const running = new WeakSet<object>();

/** `ibsm what-if` on the running SM (its control socket): the cases over the snapshot as it is
 *  when asked, with the SM's engine chain and options, one case at a time with the event loop
 *  given back between them (a trap, an SMP answer, an SA request wait for one case at most: tens
 *  of ms on a 1,536-host fat tree, seconds at 46,080 hosts), the answer when all are done.
 *  Not a worker thread: the cases are what the SM itself computes when a link fails, on its
 *  own tables; a worker would copy the fabric and every LFT (130 MB at 46,080 hosts) and need an
 *  entry of its own outside the one-file bundle. The SM's kept load of its tables is used as is
 *  (routing/what-if.ts intactOf): the intact routing is the snapshot's. `owner`: the SM (one
 *  what-if at a time on it). */
export async function liveWhatIf(owner: object, snap: Snapshot, cfg: Pick<SubnetOptions, 'routing' | 'routingOptions' | 'lmc' | 'seed'>, spec: string, verify: 'full' | 'fast'): Promise<unknown> {
  if (running.has(owner)) throw new ControlError('a what-if is already running on this SM; ask again when it is done');
  running.add(owner);
  try {
    const cases = parseWhatIf(snap.fabric, spec);
    const yieldLoop = (): Promise<void> => new Promise((res) => setImmediate(res));
    await yieldLoop();
    const routing: RoutingOptions = { ...cfg.routingOptions, lmc: cfg.lmc, ...(cfg.seed !== undefined ? { seed: cfg.seed } : {}) };
    const anchor = snap.fabric.nodes[snap.discovery.smNode]?.guid;
    const baseline = whatIfBaseline(snap.fabric, snap.routing);
    await yieldLoop();
    const intact = intactOf(snap.fabric, snap.routing);
    const steps = whatIfSteps(snap.fabric, snap.routing, cases, { engines: cfg.routing, routing, verify, baseline, intact, maxLocalChanges: LOCAL_MAX_CHANGES, ...(anchor !== undefined ? { anchor } : {}) }, () => performance.now());
    const results: ReturnType<typeof whatIfCaseJson>[] = [];
    for (;;) {
      await yieldLoop();
      const s = steps.next();
      if (s.done) return { sweep: snap.sweep, spec, baseline, cases: results, summary: { ...s.value, baseline: undefined } };
      results.push(whatIfCaseJson(s.value));
    }
  } catch (e) {
    if (e instanceof WhatIfError) throw new ControlError(e.message);
    throw e;
  } finally {
    running.delete(owner);
  }
}

/** A what-if can take minutes on a large fabric: the client waits this long for the answer. */
const WHAT_IF_TIMEOUT_MS = 3_600_000;

/** `ibsm what-if links|switches|LIST`: the running SM's answer, as `ibsm route --what-if` prints it. */
export async function whatIfClientMain(argv: string[], io: { stdout: { write(s: string): unknown } }): Promise<number> {
  const args = parseCommandLine('what-if', argv);
  const spec = args.positionals[0];
  if (!spec) throw new UsageError(`what-if of what? ${WHAT_IF_SYNTAX}`, 'what-if');
  if (args.positionals.length > 1) throw new UsageError(`unexpected argument "${args.positionals[1]}" (join items of one case with + and cases with commas, in one argument)`, 'what-if');
  const socket = (args.values.get('socket') as string | undefined) ?? DEFAULT_CONTROL_SOCKET;
  const verify = (args.values.get('what-if-verify') as 'full' | 'fast' | undefined) ?? 'full';
  const r = (await controlRequest(socket, { cmd: 'what-if', spec, verify }, WHAT_IF_TIMEOUT_MS)) as { sweep: number; baseline: WhatIfBaseline; cases: WhatIfCaseResult[]; summary: WhatIfSummary };
  if (args.values.get('json') === true) io.stdout.write(JSON.stringify(r) + '\n');
  else io.stdout.write(`on the tables of sweep ${r.sweep}\n` + whatIfHeader(spec, r.baseline, r.cases.length) + r.cases.map(whatIfLine).join('') + whatIfSummaryText({ ...r.summary, baseline: r.baseline }));
  return r.summary.failed || r.summary.losing ? 1 : 0;
}
