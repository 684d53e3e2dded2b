/** One base for the package's errors (issue #31 item 4): every error class the root and the
 * subpaths export extends `IbsmError` (with `code`, and `file`/`line` for the files an operator
 * writes), checked by walking the entries' exports; the file errors are thrown by the real parsers. */
import { describe, expect, it } from 'vitest';
import * as root from '../src/index.js';
import * as routing from '../src/entry/routing.js';
import * as wire from '../src/entry/wire.js';
import * as sim from '../src/entry/sim.js';
import * as config from '../src/entry/config.js';

const { IbsmError, IbsmFileError, TopologyError } = root;
const { parseGuidFile, parsePartitions, parseQosPolicy, parseGuid2Lid, GuidFileError, PartitionConfigError, QosPolicyError, Guid2LidError } = config;


const errorClasses = (): Array<[string, Function]> =>
  Object.entries({ ...root, ...routing, ...wire, ...sim, ...config }).filter(([, v]) => typeof v === 'function' && (v as Function).prototype instanceof Error) as Array<[string, Function]>;

describe('IbsmError', () => {
  it('every error class the package exports extends it', () => {
    const classes = errorClasses();
    expect(classes.length).toBeGreaterThan(20);
    const outside = classes.filter(([, c]) => !(c.prototype instanceof IbsmError) && c !== IbsmError).map(([n]) => n);
    expect(outside).toEqual([]);
  });

  it('code names the class; file and line come with the errors of files an operator writes', () => {
    const caught = (f: () => unknown): InstanceType<typeof IbsmError> => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(IbsmError);
        return e as InstanceType<typeof IbsmError>;
      }
      throw new Error('did not throw');
    };
    const cases: Array<[() => unknown, Function, string, number]> = [
      [() => parseGuidFile('0x1\n# c\nzz\n', '/etc/ibsm/roots.conf'), GuidFileError, '/etc/ibsm/roots.conf', 3],
      [() => parsePartitions('Default=0x7fff : ALL=full;\nP1=0x8001 : ALL=fool;\n', '/etc/ibsm/partitions.conf'), PartitionConfigError, '/etc/ibsm/partitions.conf', 2],
      [() => parseQosPolicy('qos-levels\nfoo\n', '/etc/ibsm/qos-policy.conf'), QosPolicyError, '/etc/ibsm/qos-policy.conf', 2],
      [() => parseGuid2Lid('0x1 0x1 0x1\n0x2 0x2\n', '/var/lib/ibsm/guid2lid'), Guid2LidError, '/var/lib/ibsm/guid2lid', 2],
      [() => routing.parseTopologyText('Switch 4 "S-1"\n[1] "H-x"[1] bogus\n', 'bad.topo'), TopologyError, 'bad.topo', 2],
    ];
    for (const [f, cls, file, line] of cases) {
      const e = caught(f);
      expect(e).toBeInstanceOf(cls);
      expect(e.code).toBe(cls.name);
      expect([e.file, e.line], e.message).toEqual([file, line]);
      expect(e.message.startsWith(`${file}:${line}: `)).toBe(true);
    }
    // not about a file: no file, no line
    const e = new root.RouteError('no end port');
    expect([e.code, e.file, e.line]).toEqual(['RouteError', undefined, undefined]);
    // a message that does not start with its file takes it explicitly
    expect(new IbsmFileError('--guid2lid /x: cannot be written', { file: '/x' }).file).toBe('/x');
    expect(new IbsmFileError('two words: not a file').file).toBeUndefined();
  });
});
