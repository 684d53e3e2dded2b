/** One leaf-to-spine Unlink and ReLink on ibsim under `ibsm run --umad`, witnessed by the real
 * tools: `ibroute` on every switch before, after the unlink and after the relink. Only the LIDs
 * whose routes crossed the cable change, the routes stay complete, loop-free and deadlock-free, the
 * busiest link stays within 1.2× of the intact one, the relink restores the intact tables exactly,
 * and the SM never rediscovers the whole fabric (one "discovery done" in its log). Then a host's
 * cable down and back: the local sweep takes the host in again (ibnetdiscover shows its LID as
 * before, smpquery its port Active) and the tables are the intact ones exactly. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startIbsim, runPreloaded, startPreloaded, type Ibsim, type PreloadedProcess } from './helpers/ibsim.js';
import { formatIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { loadFabricSpec } from '../src/model/load.js';
import { verifyRoutes } from '../src/routing/verify.js';
import { cloneFabric, isSwitch, type Fabric } from '../src/model/fabric.js';
import { withCode, logRe } from './helpers/log-lines.js';

const CLI = path.resolve('dist/cli/main.js');
const TIMEOUT = 120_000;

async function tool(ib: Ibsim, cmd: string, args: string[]): Promise<string> {
  const r = await runPreloaded(cmd, args, { ibsim: ib, timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** LID → port, from `ibroute <lid>`. */
function parseIbroute(text: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const m of text.matchAll(/^0x([0-9a-f]{4}) (\d{3}) :/gm)) out.set(parseInt(m[1]!, 16), Number(m[2]));
  return out;
}

/** Node GUID and LID of every switch, from `ibnetdiscover`'s "Switch ... lid N" lines. */
function switchLids(text: string): Map<bigint, number> {
  const out = new Map<bigint, number>();
  for (const m of text.matchAll(/^Switch\s+\d+\s+"S-([0-9a-f]{16})".*?(?:base|enhanced) port 0 lid (\d+)/gm)) out.set(BigInt('0x' + m[1]!), Number(m[2]));
  return out;
}

async function waitFor(pred: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await pred().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every switch's LFT through ibroute, by node index of `topo` (LIDs as ibsm assigned them, read
 * back from ibnetdiscover into `topo`). */
async function lfts(ib: Ibsim, topo: Fabric, lidOf: Map<bigint, number>, maxLid: number): Promise<Map<number, Uint8Array>> {
  const out = new Map<number, Uint8Array>();
  // One tool at a time: ibsim serves a bounded number of clients.
  for (const [i, n] of topo.nodes.entries()) {
    if (!isSwitch(n)) continue;
    const t = new Uint8Array(maxLid + 1).fill(255);
    for (const [lid, port] of parseIbroute(await tool(ib, 'ibroute', [String(lidOf.get(n.guid))]))) if (lid <= maxLid) t[lid] = port;
    out.set(i, t);
  }
  return out;
}

describe('incremental re-routing on ibsim, witnessed by ibroute', () => {
  it(
    'a leaf-spine Unlink changes only the routes that crossed it, ReLink restores the intact tables',
    async () => {
      const topo = loadFabricSpec('gen:fattree2:leaves=8,spines=8,hosts=5');
      const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-reroute-'));
      const file = path.join(dir, 'fattree.net');
      writeFileSync(file, formatIbnetdiscover(topo, { timestamp: 'x' }));
      const ib = await startIbsim(file);
      let sm: PreloadedProcess | undefined;
      try {
        sm = startPreloaded(process.execPath, [CLI, 'run', '--umad', '--sweep-interval', '1', '--routing', 'ftree,updn,minhop'], { ibsim: ib, timeoutMs: TIMEOUT * 2 });
        // LIDs as ibsm assigned them, from ibnetdiscover, into a copy of the topology.
        const lidded = cloneFabric(topo);
        const hosts = topo.nodes.filter((n) => !isSwitch(n)).length;
        let lidOf = new Map<bigint, number>();
        await waitFor(async () => {
          const disc = await tool(ib, 'ibnetdiscover', []);
          lidOf = switchLids(disc);
          for (const m of disc.matchAll(/^Ca\s+\d+\s+"H-([0-9a-f]{16})"[^\n]*\n\[1\]\([0-9a-f]+\)\s+"S-[0-9a-f]{16}"\[\d+\]\s*# lid (\d+) lmc/gm)) lidOf.set(BigInt('0x' + m[1]!), Number(m[2]));
          return [...lidOf.values()].every((l) => l > 0) && lidOf.size === topo.nodes.length;
        }, 60_000);
        expect(lidOf.size - topo.nodes.filter(isSwitch).length).toBe(hosts);
        for (const n of lidded.nodes) n.ports[isSwitch(n) ? 0 : 1]!.lid = lidOf.get(n.guid)!;
        const maxLid = Math.max(...lidded.nodes.flatMap((n) => n.ports.map((p) => p?.lid ?? 0)));
        // Routes complete before anything happens.
        await waitFor(async () => verifyRoutes(lidded, await lfts(ib, lidded, lidOf, maxLid), { stretch: false }).ok, 60_000);
        const before = await lfts(ib, lidded, lidOf, maxLid);
        const intact = verifyRoutes(lidded, before, { stretch: false });

        // One leaf-to-spine cable down.
        const leaf = lidded.nodes.findIndex((n) => n.desc === 'sw-l1-3');
        const port = lidded.nodes[leaf]!.ports.findIndex((p, i) => i > 0 && p?.peer && isSwitch(lidded.nodes[p.peer.node]!));
        const peer = lidded.nodes[leaf]!.ports[port]!.peer!;
        const used = new Set<number>();
        for (let lid = 1; lid <= maxLid; lid++) {
          for (const [s] of before) {
            for (let at = s, hop = 0; hop < 16; hop++) {
              const p = before.get(at)![lid]!;
              if (p === 0 || p === 255) break;
              if ((at === leaf && p === port) || (at === peer.node && p === peer.port)) used.add(lid);
              const nx = lidded.nodes[at]!.ports[p]!.peer!;
              if (!isSwitch(lidded.nodes[nx.node]!)) break;
              at = nx.node;
            }
          }
        }
        const without = cloneFabric(lidded);
        without.nodes[leaf]!.ports[port]!.peer = undefined;
        without.nodes[peer.node]!.ports[peer.port]!.peer = undefined;
        const name = `S-${lidded.nodes[leaf]!.guid.toString(16).padStart(16, '0')}`;
        await ib.console(`Unlink "${name}"[${port}]`);
        // Settled: complete over the fabric without the cable, and the same on two reads in a row
        // (a read in the middle of the SM's writes can already be complete).
        let after = before;
        let last = '';
        await waitFor(async () => {
          after = await lfts(ib, lidded, lidOf, maxLid);
          const sig = [...after.values()].map((t) => t.join(',')).join(';');
          const settled = sig === last && verifyRoutes(without, after, { stretch: false }).ok;
          last = sig;
          return settled;
        }, 60_000);
        const v = verifyRoutes(without, after, { stretch: false, requireDeadlockFree: true });
        expect(v.failures).toEqual([]);
        expect(v.ok).toBe(true);
        expect(v.linkLoad.max).toBeLessThanOrEqual(1.2 * intact.linkLoad.max);
        const changed = new Set<number>();
        let blocks = 0;
        for (const [s, t] of after) {
          const b = before.get(s)!;
          let d = false;
          for (let lid = 1; lid <= maxLid; lid++) {
            if (t[lid] !== b[lid]) {
              changed.add(lid);
              d = true;
            }
          }
          if (d) blocks++; // one 64-entry block per switch at this size
        }
        expect(changed.size).toBeGreaterThan(0);
        expect([...changed].filter((l) => !used.has(l)), 'LIDs changed that did not cross the cable').toEqual([]);

        // The cable back: the intact tables exactly.
        await ib.console(`ReLink "${name}"[${port}]`);
        await waitFor(async () => {
          const t = await lfts(ib, lidded, lidOf, maxLid);
          return [...t].every(([s, x]) => x.every((p, l) => p === before.get(s)![l]));
        }, 60_000);

        // A host's cable down (the host leaves every table) and back: the local sweep takes the
        // host in again with its LID, and the tables are the intact ones exactly.
        const leaf5 = lidded.nodes.findIndex((n) => n.desc === 'sw-l1-5');
        const hostPort = lidded.nodes[leaf5]!.ports.findIndex((p, i) => i > 0 && p?.peer && !isSwitch(lidded.nodes[p.peer.node]!));
        const host = lidded.nodes[lidded.nodes[leaf5]!.ports[hostPort]!.peer!.node]!;
        const hostLid = lidOf.get(host.guid)!;
        const leaf5Name = `S-${lidded.nodes[leaf5]!.guid.toString(16).padStart(16, '0')}`;
        await ib.console(`Unlink "${leaf5Name}"[${hostPort}]`);
        await waitFor(async () => [...(await lfts(ib, lidded, lidOf, maxLid)).values()].every((t) => t[hostLid] === 255), 60_000);
        await ib.console(`ReLink "${leaf5Name}"[${hostPort}]`);
        await waitFor(async () => {
          const t = await lfts(ib, lidded, lidOf, maxLid);
          return [...t].every(([s, x]) => x.every((p, l) => p === before.get(s)![l]));
        }, 60_000);
        const disc = await tool(ib, 'ibnetdiscover', []);
        const hostId = host.guid.toString(16).padStart(16, '0');
        expect(disc).toMatch(new RegExp(`^Ca\\s+\\d+\\s+"H-${hostId}"[^\\n]*\\n\\[1\\]\\([0-9a-f]+\\)\\s+"S-[0-9a-f]{16}"\\[${hostPort}\\]\\s*# lid ${hostLid} lmc`, 'm'));

        expect(await tool(ib, 'smpquery', ['portinfo', String(hostLid), '1'])).toMatch(/^LinkState:\.+Active$/m);

        const r = await sm.stop('SIGTERM');
        sm = undefined;
        expect(r.code).toBe(0);
        const log = r.stderr;
        expect(log).toMatch(logRe('IBSM-1001'));
        expect(log).toMatch(logRe('IBSM-3001', 'trap=128'));
        // The whole fabric was discovered once: the changes were explored locally.
        expect(withCode(log, 'IBSM-2001')).toHaveLength(1);
        const local = withCode(log, 'IBSM-1201').map((l) => /reroute=(\w+) lftBlocks=(\d+)/.exec(l)!).filter((m) => Number(m[2]) > 0);
        expect(local.map((m) => m[1])).toEqual(['incremental', 'incremental', 'incremental', 'incremental']);
        expect(local.slice(0, 2).map((m) => Number(m[2]))).toEqual([blocks, blocks]);
        expect(log).toMatch(logRe('IBSM-1205', 'node=.* guid=0x'));
      } finally {
        if (sm) await sm.stop('SIGKILL');
        await ib.stop();
      }
    },
    TIMEOUT * 3,
  );
});
