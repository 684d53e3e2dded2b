/** What-if as text and JSON (`ibsm route FILE --what-if ...`): one line per case as it is
 * computed, then the summary with the worst cases (routing/what-if.ts computes them). */
import { parseWhatIf, whatIfBaseline, whatIfSteps, type WhatIfBaseline, type WhatIfCaseResult, type WhatIfOptions, type WhatIfSummary } from '../routing/what-if.js';
import type { Fabric } from '../model/fabric.js';
import type { RoutingResult } from '../routing/types.js';

const f2 = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(2));
const f3 = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(3));

export function whatIfHeader(what: string, b: WhatIfBaseline, cases: number): string {
  return `what-if: ${cases} case(s) (${what}) over ${b.switches} switches, ${b.endPorts} end ports, routed by ${b.engine}\nbaseline: busiest link ${b.busiestLink} routes, hops max ${b.hops.max} mean ${f3(b.hops.mean)}, stretch max ${f2(b.stretch.max)} mean ${f3(b.stretch.mean)}, ${b.deadlockFree ? 'deadlock-free' : 'CDG has cycles'}\n\n`;
}

/** One case as a line: the failure, the re-route, pairs lost, verifier verdict, busiest link,
 *  hops, LFT blocks that change. */
export function whatIfLine(r: WhatIfCaseResult): string {
  const verdict = r.ok ? (r.deadlockFree ? 'ok' : 'ok, CDG cycles') : `FAILED (${r.unreachablePairs} pairs unreachable, ${r.loopEntries} loop entries${r.deadlockFree ? '' : ', CDG cycles'})`;
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
