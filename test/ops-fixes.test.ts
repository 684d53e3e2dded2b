/** Smaller fixes of issue #28: a partition's sl= kept when QoS is on (a policy, or --qos /
 * `qos TRUE` alone); `ibsm query --sm-key` (the old --smkey still read). */
import { describe, expect, it } from 'vitest';
import { parsePartitions } from '../src/model/partitions.js';
import { parseQosPolicy, qosVlSettings } from '../src/model/qos-policy.js';
import { parseCommandLine, commandHelp } from '../src/config/parse.js';
import { bringUp } from './helpers/subnet-rig.js';

const PARTS = 'Default=0x7fff, ipoib : ALL=full ;\nStorage=0x0002, ipoib, sl=1 : ALL=full ;\n';
const IPOIB_0x8002 = 0xff12401b8002000000000000ffffffffn;

describe("a partition's sl= under QoS", () => {
  it('QoS off: SL 0 and a warning; --qos alone (qos TRUE): the SL; a policy: the SL', async () => {
    const off = await bringUp('gen:fattree2:leaves=2,spines=1,hosts=2', { subnet: { partitions: parsePartitions(PARTS) } });
    expect(off.subnet.multicast.get(IPOIB_0x8002)!.rec.sl).toBe(0);
    expect(off.sink.lines.some((l) => /sl=1 not used: QoS is not enabled/.test(l))).toBe(true);
    off.subnet.stop();
    const qosVl = qosVlSettings({});
    const q = await bringUp('gen:fattree2:leaves=2,spines=1,hosts=2', { subnet: { partitions: parsePartitions(PARTS), qosVl } });
    expect(q.subnet.multicast.get(IPOIB_0x8002)!.rec.sl).toBe(1);
    expect(q.sink.lines.some((l) => /not used: QoS is not enabled/.test(l))).toBe(false);
    q.subnet.stop();
    const policy = parseQosPolicy('qos-ulps\n  default : 0\nend-qos-ulps\n', 'qos-policy.conf');
    const p = await bringUp('gen:fattree2:leaves=2,spines=1,hosts=2', { subnet: { partitions: parsePartitions(PARTS), qos: policy, qosVl } });
    expect(p.subnet.multicast.get(IPOIB_0x8002)!.rec.sl).toBe(1);
    p.subnet.stop();
  });
});

describe('ibsm query --sm-key', () => {
  it('is spelled as ibsm run spells it; --smkey still read, not listed', () => {
    expect(parseCommandLine('query', ['--sm-key', '0x12']).values.get('sm-key')).toBe(0x12n);
    expect(parseCommandLine('query', ['--smkey', '0x12']).values.get('sm-key')).toBe(0x12n);
    expect(commandHelp('query')).toContain('--sm-key');
    expect(commandHelp('query')).not.toContain('--smkey');
  });

  it("run's help names nue as the last resort", () => {
    expect(commandHelp('run')).toContain('when no engine of --routing applies: nue');
  });
});
