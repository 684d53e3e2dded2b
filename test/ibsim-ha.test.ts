/** Several SMs on ibsim (issue #10): ibsm and OpenSM 3.3.23 on one simulated fabric, each
 * attached at its own HCA (umad2sim's SIM_HOST), with the real tools as witnesses: `sminfo`
 * against each SM's port (state, priority), `smpquery portinfo` (every port's MasterSMLID),
 * `ibroute` (LFTs unchanged where they should be) and `ibnetdiscover` (LIDs unchanged).
 *
 * SM_Key: OpenSM's default SM_Key is 1 (`opensm -c` prints `sm_key 0x0000000000000001`), ibsm's
 * is 0. OpenSM answers an SMInfo Get with its SM_Key to a requester that presents its M_Key (0 by
 * default, so to everyone), and ignores an SM whose non-zero SM_Key differs; ibsm does the same.
 * ibsm at key 0 would therefore ignore OpenSM (key 1), while OpenSM would still see ibsm (it sends
 * key 0). Every ibsm here runs with `--sm-key 1`, OpenSM's default, so each side sees the other;
 * OpenSM runs with its default key.
 *
 * OpenSM polls its master every 10 s and declares it dead after 4 misses by default; here it is
 * given a config file with sminfo_polling_timeout 500 and polling_retry_number 3, ibsm's own
 * defaults, force_log_flush TRUE (its log is read while it runs), and a 1 s sweep interval
 * (ibsm: --sweep-interval 1, --poll-interval 200). Every process is stopped by PID. */
import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from './helpers/sa-compare.js';
import { startIbsim, runPreloaded, startPreloaded, IBSIM_EXAMPLES, type Ibsim, type PreloadedProcess } from './helpers/ibsim.js';
import { parseIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { NodeType } from '../src/wire/mad.js';

const CLI = path.resolve('dist/cli/main.js');
const FILE = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca');
const TEST_TIMEOUT = 120_000;
const OSM_POLL_MS = 500;
const OSM_POLL_RETRIES = 3;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function tool(ib: Ibsim, cmd: string, args: string[]): Promise<string> {
  const r = await runPreloaded(cmd, args, { ibsim: ib, timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}


interface SmInfoSeen {
  guid: bigint;
  actCount: number;
  priority: number;
  state: number;
}

/** `sminfo <lid>`: the SMInfo the SM at that LID answers with. */
async function sminfo(ib: Ibsim, lid: number): Promise<SmInfoSeen> {
  const out = await tool(ib, 'sminfo', [String(lid)]);
  const m = /sm guid 0x([0-9a-f]+), activity count (\d+) priority (\d+) state (\d+)/.exec(out);
  if (!m) throw new Error(`sminfo ${lid}: unexpected output ${out}`);
  return { guid: BigInt('0x' + m[1]!), actCount: Number(m[2]), priority: Number(m[3]), state: Number(m[4]) };
}

const STANDBY = 2;
const MASTER = 3;

/** What the fabric holds: LIDs by port GUID (ibnetdiscover), MasterSMLID of every CA port and
 * switch port 0 (smpquery portinfo), and every switch's LFT (ibroute). */
interface FabricState {
  lids: Map<bigint, number>;
  smLids: Map<number, number>;
  lfts: Map<number, string>;
}

async function fabricState(ib: Ibsim): Promise<FabricState> {
  const f = parseIbnetdiscover(await tool(ib, 'ibnetdiscover', []));
  const lids = new Map<bigint, number>();
  const smLids = new Map<number, number>();
  const lfts = new Map<number, string>();
  for (const n of f.nodes) {
    for (const [pn, p] of n.ports.entries()) {
      if (!p?.lid || (n.type === NodeType.Switch && pn !== 0)) continue;
      lids.set(p.guid, p.lid);
      const pi = await tool(ib, 'smpquery', ['portinfo', String(p.lid)]);
      smLids.set(p.lid, Number(/^SMLid:\.+(\d+)$/m.exec(pi)?.[1] ?? -1));
      if (n.type === NodeType.Switch) lfts.set(p.lid, (await tool(ib, 'ibroute', [String(p.lid)])).replace(/^.*Lid \d+ guid.*$/m, ''));
    }
  }
  return { lids, smLids, lfts };
}

/** The LID of a CA's first port, by node description. */
async function caLid(ib: Ibsim, desc: string): Promise<number> {
  const f = parseIbnetdiscover(await tool(ib, 'ibnetdiscover', []));
  const n = f.nodes.find((x) => x.desc === desc);
  const lid = n?.ports.find((p) => p?.lid)?.lid;
  if (!lid) throw new Error(`${desc} has no LID`);
  return lid;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

interface RunningSm {
  kind: 'ibsm' | 'opensm';
  proc: PreloadedProcess;
  log(): string;
  metricsPort?: number;
  /** Its scratch directory (removed after the test). */
  dir: string;
}

/** ibsm run at `node` (its log on stdout); returns at once. */
async function startIbsm(ib: Ibsim, node: string, priority: number, extra: string[] = []): Promise<RunningSm> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-ha-'));
  const metricsPort = await freePort();
  const args = ['run', '--umad', '--sweep-interval', '1', '--priority', String(priority), '--sm-key', '1', '--poll-interval', '200', '--guid2lid', path.join(dir, 'guid2lid'), '--metrics-port', String(metricsPort), ...extra];
  const proc = startPreloaded('bash', ['-c', 'exec "$0" "$@" 2>&1', process.execPath, CLI, ...args], { ibsim: ib, simHost: node, cwd: dir, timeoutMs: 10 * TEST_TIMEOUT });
  return { kind: 'ibsm', proc, log: () => proc.stdout(), metricsPort, dir };
}

/** OpenSM at `node` with a config file that shortens its polling; returns at once. */
function startOpenSm(ib: Ibsim, node: string, priority: number): RunningSm {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-ha-osm-'));
  const logFile = path.join(dir, 'opensm.log');
  const conf = path.join(dir, 'opensm.conf');
  writeFileSync(conf, `sminfo_polling_timeout ${OSM_POLL_MS}\npolling_retry_number ${OSM_POLL_RETRIES}\nforce_log_flush TRUE\n`);
  // -D 0x05: errors and verbose messages (state changes, the SUBNET UP box).
  const proc = startPreloaded('opensm', ['-F', conf, '-p', String(priority), '-s', '1', '-D', '0x05', '-f', logFile], { ibsim: ib, simHost: node, cwd: dir, env: { OSM_CACHE_DIR: dir, OSM_TMP_DIR: dir }, timeoutMs: 10 * TEST_TIMEOUT });
  return { kind: 'opensm', proc, log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''), dir };
}

/** Stop by PID: SIGTERM, then SIGKILL (OpenSM may not leave once its ibsim is gone). */
async function stopSm(sm: RunningSm | undefined): Promise<void> {
  if (!sm) return;
  const r = await Promise.race([sm.proc.stop('SIGTERM'), sleep(5000).then(() => undefined)]);
  if (!r) await sm.proc.stop('SIGKILL');
}

async function lftBlocksWritten(sm: RunningSm): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${sm.metricsPort}/metrics`)).text();
  const m = /^ibsm_table_blocks_written_total\{table="lft"\} (\d+)$/m.exec(text);
  if (!m) throw new Error(`no LFT counter in\n${text}`);
  return Number(m[1]);
}

const ibsmUp = (sm: RunningSm): boolean => /entering MASTER/.test(sm.log()) && /SUBNET UP/.test(sm.log());
const osmUp = (sm: RunningSm): boolean => sm.log().includes('SUBNET UP');

/** Every port's MasterSMLID is `lid`. */
function allSmLid(s: FabricState, lid: number): void {
  expect([...new Set(s.smLids.values())]).toEqual([lid]);
}

function sameFabric(after: FabricState, before: FabricState): void {
  expect(after.lids).toEqual(before.lids);
  expect(after.lfts).toEqual(before.lfts);
}

async function withFabric(body: (ib: Ibsim, sms: RunningSm[]) => Promise<void>): Promise<void> {
  const ib = await startIbsim(FILE);
  const sms: RunningSm[] = [];
  try {
    await body(ib, sms);
  } catch (e) {
    for (const sm of sms) (e as Error).message += `\n--- ${sm.kind} log (tail) ---\n${sm.log().slice(-4000)}`;
    throw e;
  } finally {
    for (const sm of sms) await stopSm(sm);
    await ib.stop();
    for (const sm of sms) rmSync(sm.dir, { recursive: true, force: true });
  }
}

describe('several SMs on ibsim: ibsm and OpenSM, witnessed by sminfo, smpquery and ibroute', () => {
  it(
    'OpenSM master, ibsm started with a lower priority: ibsm stands by and the fabric is untouched; ibsm takes over after kill -9',
    () =>
      withFabric(async (ib, sms) => {
        const osm = startOpenSm(ib, 'Hca1', 5);
        sms.push(osm);
        await waitFor('OpenSM SUBNET UP', () => osmUp(osm), 60_000);
        const osmLid = await caLid(ib, 'Hca1');
        const before = await fabricState(ib);
        allSmLid(before, osmLid);
        const ibsm = await startIbsm(ib, 'Hca2', 2);
        sms.push(ibsm);
        const osmInfo = await sminfo(ib, osmLid);
        await waitFor('ibsm STANDBY', () => ibsm.log().includes(`entering STANDBY master=0x${osmInfo.guid.toString(16).padStart(16, '0')} lid=${osmLid}`), 30_000);
        await sleep(3000); // several OpenSM sweeps and ibsm polls
        const ibsmLid = await caLid(ib, 'Hca2');
        const ours = await sminfo(ib, ibsmLid);
        expect(ours.state).toBe(STANDBY);
        expect(ours.priority).toBe(2);
        const theirs = await sminfo(ib, osmLid);
        expect(theirs.state).toBe(MASTER);
        expect(theirs.priority).toBe(5);
        const after = await fabricState(ib);
        allSmLid(after, osmLid);
        sameFabric(after, before);
        expect(ibsm.log()).not.toMatch(/entering MASTER|SUBNET UP/);
        expect(await lftBlocksWritten(ibsm)).toBe(0);

        // kill -9 OpenSM: ibsm's polls go unanswered and it takes over, keeping every LID.
        process.kill(osm.proc.pid, 'SIGKILL');
        const t0 = Date.now();
        await waitFor('ibsm MASTER after OpenSM died', () => ibsmUp(ibsm), 30_000);
        const took = Date.now() - t0;
        expect(took).toBeLessThan(10_000);
        await waitFor('every port under ibsm', async () => [...(await fabricState(ib)).smLids.values()].every((l) => l === ibsmLid), 15_000);
        const final = await fabricState(ib);
        allSmLid(final, ibsmLid);
        expect(final.lids).toEqual(before.lids);
        expect((await sminfo(ib, ibsmLid)).state).toBe(MASTER);
        console.log(`OpenSM -> ibsm takeover: ${took} ms, LFT blocks written ${await lftBlocksWritten(ibsm)}, LFTs same: ${JSON.stringify([...final.lfts]) === JSON.stringify([...before.lfts])}`);
      }),
    TEST_TIMEOUT,
  );

  it(
    'OpenSM master, ibsm started with a higher priority: the subnet moves to ibsm, OpenSM stands by',
    () =>
      withFabric(async (ib, sms) => {
        const osm = startOpenSm(ib, 'Hca1', 2);
        sms.push(osm);
        await waitFor('OpenSM SUBNET UP', () => osmUp(osm), 60_000);
        const osmLid = await caLid(ib, 'Hca1');
        const before = await fabricState(ib);
        allSmLid(before, osmLid);
        const ibsm = await startIbsm(ib, 'Hca2', 5);
        sms.push(ibsm);
        await waitFor('ibsm MASTER', () => ibsmUp(ibsm), 60_000);
        const ibsmLid = await caLid(ib, 'Hca2');
        await waitFor('every port under ibsm', async () => [...(await fabricState(ib)).smLids.values()].every((l) => l === ibsmLid), 15_000);
        await waitFor('OpenSM STANDBY', async () => (await sminfo(ib, osmLid)).state === STANDBY, 15_000);
        await sleep(3000);
        const after = await fabricState(ib);
        allSmLid(after, ibsmLid);
        expect(after.lids).toEqual(before.lids);
        const ours = await sminfo(ib, ibsmLid);
        expect(ours.state).toBe(MASTER);
        expect(ours.priority).toBe(5);
        const theirs = await sminfo(ib, osmLid);
        expect(theirs.state).toBe(STANDBY);
        expect(theirs.priority).toBe(2);
        // OpenSM hands over to ibsm as soon as it reads its SMInfo (ibsm may still be DISCOVERING),
        // enters STANDBY without waiting for the ACKNOWLEDGE, and accepts that ACKNOWLEDGE.
        expect(osm.log()).toMatch(/state_mgr_send_handover: Handing over mastership/);
        expect(osm.log()).not.toMatch(/ERR 2F04/);
        expect(ibsm.log()).not.toMatch(/SMInfo Set not (delivered|sent)/);
      }),
    TEST_TIMEOUT,
  );

  it(
    'ibsm master, OpenSM started with a lower priority: OpenSM stands by, the fabric untouched; OpenSM takes over after kill -9',
    () =>
      withFabric(async (ib, sms) => {
        const ibsm = await startIbsm(ib, 'Hca2', 5);
        sms.push(ibsm);
        await waitFor('ibsm MASTER', () => ibsmUp(ibsm), 30_000);
        const ibsmLid = await caLid(ib, 'Hca2');
        const before = await fabricState(ib);
        allSmLid(before, ibsmLid);
        const osm = startOpenSm(ib, 'Hca1', 2);
        sms.push(osm);
        await waitFor('OpenSM STANDBY', () => osm.log().includes('Entering STANDBY state'), 30_000);
        const osmLid = await caLid(ib, 'Hca1');
        await sleep(3000);
        const theirs = await sminfo(ib, osmLid);
        expect(theirs.state).toBe(STANDBY);
        expect(theirs.priority).toBe(2);
        const ours = await sminfo(ib, ibsmLid);
        expect(ours.state).toBe(MASTER);
        expect(ours.priority).toBe(5);
        const after = await fabricState(ib);
        allSmLid(after, ibsmLid);
        sameFabric(after, before);
        expect(ibsm.log()).not.toMatch(/handover to/);

        // kill -9 ibsm: OpenSM's polls (every 500 ms, 3 retries) go unanswered and it takes over.
        process.kill(ibsm.proc.pid, 'SIGKILL');
        const t0 = Date.now();
        await waitFor('every port under OpenSM', async () => [...(await fabricState(ib)).smLids.values()].every((l) => l === osmLid), 60_000);
        console.log(`ibsm -> OpenSM takeover: ${Date.now() - t0} ms`);
        expect(osm.log()).toMatch(/Entering MASTER state[\s\S]*Entering STANDBY state[\s\S]*Entering MASTER state|Entering STANDBY state[\s\S]*Entering MASTER state/);
        const final = await fabricState(ib);
        allSmLid(final, osmLid);
        expect(final.lids).toEqual(before.lids);
        expect((await sminfo(ib, osmLid)).state).toBe(MASTER);
      }),
    TEST_TIMEOUT,
  );

  it(
    'OpenSM started with a higher priority while ibsm is master: ibsm finds it within a few sweeps and hands over; OpenSM takes the HANDOVER',
    () =>
      withFabric(async (ib, sms) => {
        const ibsm = await startIbsm(ib, 'Hca2', 2);
        sms.push(ibsm);
        await waitFor('ibsm MASTER', () => ibsmUp(ibsm), 30_000);
        const ibsmLid = await caLid(ib, 'Hca2');
        const before = await fabricState(ib);
        const osm = startOpenSm(ib, 'Hca1', 5);
        sms.push(osm);
        const t0 = Date.now();
        const osmGuid = parseIbnetdiscover(await tool(ib, 'ibnetdiscover', [])).nodes.find((n) => n.desc === 'Hca1')!.ports.find((p) => p?.lid)!.guid;
        const osmLid = await caLid(ib, 'Hca1');
        await waitFor('ibsm hands over', () => ibsm.log().includes(`handover to 0x${osmGuid.toString(16).padStart(16, '0')}`), 10_000);
        expect(Date.now() - t0, 'within a few 1 s sweep intervals').toBeLessThan(5000);
        expect(ibsm.log()).toMatch(new RegExp(`entering STANDBY master=0x0*${osmGuid.toString(16)} lid=${osmLid}`));
        expect(ibsm.log()).not.toMatch(/SMInfo Set not delivered|SMInfo Set refused/);
        await waitFor('OpenSM MASTER', () => osm.log().includes('Entering MASTER state'), 10_000);
        await sleep(2000);
        const theirs = await sminfo(ib, osmLid);
        expect(theirs.state).toBe(MASTER);
        expect(theirs.priority).toBe(5);
        const ours = await sminfo(ib, ibsmLid);
        expect(ours.state).toBe(STANDBY);
        expect(ours.priority).toBe(2);
        // OpenSM accepted the HANDOVER (it carries SmState MASTER) and is MASTER by SMInfo. Its
        // first sweep as master then stalls on ibsim, so the ports keep ibsm's SM LID: entering
        // STANDBY above a worse master it sent trap 144 to ibsm; ibsim drops the TrapRepress
        // ("lid 2 got trap repress - dropping" in ibsim's log) and umad2sim has no send timeouts,
        // so that trap stays outstanding in OpenSM and its sweep waits for it forever (seen with
        // -D 0x0f: "1 QP0 MADs outstanding", TID of the trap 144, evicted only at exit). On
        // hardware the kernel times the trap out. Nothing else changed on the fabric:
        const after = await fabricState(ib);
        expect(after.lids).toEqual(before.lids);
        expect(after.lfts).toEqual(before.lfts);
        expect(ib.log()).toMatch(/got trap repress - dropping/);
      }),
    TEST_TIMEOUT,
  );

  it(
    'ibsm and ibsm: kill -9 of the master; the standby is master within 5 s, no LID changed, no LFT block written',
    () =>
      withFabric(async (ib, sms) => {
        const a = await startIbsm(ib, 'Hca1', 5);
        sms.push(a);
        await waitFor('first ibsm MASTER', () => ibsmUp(a), 30_000);
        const b = await startIbsm(ib, 'Hca2', 2);
        sms.push(b);
        const aLid = await caLid(ib, 'Hca1');
        await waitFor('second ibsm STANDBY', () => new RegExp(`entering STANDBY master=0x[0-9a-f]+ lid=${aLid}`).test(b.log()), 30_000);
        const bLid = await caLid(ib, 'Hca2');
        expect((await sminfo(ib, bLid)).state).toBe(STANDBY);
        const before = await fabricState(ib);
        allSmLid(before, aLid);
        process.kill(a.proc.pid, 'SIGKILL');
        const t0 = Date.now();
        await waitFor('standby MASTER', () => ibsmUp(b), 10_000);
        const took = Date.now() - t0;
        await waitFor('every port under the new master', async () => [...(await fabricState(ib)).smLids.values()].every((l) => l === bLid), 10_000);
        console.log(`ibsm -> ibsm: MASTER ${took} ms after kill -9; every port moved by ${Date.now() - t0} ms`);
        expect(took).toBeLessThan(5000);
        const after = await fabricState(ib);
        allSmLid(after, bLid);
        sameFabric(after, before);
        expect((await sminfo(ib, bLid)).state).toBe(MASTER);
        expect(await lftBlocksWritten(b)).toBe(0);
      }),
    TEST_TIMEOUT,
  );
});
