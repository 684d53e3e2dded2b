/** Config files and the effective configuration: ibsm's own JSON format (whole-line `//` comments
 * allowed, as `ibsm config` writes them) or OpenSM's opensm.conf (told apart by content: the first
 * character that is not a comment or blank is `{` for ibsm's format), checked against the option
 * table; then defaults ← file ← command line, each value with its source. */
import { existsSync, readFileSync } from 'node:fs';
import { CONFIG_OPTIONS, DEFAULT_CONFIG_FILE, defaultOf, formatValue, optionsOf, suggest, unitOf, type Command, type HostFacts, type OptionSpec, type OptionValue } from './options.js';
import { processHost } from '../util/host.js';
import { checked, checkInt, UsageError, type ParsedArgs } from './parse.js';
import { readOpensmConf, type OpensmKeyUse } from './opensm-conf.js';
import { parseU64 } from '../util/guid.js';

export interface ConfigFileValues {
  file: string;
  format: 'ibsm' | 'opensm.conf';
  /** Values by option name. */
  values: Map<string, OptionValue>;
  /** What was ignored (opensm.conf keys ibsm does not implement, files OpenSM would skip). */
  notes: string[];
  /** opensm.conf: what became of every key read. */
  keys?: OpensmKeyUse[];
  /** opensm.conf: the line each option's value came from. */
  lines?: Map<string, number>;
}

function describe(v: unknown): string {
  // JSON.parse reads 1e400 as Infinity, which JSON.stringify would show as null
  if (typeof v === 'number' && !Number.isFinite(v)) return `${v > 0 ? 'a number too large' : v < 0 ? 'a number too small' : 'not a number'} (${v})`;
  return `${JSON.stringify(v)} (${Array.isArray(v) ? 'an array' : v === null ? 'null' : `a ${typeof v}`})`;
}

/** One JSON value checked against its option; errors name the file, the key, the value and what was expected. */
export function checkJsonValue(o: OptionSpec, v: unknown, file: string, key: string = o.key!): OptionValue {
  const where = `config file ${file}: "${key}"`;
  const bad = (expect: string): UsageError => new UsageError(`${where} must be ${expect}, got ${describe(v)}`);
  switch (o.type) {
    case 'boolean':
      if (typeof v !== 'boolean') throw bad('true or false');
      return v;
    case 'string':
      if (typeof v !== 'string' || v === '') throw bad(`a non-empty string (${o.arg ?? 'text'})`);
      return checked(o, v, where);
    case 'int':
      if (typeof v !== 'number') throw bad(`an integer from ${o.min ?? 0} to ${o.max}`);
      return checkInt(o, v, where, describe(v));
    case 'key64': {
      const n = typeof v === 'string' ? parseU64(v) : undefined;
      if (n !== undefined) return n;
      if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
      throw bad('a 64-bit number as a string (e.g. "0x1234")');
    }
    case 'enum':
      if (typeof v !== 'string' || !o.choices!.includes(v)) throw bad(`one of ${o.choices!.map((c) => `"${c}"`).join(', ')}`);
      return v;
    case 'list': {
      let list: string[];
      if (typeof v === 'string') list = v.split(',').map((s) => s.trim()).filter(Boolean);
      else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) list = v.map((s) => s.trim()).filter(Boolean);
      else throw bad('a comma-separated list of names (or an array of names)');
      return checked(o, list, where);
    }
  }
}

/** ibsm's JSON config text → values by option name. A key the table renamed (`keyAliases`:
 * `sweepInterval`, now `sweepIntervalS`) is read as the new one, with a note in `deprecated`. */
export function parseIbsmConfig(text: string, file: string, deprecated: string[] = []): Map<string, OptionValue> {
  let raw: unknown;
  try {
    raw = JSON.parse(stripComments(text));
  } catch (e) {
    throw new UsageError(`config file ${file}: not valid JSON: ${(e as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new UsageError(`config file ${file}: expected a JSON object of options`);
  const out = new Map<string, OptionValue>();
  const keys = CONFIG_OPTIONS.map((o) => o.key!);
  const byKey = new Map<string, string>();
  for (const [k, v] of Object.entries(raw)) {
    const o = CONFIG_OPTIONS.find((x) => x.key === k) ?? CONFIG_OPTIONS.find((x) => x.keyAliases?.includes(k));
    if (!o) throw new UsageError(`config file ${file}: unknown key "${k}"${suggest(k, keys)} (known: ${keys.join(', ')})`);
    const before = byKey.get(o.name);
    if (before !== undefined) throw new UsageError(`config file ${file}: "${k}" and "${before}" are the same setting (--${o.name}): give it once, as "${o.key}"`);
    byKey.set(o.name, k);
    if (k !== o.key) deprecated.push(`config file ${file}: key "${k}" is deprecated: it is read as "${o.key}" (the same value${unitOf(o) ? `, in ${unitOf(o)}` : ''}); \`ibsm config\` prints the new key`);
    out.set(o.name, checkJsonValue(o, v, file, k));
  }
  return out;
}

function stripComments(text: string): string {
  return text
    .split('\n')
    .map((l) => (l.trimStart().startsWith('//') ? '' : l))
    .join('\n');
}

/** Read a config file of either format. */
export function readConfigFile(file: string): ConfigFileValues {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`config file ${file}: cannot read it (${(e as Error).message})`);
  }
  const first = stripComments(text).replace(/^\s*(#.*\n\s*)*/, '').trimStart();
  if (first.startsWith('{')) {
    const notes: string[] = [];
    return { file, format: 'ibsm', values: parseIbsmConfig(text, file, notes), notes };
  }
  const r = readOpensmConf(text, file);
  return { file, format: 'opensm.conf', values: r.values, notes: r.notes, keys: r.keys, lines: r.lines };
}

export type Source = 'default' | 'command line' | `file ${string}`;

export interface Setting {
  option: OptionSpec;
  value: OptionValue | undefined;
  source: Source;
}

export interface EffectiveConfig {
  /** Every option of the command, by name, in table order. */
  settings: Map<string, Setting>;
  file?: ConfigFileValues;
}

/** Defaults ← config file (`--config`, else /etc/ibsm/ibsm.conf if it exists) ← command line.
 * `host`: what the host-dependent defaults go by (the CLI passes what it read of its process). */
export function resolveConfig(cmd: Command, args: ParsedArgs, defaultFile: string | undefined = DEFAULT_CONFIG_FILE, host: HostFacts = processHost()): EffectiveConfig {
  const named = args.values.get('config') as string | undefined;
  const path = named ?? (defaultFile !== undefined && existsSync(defaultFile) ? defaultFile : undefined);
  const file = path !== undefined ? readConfigFile(path) : undefined;
  const settings = new Map<string, Setting>();
  const given = (name: string): OptionValue | undefined => args.values.get(name) ?? file?.values.get(name);
  for (const o of optionsOf(cmd)) {
    if (o.name === 'config') continue;
    if (args.values.has(o.name)) settings.set(o.name, { option: o, value: args.values.get(o.name), source: 'command line' });
    else if (file?.values.has(o.name)) settings.set(o.name, { option: o, value: file.values.get(o.name), source: `file ${file.file}` });
    else settings.set(o.name, { option: o, value: defaultOf(o, given, host), source: 'default' });
  }
  return { settings, file };
}

/** The value of an option in an effective configuration. */
export function setting<T extends OptionValue>(c: EffectiveConfig, name: string): T | undefined {
  return c.settings.get(name)?.value as T | undefined;
}

function jsonOf(v: OptionValue): string {
  if (typeof v === 'bigint') return JSON.stringify(`0x${v.toString(16)}`);
  return JSON.stringify(v);
}

/** `ibsm config`: every option with a config key, its value and where it came from, as ibsm's
 * config format (JSON with whole-line comments), which --config reads back. */
export function formatEffectiveConfig(c: EffectiveConfig): string {
  const lines = ['// ibsm effective configuration (ibsm config). `ibsm run --config FILE` reads this file back.'];
  if (c.file) lines.push(`// read from ${c.file.file} (${c.file.format})`);
  for (const n of c.file?.notes ?? []) lines.push(`// note: ${n}`);
  if (c.file?.keys?.length) {
    lines.push(`// every opensm.conf key read, and what ibsm does with it:`);
    for (const k of c.file.keys) lines.push(`//   ${c.file.file}:${k.line} ${k.key} ${k.value}: ${k.status}`);
  }
  lines.push('{');
  const set = [...c.settings.values()].filter((s) => s.option.key !== undefined);
  const withValue = set.filter((s) => s.value !== undefined);
  for (const s of set) {
    const o = s.option;
    lines.push(`  // --${o.name}: ${o.help}${o.opensm ? ` [opensm.conf: ${o.opensm}]` : ''}`);
    if (s.value === undefined) {
      lines.push(`  // "${o.key}": unset (${s.source}: ${o.defaultText ?? 'none'})`);
      continue;
    }
    lines.push(`  // from: ${s.source}${typeof s.value !== 'boolean' ? ` (${formatValue(o, s.value)})` : ''}`);
    lines.push(`  ${JSON.stringify(o.key)}: ${jsonOf(s.value)}${s === withValue.at(-1) ? '' : ','}`);
  }
  lines.push('}');
  return lines.join('\n') + '\n';
}
