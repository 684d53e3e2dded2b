/** Option names with units (#31): a config key whose value has a unit says it (`sweepIntervalS`,
 * `pollIntervalMs`, `mkeyLeaseS`, `perfmgrIntervalS`, `logMaxSizeMb`); an operator's JSON config
 * file with the old keys still works (read as the new, each noted as deprecated: `ibsm config
 * --check` exits 0), `ibsm config` prints the new keys; the command line and opensm.conf keep
 * their names. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CONFIG_OPTIONS, optionByName, unitOf } from '../src/config/options.js';
import { parseCommandLine } from '../src/config/parse.js';
import { readConfigFile, resolveConfig } from '../src/config/file.js';
import { readOpensmConf } from '../src/config/opensm-conf.js';
import { withDefaults } from '../src/api/sm-config.js';
import { runCli } from './helpers/cli.js';

const tmp = (): string => mkdtempSync(path.join(os.tmpdir(), 'ibsm-units-'));
const RENAMED: Record<string, [string, string, string]> = {
  // old key: new key, its option, its unit
  sweepInterval: ['sweepIntervalS', 'sweep-interval', 's'],
  pollInterval: ['pollIntervalMs', 'poll-interval', 'ms'],
  mkeyLease: ['mkeyLeaseS', 'mkey-lease', 's'],
  perfmgrInterval: ['perfmgrIntervalS', 'perfmgr-interval', 's'],
  logMaxSize: ['logMaxSizeMb', 'log-max-size', 'MB'],
};
const OLD = { sweepInterval: 7, pollInterval: 250, mkeyLease: 60, perfmgrInterval: 30, logMaxSize: 5 };

describe('config keys with units', () => {
  it('every value with a unit (S, MS, MB) has it in its key; the IBA exponent codes say they are codes', () => {
    const argUnit: Record<string, string> = { S: 's', MS: 'ms', MB: 'MB' };
    for (const o of CONFIG_OPTIONS) expect(unitOf(o), o.key).toBe(argUnit[o.arg ?? '']);
    for (const [old, [key, name, unit]] of Object.entries(RENAMED)) {
      const o = optionByName(name)!;
      expect([o.key, unitOf(o), o.keyAliases]).toEqual([key, unit, [old]]);
    }
    for (const name of ['subnet-timeout', 'packet-life', 'hoq-life', 'leaf-hoq-life']) {
      const o = optionByName(name)!;
      expect(unitOf(o), name).toBeUndefined();
      expect(o.help, name).toContain('an IBA exponent code, not a duration (4.096 µs × 2^N)');
    }
  });

  it('the command line and opensm.conf keep their names', () => {
    const cl = resolveConfig('run', parseCommandLine('run', ['--sweep-interval', '7', '--poll-interval', '250', '--mkey-lease', '60', '--perfmgr-interval', '30', '--log-max-size', '5']), undefined);
    const conf = readOpensmConf('sweep_interval 7\nsminfo_polling_timeout 250\nm_key_lease_period 60\nperfmgr_sweep_time_s 30\nlog_max_size 5\n', 'opensm.conf');
    for (const [old, v] of Object.entries(OLD)) {
      const name = RENAMED[old]![1];
      expect(cl.settings.get(name)!.value, name).toBe(v);
      expect(conf.values.get(name), name).toBe(v);
    }
  });

  it('an ibsm config file with the old keys: read as the new ones, each noted as deprecated', () => {
    const dir = tmp();
    const oldFile = path.join(dir, 'old.json');
    writeFileSync(oldFile, JSON.stringify(OLD));
    const newFile = path.join(dir, 'new.json');
    writeFileSync(newFile, JSON.stringify(Object.fromEntries(Object.entries(OLD).map(([k, v]) => [RENAMED[k]![0], v]))));
    const old = readConfigFile(oldFile);
    expect(old.values).toEqual(readConfigFile(newFile).values);
    expect(readConfigFile(newFile).notes).toEqual([]);
    expect(old.notes).toEqual(Object.keys(OLD).map((k) => `config file ${oldFile}: key "${k}" is deprecated: it is read as "${RENAMED[k]![0]}" (the same value, in ${RENAMED[k]![2]}); \`ibsm config\` prints the new key`));
  });

  it('ibsm config prints the new keys; --check notes the old ones and exits 0', async () => {
    const f = path.join(tmp(), 'ibsm.conf');
    writeFileSync(f, '// an operator\'s file of before the rename\n{ "sweepInterval": 7, "logMaxSize": 5, "lmc": 1 }\n');
    const printed = await runCli(['config', '--config', f]);
    expect(printed.code).toBe(0);
    expect(printed.out).toMatch(new RegExp(`// from: file ${f} \\(7\\)\\n  "sweepIntervalS": 7,`));
    expect(printed.out).toMatch(new RegExp(`// from: file ${f} \\(5\\)\\n  "logMaxSizeMb": 5,`));
    expect(printed.out).not.toMatch(/"sweepInterval"\s*:|"logMaxSize"\s*:/);
    expect(printed.out).toContain(`// note: config file ${f}: key "sweepInterval" is deprecated`);
    const check = await runCli(['config', '--check', '--config', f]);
    expect(check.code, check.out).toBe(0);
    expect(check.out.split('\n').filter((l) => l.startsWith('note: '))).toEqual([
      `note: config file ${f}: key "sweepInterval" is deprecated: it is read as "sweepIntervalS" (the same value, in s); \`ibsm config\` prints the new key`,
      `note: config file ${f}: key "logMaxSize" is deprecated: it is read as "logMaxSizeMb" (the same value, in MB); \`ibsm config\` prints the new key`,
    ]);
    expect(check.out).toMatch(/configuration good\n$/);
  });

  it('an old key and its new name in one file: refused, naming both', async () => {
    const f = path.join(tmp(), 'ibsm.conf');
    writeFileSync(f, '{ "sweepInterval": 7, "sweepIntervalS": 8 }');
    const r = await runCli(['config', '--check', '--config', f]);
    expect(r.code).toBe(2);
    expect(r.out).toContain(`problem: config file ${f}: "sweepIntervalS" and "sweepInterval" are the same setting (--sweep-interval): give it once, as "sweepIntervalS"`);
  });

  it('a program passing an old key to openSm gets it under the new name (the new name wins)', () => {
    const o = withDefaults({ sweepInterval: 0, pollInterval: 250 } as never);
    expect([o.sweepIntervalS, o.pollIntervalMs]).toEqual([0, 250]);
    expect(o).not.toHaveProperty('sweepInterval');
    expect(withDefaults({ sweepInterval: 3, sweepIntervalS: 4 } as never).sweepIntervalS).toBe(4);
    expect(withDefaults({}).sweepIntervalS).toBe(10);
  });
});
