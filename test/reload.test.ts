/** IbsmSm.reload (issue #28; what SIGHUP and `ibsm reload` run) on the in-process fabric: the
 * files checked whole first (a bad partitions.conf throws with its file and line, nothing changed,
 * counted, a configReload event); a good one applied live (a partition added: the SA's groups and
 * the P_Key tables the SMAs hold after the heavy sweep it starts); settings that cannot change
 * live named, their running values kept. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync, appendFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSm } from '../src/api/sm.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { renderMetrics } from '../src/api/metrics.js';
import type { ConfigReload } from '../src/events.js';

const SPEC = 'gen:fattree2:leaves=2,spines=1,hosts=2';

describe('IbsmSm.reload', () => {
  it('a partition added is applied; a broken file keeps the running configuration; the rest is named', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-reload-'));
    const parts = path.join(dir, 'partitions.conf');
    writeFileSync(parts, 'Default=0x7fff, ipoib : ALL=full ;\n');
    const opts = { sim: SPEC, partitions: parts, routing: ['ftree', 'minhop'], sweepInterval: 0, guid2lid: 'none' };
    const sm = await openSm({ ...opts, log: new Logger(new MemorySink(), 'info') });
    try {
      await sm.start();
      const events: ConfigReload[] = [];
      sm.events.on('configReload', (e) => events.push(e));
      const host = sm.snapshot!.fabric.nodes.find((n) => n.type !== 2 && n.ports[1]?.lid && n.guid !== sm.snapshot!.fabric.nodes[sm.snapshot!.discovery.smNode]!.guid)!;
      const pkeysOfHost = (): number[] => sm.sim!.pkeys(host.guid, 1).filter((k) => k & 0x7fff);

      // A partition (with an IPoIB group) added, the routing chain changed, the control socket too.
      appendFileSync(parts, 'newpart=0x0040, ipoib : ALL=full ;\n');
      const swept = sm.events.next('sweep', (s) => s.kind === 'heavy');
      const r = await sm.reload({ ...opts, routing: ['minhop'], controlSocket: path.join(dir, 'sock') });
      expect(r.reread).toEqual(['partitions']);
      expect(r.applied).toEqual(['routing']);
      expect(r.restartNeeded).toEqual(['controlSocket']);
      expect(r.groupsCreated).toBe(1);
      expect(sm.subnet.multicast.get(0xff12401b8040000000000000ffffffffn)).toBeDefined();
      await swept;
      expect(pkeysOfHost()).toContain(0x8040);
      expect(sm.snapshot!.routing.engine).toBe('minhop');

      // A broken partitions.conf: thrown with file:line, nothing changed.
      appendFileSync(parts, 'broken = = ;\n');
      await expect(sm.reload({ ...opts, routing: ['ftree'] })).rejects.toThrow(new RegExp(`${parts.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3: `));
      expect(sm.subnet.multicast.get(0xff12401b8040000000000000ffffffffn)).toBeDefined();
      expect(pkeysOfHost()).toContain(0x8040);
      expect(events.map((e) => e.ok)).toEqual([true, false]);
      expect(renderMetrics(sm.subnet, sm.backend.rpc)).toMatch(/^ibsm_config_reloads_total\{result="failed"\} 1$/m);
      expect(renderMetrics(sm.subnet, sm.backend.rpc)).toMatch(/^ibsm_config_reloads_total\{result="ok"\} 1$/m);
    } finally {
      await sm.stop();
    }
  });
});
