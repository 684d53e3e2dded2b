/** An OpenSM operator's configuration moved to ibsm (issue #28), on ibsim: a realistic opensm.conf
 * (QoS on, its policy and partitions files named in it), a partitions.conf with IPoIB groups and
 * `sl=`, and a qos-policy.conf. OpenSM and then ibsm on the same fabric (same guid2lid), each
 * started with that opensm.conf, read with the real tools: P_Key tables (smpquery pkeys),
 * SL2VL and VLArbitration tables (smpquery sl2vl, vlarb), the multicast groups (saquery -g: SL,
 * MTU, rate) and PathRecord SLs (saquery -p), compared field by field. Then, on each, a partition
 * added and SIGHUP: the new P_Key 0x8040 in a member port's table; then a broken partitions.conf
 * and SIGHUP: the SM still up on the previous configuration (0x8040 still there, SA answering).
 * The opensm.conf is as an OpenSM site writes it: trailing comments (`sweep_interval 10 # why`) and
 * OpenSM's own engine list (`routing_engine torus-2QoS,minhop`, read as torus,minhop).
 * Every process is stopped by PID. */
import { describe, expect, it } from 'vitest';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startIbsim, runPreloaded, IBSIM_EXAMPLES, type Ibsim } from './helpers/ibsim.js';
import { TIMEOUT, planOf, parseSaquery, diffRecords, saquery, startOpenSm, startIbsm, stopSa, waitFor, readVlTables, type RunningSa } from './helpers/sa-compare.js';
import { logRe } from './helpers/log-lines.js';

const FILE = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca');
const PARTITIONS = `# the site's partitions
Default=0x7fff, ipoib, mtu=4, rate=3 : ALL=full ;
storage=0x0002, ipoib, sl=1, mtu=4 : ALL=full ;
compute=0x0003, ipoib, sl=2, rate=3 : ALL=full ;
`;
const POLICY = `
qos-ulps
    default                 : 0
    any, service-id 0x4000  : 7
end-qos-ulps
`;
const openSmConf = (dir: string): string => `# opensm.conf, as an OpenSM site has it
sm_priority 5   # above the default
sweep_interval 10 # seconds
lmc 0
routing_engine torus-2QoS,minhop # the torus first; minhop where it is not one
subnet_prefix 0xfe80000000000000
packet_life_time 0x12	# tab before the comment
head_of_queue_lifetime 0x12
leaf_head_of_queue_lifetime 0x10
qos TRUE # with partitions.conf's sl=
qos_max_vls 8
qos_high_limit 0
qos_vlarb_high 0:4,1:0,2:0,3:0,4:0,5:0,6:0,7:0
qos_vlarb_low 0:0,1:4,2:4,3:4,4:4,5:4,6:4,7:4
qos_sl2vl 0,1,2,3,4,5,6,7,7,7,7,7,7,7,7,7
qos_policy_file ${path.join(dir, 'qos-policy.conf')}
partition_config_file ${path.join(dir, 'partitions.conf')}
`;

interface Seen {
  guid2lid: string;
  pkeys: string;
  tables: Map<string, string>;
  groups: string;
  paths: Map<string, string>;
  /** The member port's P_Key table after the partition added, and after the broken file. */
  afterAdd: string;
  afterBroken: string;
  /** The SA's answer after the broken file (it still serves). */
  groupsAfterBroken: string;
  log: string;
}

/** A port's P_Key table as smpquery prints it, the entries only (the capacity line aside). */
async function pkeysOf(ib: Ibsim, host: string, lid: number): Promise<string> {
  const r = await runPreloaded('smpquery', ['pkeys', String(lid), '1'], { ibsim: ib, simHost: host, timeoutMs: 20_000 });
  if (r.code !== 0) throw new Error(`smpquery pkeys ${lid}: ${r.stderr}`);
  return r.stdout;
}
const keysIn = (t: string): string[] => [...t.matchAll(/0x([0-9a-f]{4})/gi)].map((m) => m[1]!.toLowerCase()).filter((k) => k !== '0000');

async function observe(kind: 'opensm' | 'ibsm', dir: string, guid2lid?: string): Promise<Seen> {
  writeFileSync(path.join(dir, 'partitions.conf'), PARTITIONS);
  const conf = path.join(dir, 'opensm.conf');
  const ib = await startIbsim(FILE);
  let sa: RunningSa | undefined;
  try {
    sa = kind === 'opensm' ? await startOpenSm(ib, ['-F', conf]) : await startIbsm(ib, guid2lid!, ['--config', conf]);
    const g2l = readFileSync(sa.guid2lid, 'utf8');
    const plan = planOf(FILE, g2l);
    const cas = plan.ends.filter((e) => !e.switch);
    const [a, b] = [cas[0]!, cas.at(-1)!];
    const host = plan.caHosts.at(-1)!;
    const tables = await readVlTables(ib, plan, host);
    const paths = new Map<string, string>();
    for (const extra of [[], ['--pkey', '0x8002'], ['--pkey', '0x8003'], ['--pkey', '0xffff'], ['--service_id', '0x4000']]) {
      paths.set(extra.join(' ') || '(none)', (await saquery(ib, host, ['-p', '--src-to-dst', `${a.lid}:${b.lid}`, ...extra])).out);
    }
    const pkeys = await pkeysOf(ib, host, a.lid);
    const groups = (await saquery(ib, host, ['-g'])).out;

    // A partition added, SIGHUP: the new P_Key in the member port's table.
    appendFileSync(path.join(dir, 'partitions.conf'), 'newpart=0x0040 : ALL=full ;\n');
    process.kill(sa.proc.pid, 'SIGHUP');
    let afterAdd = '';
    await waitFor(`${kind}: P_Key 0x8040 after SIGHUP`, async () => keysIn((afterAdd = await pkeysOf(ib, host, a.lid))).includes('8040'), 30_000);

    // A broken partitions.conf, SIGHUP: still up, on the previous configuration.
    const logBefore = sa.log().length;
    appendFileSync(path.join(dir, 'partitions.conf'), 'broken = = ;\n');
    process.kill(sa.proc.pid, 'SIGHUP');
    if (kind === 'ibsm') await waitFor('ibsm: the reload refused', () => logRe('IBSM-8041').test(sa!.log().slice(logBefore)), 30_000);
    // OpenSM re-reads partitions.conf in the sweep SIGHUP starts; a sweep of this fabric is over
    // within a second or two (its log says which way it went).
    else await waitFor('opensm: the sweep after SIGHUP', () => /SUBNET UP|Partition configuration|partition/i.test(sa!.log().slice(logBefore)), 30_000);
    await new Promise((r) => setTimeout(r, 2000));
    const afterBroken = await pkeysOf(ib, host, a.lid);
    const groupsAfterBroken = (await saquery(ib, host, ['-g'])).out;
    return { guid2lid: g2l, pkeys, tables, groups, paths, afterAdd, afterBroken, groupsAfterBroken, log: sa.log() };
  } finally {
    await stopSa(sa, kind);
    await ib.stop();
  }
}

describe('an OpenSM configuration migrated to ibsm, on ibsim (OpenSM as the witness)', () => {
  it('opensm.conf + partitions.conf (IPoIB, sl=) + qos-policy.conf: the same tables, groups and PathRecord SLs; SIGHUP adds a partition; a broken file keeps the previous one', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-migrate-'));
    writeFileSync(path.join(dir, 'opensm.conf'), openSmConf(dir));
    writeFileSync(path.join(dir, 'qos-policy.conf'), POLICY);
    const osm = await observe('opensm', dir);
    const g2l = path.join(dir, 'guid2lid');
    writeFileSync(g2l, osm.guid2lid);
    const ours = await observe('ibsm', dir, g2l);
    const report = `\n--- ibsm log ---\n${ours.log.slice(-4000)}`;

    // The engine list as OpenSM spells it, read in its order by both: OpenSM tries torus-2QoS
    // (it fails for want of /etc/opensm/torus-2QoS.conf) and routes with minhop; ibsm maps it to
    // torus,minhop, and its torus, which finds the ring from the fabric (torus_config is not read),
    // routes this two-switch ring. The tables, groups and PathRecords below are the same either way.
    expect(osm.log).toMatch(/setup of routing engine 'torus-2QoS'[^]*setup of routing engine 'minhop'/);
    expect(ours.log, report).toMatch(logRe('IBSM-8001', 'routing=torus,minhop '));
    expect(ours.log, report).toMatch(logRe('IBSM-1001', 'engine=(torus|minhop)\\b'));

    // P_Key tables: the same keys (full members of every partition) under both.
    expect(keysIn(osm.pkeys).sort(), 'OpenSM').toEqual(['8002', '8003', 'ffff']);
    expect(keysIn(ours.pkeys).sort(), report).toEqual(keysIn(osm.pkeys).sort());
    // SL2VL and VLArbitration as the qos_* settings program them.
    for (const [name, theirs] of osm.tables) {
      expect(theirs, `OpenSM ${name}`).toMatch(/SL2VL|VLArb/i);
      expect(ours.tables.get(name), name).toBe(theirs);
    }
    // The groups partitions.conf names: SL (sl=, with QoS on), MTU and rate as OpenSM has them.
    const mismatches: string[] = [];
    mismatches.push(...diffRecords('saquery -g', parseSaquery(ours.groups), parseSaquery(osm.groups)));
    for (const [who, seen] of [['OpenSM', osm], ['ibsm', ours]] as const) {
      const group = (pkey: string) => parseSaquery(seen.groups).find((g) => g.fields.get('MGID') === `ff12:401b:${pkey}::ffff:ffff`);
      expect(group('8002')?.fields.get('SL'), `${who}: storage's broadcast group`).toBe('0x1');
      expect(group('8003')?.fields.get('SL'), `${who}: compute's broadcast group`).toBe('0x2');
    }
    // PathRecord SLs (and every other field) by P_Key and service ID.
    const DIFFER: Record<string, string> = { service_id: 'ibsm returns the requested ServiceID (IBA); OpenSM answers 0', pkey: 'any shared P_Key is valid when none is requested' };
    for (const [q, theirs] of osm.paths) {
      const excluded: Record<string, string> = {};
      if (q.includes('--service_id')) excluded.service_id = DIFFER.service_id!;
      if (!q.includes('--pkey')) excluded.pkey = DIFFER.pkey!;
      mismatches.push(...diffRecords(`saquery -p ${q}`, parseSaquery(ours.paths.get(q)!), parseSaquery(theirs), excluded));
    }
    expect(mismatches, report).toEqual([]);
    const sl = (out: string): string | undefined => parseSaquery(out)[0]?.fields.get('sl');
    expect(sl(ours.paths.get('--service_id 0x4000')!)).toBe('0x7');

    // SIGHUP after a partition was added: 0x8040 in the member port's table under both.
    expect(keysIn(osm.afterAdd)).toContain('8040');
    expect(keysIn(ours.afterAdd)).toContain('8040');
    // A broken partitions.conf and SIGHUP: ibsm keeps the configuration it runs (0x8040 stays,
    // the SA answers with the same groups), and says why with the file and line.
    expect(keysIn(ours.afterBroken).sort(), report).toEqual(keysIn(ours.afterAdd).sort());
    expect(parseSaquery(ours.groupsAfterBroken).length).toBe(parseSaquery(ours.groups).length);
    expect(ours.log).toMatch(logRe('IBSM-8041', 'trigger=SIGHUP error=".*partitions\\.conf:6: '));
    // OpenSM, the witness, still up and serving after the same file (its table as it kept it).
    expect(parseSaquery(osm.groupsAfterBroken).length).toBeGreaterThan(0);
    console.log(`OpenSM after the broken partitions.conf: P_Keys ${keysIn(osm.afterBroken).join(' ')}`);
  }, 10 * TIMEOUT);
});
