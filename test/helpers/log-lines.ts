/** Log lines found by their stable code (src/util/log-codes.ts), not by their text: a message
 * reworded keeps its code, so a test that asks for the code outlives the wording. A text line
 * carries the code as a column after the level ("... info  IBSM-1001 SUBNET UP nodes=7"); `then`
 * (a RegExp source) is looked for further on the same line (the fields, or the value a message
 * names in braces). A code missing from the table throws, so a typo cannot make an assertion that
 * never fails. */
import { LOG_CODES } from '../../src/util/log-codes.js';

const KNOWN = new Set(LOG_CODES.map((c) => c.code));

/** A code, or any of several (where a test means a family of lines, e.g. every sweep failure). */
export type Codes = string | readonly string[];

function known(code: Codes): string {
  const all = typeof code === 'string' ? [code] : code;
  for (const c of all) if (!KNOWN.has(c)) throw new Error(`${c}: not a log code (src/util/log-codes.ts)`);
  return all.length === 1 ? all[0]! : `(?:${all.join('|')})`;
}

/** A RegExp matching a text log line's code column `code`, then `then` on the same line. */
export function logRe(code: Codes, then?: string): RegExp {
  return new RegExp(` ${known(code)} ${then === undefined ? '' : `[^\\n]*?${then}`}`);
}

/** A RegExp matching a line of `code` in either format: text (the code column) or JSON ("code"). */
export function anyFormatRe(code: Codes): RegExp {
  const c = known(code);
  return new RegExp(` ${c} |"code":"${c}"`);
}

/** The lines (of a list, or of a whole log's text) with the code `code` (and `then` after it). */
export function withCode(log: string | readonly string[], code: Codes, then?: string): string[] {
  const re = logRe(code, then);
  return (typeof log === 'string' ? log.split('\n') : log).filter((l) => re.test(l));
}

/** Whether a line with the code `code` (and `then` after it) is there. */
export function hasCode(log: string | readonly string[], code: Codes, then?: string): boolean {
  return withCode(log, code, then).length > 0;
}

/** A RegExp source matching `text` literally (for `then`). */
export function lit(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
