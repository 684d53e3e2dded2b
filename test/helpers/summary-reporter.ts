/** Prints the plain closing line "N passed, N failed[, N skipped]" after vitest's own summary, so any
 * CI that reads that line counts the tests. */
import type { Reporter } from 'vitest/reporters';

interface TaskLike {
  type: string;
  mode?: string;
  result?: { state?: string };
  tasks?: TaskLike[];
}

export default class SummaryReporter implements Reporter {
  onFinished(files: TaskLike[] = []): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const walk = (t: TaskLike): void => {
      if (t.tasks) for (const c of t.tasks) walk(c);
      if (t.type !== 'test') return;
      if (t.mode === 'skip' || t.mode === 'todo') skipped++;
      else if (t.result?.state === 'pass') passed++;
      else if (t.result?.state === 'fail') failed++;
    };
    for (const f of files) {
      walk(f);
      if (f.result?.state === 'fail' && !f.tasks?.length) failed++; // a file that failed to load
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}
