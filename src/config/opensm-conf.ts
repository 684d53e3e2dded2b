/** OpenSM's opensm.conf (as `opensm -c FILE` writes it): `key value` lines, `#` comments (also
 * after a value: `sweep_interval 10 # comment`). Every key is read by its rule
 * (config/opensm-keys.ts): mapped onto its option, accepted because ibsm behaves as that value
 * does, accepted without effect (said when not OpenSM's default), or refused with the reason. A
 * key OpenSM does not have is refused with a "did you mean", a malformed line with file:line; all
 * problems of a file are reported together. Nothing is dropped silently: `keys` says what became
 * of each line (`ibsm config` prints it). */
import { existsSync } from 'node:fs';
import { OPTIONS, suggest, type OptionSpec, type OptionValue } from './options.js';
import { parseValue, UsageError } from './parse.js';
import { OPENSM_ENGINES, opensmKeyRule, opensmKeys, sameValue, TWO_WORD_KEYS } from './opensm-keys.js';

/** What became of one opensm.conf line. */
export interface OpensmKeyUse {
  key: string;
  value: string;
  line: number;
  /** `--option`, `as ibsm does`, `no effect: why`, `not used: why`. */
  status: string;
}

export interface OpensmConf {
  values: Map<string, OptionValue>;
  notes: string[];
  /** Every key read, in file order, with what ibsm does with it. */
  keys: OpensmKeyUse[];
  /** Where each option's value came from: option name → line. */
  lines: Map<string, number>;
}

/** Values with which opensm.conf says "not set, use the default" (osm_subnet.c). */
const UNSET: Readonly<Record<string, string>> = { qos_max_vls: '0', qos_high_limit: '-1' };

/** The roles of the files opensm.conf names, for the notes and errors. */
const MISSING_FILE: Readonly<Record<string, string>> = {
  partition_config_file: 'the default partition',
  qos_policy_file: 'no QoS policy',
  prefix_routes_file: 'no prefix routes',
};

/** opensm.conf's routing_engine list → ibsm's engines (OPENSM_ENGINES), with notices. */
function mapEngines(value: string, where: string, notes: string[]): string | { problem: string } {
  const out: string[] = [];
  for (const raw of value.split(',').map((s) => s.trim()).filter(Boolean)) {
    const e = OPENSM_ENGINES[raw.toLowerCase()];
    if (e?.refuse) return { problem: `${where}: routing engine "${raw}": ${e.refuse}` };
    if (e?.notice) notes.push(`routing_engine ${raw}: ${e.notice}`);
    out.push(e?.engine ?? raw);
  }
  return [...new Set(out)].join(',');
}

export function readOpensmConf(text: string, file: string): OpensmConf {
  const problems: string[] = [];
  const notes: string[] = [];
  const read = new Map<string, { value: string; line: number }>();
  const known = opensmKeys();
  text.split('\n').forEach((l, i) => {
    const t = l.trim();
    if (!t || t.startsWith('#')) return;
    const where = `${file}:${i + 1}`;
    const m = /^(\S+)(?:\s+(.*))?$/.exec(t)!;
    const key = m[1]!;
    // A trailing comment after the value, as OpenSM reads it (its number parsers stop there).
    const value = (m[2] ?? '').replace(/(^|\s+)#.*$/, '').trim();
    const rule = opensmKeyRule(key);
    if (!rule) {
      const malformed = t.split(/\s+/).length > 2 ? ` in the malformed line "${t}" (expected "key value")` : '';
      problems.push(`${where}: unknown opensm.conf key "${key}"${malformed}${suggest(key, known)}: not a key of OpenSM 3.3.23's opensm.conf`);
      return;
    }
    if (!value) {
      problems.push(`${where}: ${key} has no value (expected "${key} <value>")`);
      return;
    }
    // a path or a list may hold spaces (`routing_engine ftree, updn`); other values are one word
    const free = 'option' in rule ? rule.option.type === 'string' || rule.option.type === 'list' : rule.rule.kind === 'no-effect' && !TWO_WORD_KEYS.has(key);
    const words = value.split(/\s+/).length;
    if (words > (TWO_WORD_KEYS.has(key) ? 2 : 1) && !free) {
      problems.push(`${where}: malformed line "${t}": ${key} takes one value, got "${value}"`);
      return;
    }
    const before = read.get(key);
    if (before) notes.push(`${key} is given at ${file}:${before.line} and again at line ${i + 1}: the later value is used, as in OpenSM`);
    read.delete(key);
    read.set(key, { value, line: i + 1 });
  });

  const values = new Map<string, OptionValue>();
  const lines = new Map<string, number>();
  const keys: OpensmKeyUse[] = [];
  const qosOn = /^true$/i.test(read.get('qos')?.value ?? 'FALSE');
  const aliases: Array<() => void> = [];
  for (const [key, { value, line }] of read) {
    const where = `${file}:${line}`;
    const use = (status: string): void => void keys.push({ key, value, line, status });
    const r = opensmKeyRule(key)!;
    if ('option' in r) {
      const o: OptionSpec = r.option;
      if (value === '(null)' || UNSET[key] === value) {
        use(`--${o.name} left at its default (${value} means unset)`);
        continue;
      }
      let text = value;
      if (key === 'routing_engine') {
        const mapped = mapEngines(value, where, notes);
        if (typeof mapped !== 'string') {
          problems.push(mapped.problem);
          continue;
        }
        text = mapped;
      }
      let v: OptionValue;
      try {
        v = parseValue(o, text, `${where}: ${key}`);
      } catch (e) {
        problems.push((e as Error).message);
        continue;
      }
      if (key === 'guid' && v === 0n) {
        use('--guid left at its default (0: the default port, as in OpenSM)');
        continue;
      }
      if (key === 'qos_policy_file' && !qosOn) {
        notes.push(`qos_policy_file ${value} not used: qos is FALSE`);
        use('not used: qos is FALSE (as in OpenSM)');
        continue;
      }
      if (MISSING_FILE[key] && !existsSync(value)) {
        notes.push(`${key} ${value} does not exist: ${MISSING_FILE[key]}, as in OpenSM`);
        use(`not used: the file does not exist (${MISSING_FILE[key]}, as in OpenSM)`);
        continue;
      }
      values.set(o.name, v);
      lines.set(o.name, line);
      use(`--${o.name}${text !== value ? ` ${text}` : ''}`);
      continue;
    }
    const x = r.rule;
    if (x.kind === 'same') {
      const want = x.like ? (read.get(x.like)?.value ?? x.dflt) : x.dflt;
      if ([want, ...(x.like ? [] : (x.also ?? []))].some((a) => sameValue(value, a))) use('as ibsm does');
      else problems.push(`${where}: ${key} ${value} is refused: ${x.why} (accepted: ${x.like ? `the value of ${x.like}, ${want}` : [x.dflt, ...(x.also ?? [])].join(' or ')})`);
    } else if (x.kind === 'no-effect') {
      if (x.differs || !sameValue(value, x.dflt)) notes.push(`${key} ${value}: no effect: ${x.why}`);
      use(`no effect: ${x.why}`);
    } else {
      // after the mapped keys: an alias wins over its option's own key (no_partition_enforcement TRUE over part_enforce)
      aliases.push(() => {
        const o = OPTIONS.find((y) => y.name === x.option)!;
        const got = x.to(value);
        if (typeof got === 'object' && got !== null && !Array.isArray(got) && 'problem' in got) {
          problems.push(`${where}: ${got.problem}`);
          return;
        }
        if (typeof got === 'object' && got !== null && !Array.isArray(got) && 'note' in got) {
          if (got.note) notes.push(got.note);
          if (got.value === undefined) {
            use(got.note || `as ibsm does (--${o.name} not changed)`);
            return;
          }
          values.set(o.name, got.value);
          lines.set(o.name, line);
          use(`--${o.name} ${String(got.value)}`);
          return;
        }
        values.set(o.name, got as OptionValue);
        lines.set(o.name, line);
        use(`--${o.name} ${String(got)}`);
      });
    }
  }
  for (const a of aliases) a();
  if (problems.length) {
    // in file order (a problem starts with its file:line)
    const lineOf = (p: string): number => Number(/^.*?:(\d+): /.exec(p.slice(file.length))?.[1] ?? 0);
    problems.sort((a, b) => lineOf(a) - lineOf(b));
    throw new UsageError(problems.length === 1 ? problems[0]! : `${problems.length} problems in ${file}:\n  ${problems.join('\n  ')}`);
  }
  keys.sort((a, b) => a.line - b.line);
  return { values, notes, keys, lines };
}

/** The keys of an opensm.conf text, in file order (`opensm -c`'s order for its default file). */
export function opensmConfKeys(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.split(/\s+/)[0]!);
}
