/** OpenSM's opensm.conf (as `opensm -c FILE` writes it): `key value` lines, `#` comments. Every
 * key ibsm implements is mapped onto its option (the `opensm` field of the option table); the
 * others are reported once, by name, and ignored; a malformed line is an error with its number. */
import { existsSync } from 'node:fs';
import { OPTIONS, type OptionValue } from './options.js';
import { parseValue, UsageError } from './parse.js';

export interface OpensmConf {
  values: Map<string, OptionValue>;
  notes: string[];
  /** opensm.conf keys read and mapped, and those ignored. */
  mapped: string[];
  ignored: string[];
}

/** Values with which opensm.conf says "not set, use the default" (osm_subnet.c). */
const UNSET: Readonly<Record<string, string>> = { qos_max_vls: '0', qos_high_limit: '-1' };

export function readOpensmConf(text: string, file: string): OpensmConf {
  const raw = new Map<string, { value: string; line: number }>();
  const lines = text.split('\n');
  lines.forEach((l, i) => {
    const t = l.trim();
    if (!t || t.startsWith('#')) return;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s+(\S.*)$/.exec(t);
    if (!m) throw new UsageError(`${file}:${i + 1}: malformed opensm.conf line "${t}" (expected "key value")`);
    raw.set(m[1]!, { value: m[2]!.trim(), line: i + 1 });
  });
  const values = new Map<string, OptionValue>();
  const notes: string[] = [];
  const mapped: string[] = [];
  const ignored: string[] = [];
  const qosOn = /^true$/i.test(raw.get('qos')?.value ?? 'FALSE');
  for (const [key, { value, line }] of raw) {
    const o = OPTIONS.find((x) => x.opensm === key);
    if (!o) {
      ignored.push(key);
      continue;
    }
    mapped.push(key);
    if (value === '(null)' || UNSET[key] === value) continue;
    const v = parseValue(o, value, `${file}:${line}: ${key}`);
    if (key === 'guid' && v === 0n) continue; // 0: the default port, as in OpenSM
    if (key === 'qos_policy_file' && !qosOn) {
      notes.push(`qos_policy_file ${value} not used: qos is FALSE`);
      continue;
    }
    if ((key === 'partition_config_file' || key === 'qos_policy_file' || key === 'prefix_routes_file') && !existsSync(value)) {
      notes.push(`${key} ${value} does not exist: ${key === 'partition_config_file' ? 'the default partition' : key === 'qos_policy_file' ? 'no QoS policy' : 'no prefix routes'}, as in OpenSM`);
      continue;
    }
    values.set(o.name, v);
  }
  if (ignored.length) notes.push(`opensm.conf keys ibsm does not implement (ignored): ${ignored.join(', ')}`);
  return { values, notes, mapped, ignored };
}
