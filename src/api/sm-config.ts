/** The options of `openSm` (and `ibsm run`): the config keys of the option table as `SmConfig`,
 * with their defaults, and what a reload may apply live. */
import type { Fabric } from '../model/fabric.js';
import type { Logger } from '../util/log.js';
import { CONFIG_OPTIONS, defaultOf, defaultText, PLAIN_HOST, targetsOf, unitOf, type HostFacts } from '../config/options.js';
import type { ConfigOf } from '../config/option-types.js';
import type { SubnetOptions } from '../subnet.js';
import type { EffectiveConfig } from '../config/file.js';
import type { Backend, BackendOptions } from './backend.js';

/** What `ibsm run` takes, by config-file key (`ibsm config` lists them; docs/api.md's table gives
 * each key's type, unit and help): computed from the option table (config/option-types.ts), so a
 * key is named once, there. The API's extras: `sim` may be a Fabric, and `roots` gives updn/ftree's
 * root switch GUIDs themselves (instead of `rootGuidFile`). */
export type SmConfig = Omit<ConfigOf<'run'>, 'sim'> & {
  /** The in-process fabric: a topology file, a generator spec (gen:...) or a Fabric. Default the embedded fat tree. */
  sim?: string | Fabric;
  /** Root switch GUIDs for updn/ftree (as a file: `rootGuidFile`). */
  roots?: bigint[];
};

/** An effective configuration (`ibsm run`'s) as openSm's options: the config keys are the option
 * names there. */
export function smOptionsOf(c: EffectiveConfig): OpenSmOptions {
  const o: Record<string, unknown> = {};
  for (const s of c.settings.values()) if (s.option.key !== undefined && s.value !== undefined) o[s.option.key] = s.value;
  return o as OpenSmOptions;
}

/** The keys of SmConfig that are config-file keys: those of `ibsm run` in the option table
 * (test/config.test.ts). */
export const SM_CONFIG_KEYS: ReadonlyArray<keyof SmConfig> = CONFIG_OPTIONS.filter((o) => o.commands.includes('run')).map((o) => o.key as keyof SmConfig);

export interface OpenSmOptions extends SmConfig {
  /** Run on this backend instead of opening one (the SMs of a multi-subnet fabric: api/subnets.ts). */
  backend?: Backend;
  /** The logger (default: from logFormat/logFile/verbose, to stderr). */
  log?: Logger;
  onProgress?: (phase: string, detail: Record<string, number>) => void;
  /** What the host-dependent defaults (the guid2lid cache as root on a real HCA) go by: `ibsm run`
   * passes what it read of its process; default PLAIN_HOST, so a program gets no system path it did
   * not name. */
  host?: HostFacts;
}

/** The options with the table's defaults for those not given. */
export function withDefaults(options: OpenSmOptions): OpenSmOptions {
  const o = withKeysRenamed(options);
  const host = o.host ?? PLAIN_HOST;
  const d: Record<string, unknown> = {};
  const get = (name: string): unknown => {
    const k = CONFIG_OPTIONS.find((x) => x.name === name)?.key;
    return k !== undefined ? (o as Record<string, unknown>)[k] : undefined;
  };
  for (const s of CONFIG_OPTIONS) {
    const v = defaultOf(s, get as (name: string) => undefined, host);
    if (v !== undefined) d[s.key!] = v;
  }
  return { ...d, ...Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) } as OpenSmOptions;
}

/** A program's options with the table's old keys (`keyAliases`: `sweepInterval`, ...) under their
 * new names, as a config file's are read; the new name wins when both are given. */
function withKeysRenamed(o: OpenSmOptions): OpenSmOptions {
  const given = o as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const s of CONFIG_OPTIONS) {
    for (const a of s.keyAliases ?? []) {
      if (!(a in given)) continue;
      out ??= { ...given };
      if (out[s.key!] === undefined) out[s.key!] = given[a];
      delete out[a];
    }
  }
  return (out ?? o) as OpenSmOptions;
}

/** The settings a reload applies to the running SM (issue #28): the options the table marks
 * `live` (the files' contents: partitions, QoS policy and VL settings, the routing engines' GUID
 * files, prefix routes; and the routing chain) and the API's `roots`. Any other setting that
 * changed takes effect at the next start (named in the result). */
export const RELOADABLE_KEYS: ReadonlySet<keyof SmConfig> = new Set<keyof SmConfig>([...CONFIG_OPTIONS.filter((o) => o.live).map((o) => o.key as keyof SmConfig), 'roots']);

/** The live settings that name a file: read again at every reload, changed or not. */
export const REREAD_KEYS: ReadonlyArray<keyof SmConfig> = CONFIG_OPTIONS.filter((o) => o.live && o.arg === 'FILE').map((o) => o.key as keyof SmConfig);

/** The options' values where the option table sends them (`to`: OptionTarget): `subnet` gives the
 * fields of the SM's SubnetOptions, `backend` those of openBackend's options; a value in seconds
 * for a field in ms is scaled. Absent values are left out (the receiver's defaults hold). */
export function optionsFor(where: 'subnet', o: OpenSmOptions): Partial<SubnetOptions>;
export function optionsFor(where: 'backend', o: OpenSmOptions): Partial<BackendOptions>;
export function optionsFor(where: 'subnet' | 'backend', o: OpenSmOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of CONFIG_OPTIONS) {
    const v = (o as Record<string, unknown>)[spec.key!];
    if (v === undefined) continue;
    for (const t of targetsOf(spec)) {
      const path = t.split('.');
      if (path.shift() !== where) continue;
      const field = path.pop()!;
      let at = out;
      for (const p of path) at = (at[p] ??= {}) as Record<string, unknown>;
      at[field] = unitOf(spec) === 's' && field.endsWith('Ms') ? (v as number) * 1000 : v;
    }
  }
  return out;
}

/** What a reload did: the settings that changed and were applied, those that need a restart. */
export interface ReloadResult {
  /** The files read again (by setting), whether or not their contents changed. */
  reread: string[];
  applied: string[];
  restartNeeded: string[];
  groupsCreated: number;
  groupsUpdated: number;
  groupsReleased: number;
}

/** docs/api.md's table of SmConfig (scripts/gen-docs.mjs): every key with the TS type of its value,
 * its unit, default and help, from the option table; and the API's two extras. */
export function smConfigMarkdown(): string {
  const cell = (t: string): string => t.replace(/\|/g, '\\|');
  const rows = ['| key | type | unit | default | what |', '|---|---|---|---|---|'];
  for (const o of CONFIG_OPTIONS.filter((x) => x.commands.includes('run'))) {
    const type = o.key === 'sim' ? 'string | Fabric' : o.type === 'enum' ? o.choices!.map((c) => `'${c}'`).join(' | ') : { boolean: 'boolean', string: 'string', int: 'number', key64: 'bigint', list: 'string[]' }[o.type];
    const live = o.live ? ' A reload applies it.' : '';
    rows.push(`| \`${o.key}\` | \`${cell(type)}\` | ${unitOf(o) ?? ''} | ${cell(defaultText(o))} | ${cell(o.help)} (\`--${o.name}\`${o.opensm ? `, opensm.conf \`${o.opensm}\`` : ''}).${live} |`);
  }
  rows.push("| `roots` | `bigint[]` |  | none | root switch GUIDs for updn/ftree, the API's alternative to `rootGuidFile`. A reload applies it. |");
  return rows.join('\n');
}
