/** IbsmSm.reload (issue #28; what SIGHUP and `ibsm reload` run) on the in-process fabric: the
 * files checked whole first (a bad partitions.conf throws with its file and line, nothing changed,
 * counted, a configReload event); a good one applied live (a partition added: the SA's groups and
 * the P_Key tables the SMAs hold after the heavy sweep it starts); settings that cannot change
 * live named, their running values kept.
 * Then `ibsm run --config opensm.conf` on ibsim, SIGHUP, read with saquery: a partition's `sl=`
 * (QoS on, no QoS policy) is the SL of its group and paths as under OpenSM (the witness); changed, it
 * is the SL of its broadcast group (MCMemberRecord) and of the PathRecords in
 * it; a malformed opensm.conf line keeps the previous configuration (the SL that partitions.conf
 * changed alongside is not taken), logged with the file:line and counted in the metrics. */
import { describe, expect, it } from 'vitest';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSm } from '../src/api/sm.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { renderMetrics } from '../src/api/metrics.js';
import type { ConfigReload } from '../src/events.js';
import { startIbsim, IBSIM_EXAMPLES, type Ibsim } from './helpers/ibsim.js';
import { TIMEOUT, planOf, parseSaquery, saquery, startIbsm, startOpenSm, stopSa, waitFor, type RunningSa } from './helpers/sa-compare.js';
import { hasCode, logRe, lit } from './helpers/log-lines.js';

const SPEC = 'gen:fattree2:leaves=2,spines=1,hosts=2';

describe('IbsmSm.reload', () => {
  it('a partition added is applied; a broken file keeps the running configuration; the rest is named', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-reload-'));
    const parts = path.join(dir, 'partitions.conf');
    writeFileSync(parts, 'Default=0x7fff, ipoib : ALL=full ;\n');
    const opts = { sim: SPEC, partitions: parts, routing: ['ftree', 'minhop'], sweepIntervalS: 0, guid2lid: 'none' };
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

describe('SIGHUP on ibsim (opensm.conf), read back with saquery', () => {
  it("a partition's sl= changed is the groups' and paths' SL; a malformed opensm.conf line keeps the previous configuration, with file:line, counted", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-reload-sl-'));
    const parts = path.join(dir, 'partitions.conf');
    const conf = path.join(dir, 'opensm.conf');
    const partitions = (sl: number): string => `Default=0x7fff, ipoib : ALL=full ;\nstorage=0x0002, ipoib, sl=${sl} : ALL=full ;\n`;
    writeFileSync(parts, partitions(1));
    const confText = `qos TRUE # sl= is used with QoS on\nqos_max_vls 8\npartition_config_file ${parts}\n`;
    writeFileSync(conf, confText);
    const file = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca');
    /** The storage broadcast group's SL (saquery -g) and a PathRecord's in P_Key 0x8002 (saquery -p). */
    const slsOn = async (ib: Ibsim, g2lText: string): Promise<{ group?: string; path?: string }> => {
      const plan = planOf(file, g2lText);
      const cas = plan.ends.filter((e) => !e.switch);
      const [a, b] = [cas[0]!, cas.at(-1)!];
      const host = plan.caHosts.at(-1)!;
      const g = parseSaquery((await saquery(ib, host, ['-g'])).out).find((r) => r.fields.get('MGID') === 'ff12:401b:8002::ffff:ffff');
      const p = parseSaquery((await saquery(ib, host, ['-p', '--pkey', '0x8002', '--src-to-dst', `${a.lid}:${b.lid}`])).out)[0];
      return { group: g?.fields.get('SL'), path: p?.fields.get('sl') };
    };

    // The witness: OpenSM with the same files gives the group and the paths in it the partition's SL.
    const witness = await startIbsim(file);
    let osm: RunningSa | undefined;
    let osmSls: { group?: string; path?: string };
    try {
      osm = await startOpenSm(witness, ['-F', conf]);
      osmSls = await slsOn(witness, readFileSync(osm.guid2lid, 'utf8'));
    } finally {
      await stopSa(osm, 'opensm');
      await witness.stop();
    }
    expect(osmSls, 'OpenSM').toEqual({ group: '0x1', path: '0x1' });

    const g2l = path.join(dir, 'guid2lid');
    const ib: Ibsim = await startIbsim(file);
    let sa: RunningSa | undefined;
    try {
      sa = await startIbsm(ib, g2l, ['--config', conf, '--metrics-listen', '127.0.0.1:0']);
      const log = sa.log;
      await waitFor('the guid2lid file', () => existsSync(g2l) && readFileSync(g2l, 'utf8').trim().length > 0, 10_000);
      const g2lText = readFileSync(g2l, 'utf8');
      const sls = (): Promise<{ group?: string; path?: string }> => slsOn(ib, g2lText);
      const port = Number(logRe('IBSM-8020', 'url=http://127\\.0\\.0\\.1:(\\d+)/metrics').exec(log())?.[1]);
      expect(port, log()).toBeGreaterThan(0);
      const metrics = async (): Promise<string> => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(await sls(), log()).toEqual(osmSls);

      // (a) sl=1 → sl=3 and SIGHUP: the group's and the path's SL, as saquery reads them.
      writeFileSync(parts, partitions(3));
      let seen: { group?: string; path?: string } = {};
      process.kill(sa.proc.pid, 'SIGHUP');
      await waitFor('SL 3 after SIGHUP', async () => (seen = await sls()).group === '0x3' && seen.path === '0x3', 30_000).catch(() => undefined);
      expect(seen, log()).toEqual({ group: '0x3', path: '0x3' });
      expect(log()).toMatch(logRe('IBSM-8040', 'trigger=SIGHUP .*groupsUpdated=1'));

      // (b) a malformed opensm.conf line (and sl=5 in partitions.conf), SIGHUP: refused whole.
      writeFileSync(conf, `${confText}sweep_interval 10 20\n`);
      writeFileSync(parts, partitions(5));
      const before = log().length;
      process.kill(sa.proc.pid, 'SIGHUP');
      await waitFor('the reload refused', () => hasCode(log().slice(before), 'IBSM-8041'), 30_000);
      expect(log().slice(before)).toMatch(logRe('IBSM-8041', `trigger=SIGHUP error=".*${lit(conf)}:4: malformed line`));
      await new Promise((r) => setTimeout(r, 1000));
      expect(await sls(), log()).toEqual({ group: '0x3', path: '0x3' });
      const m = await metrics();
      expect(m).toMatch(/^ibsm_config_reloads_total\{result="ok"\} 1$/m);
      expect(m).toMatch(/^ibsm_config_reloads_total\{result="failed"\} 1$/m);
    } finally {
      await stopSa(sa, 'ibsm');
      await ib.stop();
    }
  }, 4 * TIMEOUT);
});
