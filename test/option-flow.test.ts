/** One option table flowing to the SM (#31): every config key of `ibsm run` says in the table where
 * it goes (`to`), openSm builds the SM's and the backend's options from that alone, and the keys
 * it keeps for itself are read by name in src/api. */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_OPTIONS, optionsOf, targetsOf } from '../src/config/options.js';
import { optionsFor, RELOADABLE_KEYS, REREAD_KEYS, smOptionsOf, withDefaults } from '../src/api/sm-config.js';
import { parseCommandLine } from '../src/config/parse.js';
import { resolveConfig } from '../src/config/file.js';
import { DEFAULT_SA_LIMITS } from '../src/sa/limits.js';

const API = path.resolve(import.meta.dirname, '../src/api');
const apiText = readdirSync(API).filter((f) => f.endsWith('.ts')).map((f) => readFileSync(path.join(API, f), 'utf8')).join('\n');

describe('the option table flows to the SM', () => {
  it('every config key of ibsm run has a target; those openSm keeps are read in src/api, the others nowhere there by name', () => {
    const run = optionsOf('run').filter((o) => o.key !== undefined);
    expect(run.length).toBeGreaterThan(60);
    expect(run.filter((o) => targetsOf(o).length === 0).map((o) => o.name)).toEqual([]);
    for (const o of run) {
      const t = targetsOf(o);
      const readByName = new RegExp(`\\bo\\.${o.key}\\b|[nr]\\.${o.key}\\b|'${o.key}'`).test(apiText);
      if (t.includes('openSm')) expect(readByName, `${o.key} (openSm) is read in src/api`).toBe(true);
    }
    // the config keys of no command openSm runs have no target
    expect(CONFIG_OPTIONS.filter((o) => !o.commands.includes('run') && o.to !== undefined)).toEqual([]);
  });

  it('a configuration becomes the SM\'s and the backend\'s options by the table: units, the SA\'s bags, two targets of one key', () => {
    const args = ['--sim', 'gen:torus:3x3', '--sweep-interval', '7', '--poll-interval', '250', '--mkey', '0x1234', '--mkey-lease', '60', '--sa-cache', '5', '--sa-max-groups', '99', '--subnet-prefix', '0xfe80000000000001', '--seed', '4', '--routing', 'updn,minhop', '--partitions', '/nonexistent/partitions.conf'];
    const o = withDefaults(smOptionsOf(resolveConfig('run', parseCommandLine('run', args), undefined)));
    const subnet = optionsFor('subnet', o);
    expect(subnet.sweepIntervalMs).toBe(7000);
    expect(subnet.pollIntervalMs).toBe(250);
    expect(subnet.mkey).toBe(0x1234n);
    expect(subnet.mkeyLeasePeriod).toBe(60);
    expect(subnet.gidPrefix).toBe(0xfe80000000000001n);
    expect(subnet.seed).toBe(4);
    expect(subnet.routing).toEqual(['updn', 'minhop']);
    expect(subnet.saServer).toEqual({ answerCacheSize: 5 });
    expect(subnet.saLimits).toEqual({ ...DEFAULT_SA_LIMITS, maxGroups: 99 });
    // what openSm reads itself is not handed to the SM as it is
    expect(subnet).not.toHaveProperty('partitions');
    expect(subnet).not.toHaveProperty('sweepIntervalS');
    const backend = optionsFor('backend', o);
    expect(backend).toEqual({ sim: 'gen:torus:3x3', umad: false, seed: 4, rpc: { mkey: 0x1234n } });
  });

  it('what a reload applies and reads again is the table\'s `live` settings', () => {
    expect([...RELOADABLE_KEYS].sort()).toEqual(['cnGuidFile', 'guidRoutingOrderFile', 'guidRoutingOrderNoScatter', 'healthFlap', 'ioGuidFile', 'partitions', 'prefixRoutes', 'qos', 'qosHighLimit', 'qosMaxVls', 'qosPolicy', 'qosSl2vl', 'qosVlarbHigh', 'qosVlarbLow', 'rootGuidFile', 'roots', 'routing', 'topology', 'topologyAction']);
    expect([...REREAD_KEYS].sort()).toEqual(['cnGuidFile', 'guidRoutingOrderFile', 'ioGuidFile', 'partitions', 'prefixRoutes', 'qosPolicy', 'rootGuidFile', 'topology']);
  });

  it('the host-dependent defaults go by the host facts given, not by the process', () => {
    const umad = parseCommandLine('run', ['--umad']);
    expect(resolveConfig('run', umad, undefined, { root: true, umad2sim: false }).settings.get('guid2lid')!.value).toBe('/var/cache/opensm/guid2lid');
    expect(resolveConfig('run', umad, undefined, { root: true, umad2sim: true }).settings.get('guid2lid')!.value).toBeUndefined();
    expect(resolveConfig('run', umad, undefined, { root: false, umad2sim: false }).settings.get('guid2lid')!.value).toBeUndefined();
    expect(resolveConfig('run', umad, undefined, { root: false, umad2sim: false }).settings.get('control-socket')!.value).toBe('/run/ibsm/ibsm.sock');
    expect(resolveConfig('run', umad, undefined, { root: false, umad2sim: true }).settings.get('control-socket')!.value).toBeUndefined();
    // the API: none unless given
    expect(withDefaults({ umad: true }).guid2lid).toBeUndefined();
    expect(withDefaults({ umad: true, host: { root: true, umad2sim: false } }).guid2lid).toBe('/var/cache/opensm/guid2lid');
  });
});
