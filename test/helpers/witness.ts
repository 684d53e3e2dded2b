/** The real tools as witnesses of what an SM left on an ibsim fabric: ibnetdiscover (the
 * topology and every LID), smpquery (every linked port ACTIVE, the SM LID everywhere), ibroute
 * (every switch's LFT, checked complete and loop-free by our verifier). Run after any fault
 * injection is switched off: the tools' own MADs cross the same ports. */
import { expect } from 'vitest';
import { runPreloaded, type Ibsim } from './ibsim.js';
import { parseIbnetdiscover } from '../../src/model/ibnetdiscover.js';
import { diffFabrics } from '../../src/model/json.js';
import { verifyRoutes } from '../../src/routing/verify.js';
import { NodeType } from '../../src/wire/mad.js';
import type { Fabric } from '../../src/model/fabric.js';
import { graphOf } from './graph.js';

/** Run a diag tool attached at `simHost` (default: ibsim's first node); its stdout. A tool whose
 * MAD timed out is run again, up to three times in all: on a loaded machine (the whole suite on
 * two cores) ibsim can take longer than a tool's one-second timeout; a missing route fails every
 * time. */
export async function tool(ib: Ibsim, cmd: string, args: string[], simHost?: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const r = await runPreloaded(cmd, args, { ibsim: ib, timeoutMs: 30_000, ...(simHost !== undefined ? { simHost } : {}) });
    if (r.code === 0) return r.stdout;
    if (attempt < 3 && /timed out/i.test(r.stderr)) continue;
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  }
}

/** The LFT a switch holds, from `ibroute <lid>` output. */
export function parseIbroute(text: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const m of text.matchAll(/^0x([0-9a-f]{4}) (\d{3}) :/gm)) out.set(parseInt(m[1]!, 16), Number(m[2]));
  return out;
}

export interface WitnessReport {
  seen: Fabric;
  /** Linked ports smpquery showed ACTIVE, and all linked ports. */
  active: number;
  ports: number;
}

/** Check with the real tools that `topo` is up under the SM at `smLid`: same graph, unique LIDs,
 * every linked port ACTIVE with SMLid `smLid`, routes complete and loop-free. */
export async function witnessUp(ib: Ibsim, topo: Fabric, smLid: number): Promise<WitnessReport> {
  const seen = parseIbnetdiscover(await tool(ib, 'ibnetdiscover', []));
  expect(diffFabrics(graphOf(seen, { ignoreUnlinkedRates: true }), graphOf(topo, { ignoreUnlinkedRates: true }))).toEqual([]);
  const lids = new Set<number>();
  for (const n of seen.nodes) {
    for (const [pn, p] of n.ports.entries()) {
      if (!p || (n.type === NodeType.Switch ? pn !== 0 : !p.peer)) continue;
      expect(p.lid, `${n.desc} port ${pn} has a LID`).toBeGreaterThan(0);
      expect(lids.has(p.lid!), `LID ${p.lid} is unique`).toBe(false);
      lids.add(p.lid!);
    }
  }
  let active = 0;
  let ports = 0;
  for (const n of seen.nodes) {
    if (n.type === NodeType.Switch) {
      const swLid = n.ports[0]!.lid!;
      for (const [pn, p] of n.ports.entries()) {
        if (pn === 0 || !p?.peer) continue;
        ports++;
        const out = await tool(ib, 'smpquery', ['portinfo', String(swLid), String(pn)]);
        expect(out, `${n.desc} port ${pn}`).toMatch(/^LinkState:\.+Active$/m);
        active++;
      }
      expect(await tool(ib, 'smpquery', ['portinfo', String(swLid), '0'])).toMatch(new RegExp(`^SMLid:\\.+${smLid}$`, 'm'));
    } else {
      for (const p of n.ports) {
        if (!p?.peer) continue;
        ports++;
        const out = await tool(ib, 'smpquery', ['portinfo', String(p.lid)]);
        expect(out, `${n.desc} LID ${p.lid}`).toMatch(/^LinkState:\.+Active$/m);
        expect(out).toMatch(new RegExp(`^SMLid:\\.+${smLid}$`, 'm'));
        active++;
      }
    }
  }
  const lfts = new Map<number, Uint8Array>();
  const maxLid = Math.max(...lids);
  for (const [i, n] of seen.nodes.entries()) {
    if (n.type !== NodeType.Switch) continue;
    const table = parseIbroute(await tool(ib, 'ibroute', [String(n.ports[0]!.lid)]));
    const lft = new Uint8Array(maxLid + 1).fill(255);
    for (const [lid, port] of table) if (lid <= maxLid) lft[lid] = port;
    lfts.set(i, lft);
  }
  const rep = verifyRoutes(seen, lfts);
  expect(rep.failures).toEqual([]);
  expect(rep.ok).toBe(true);
  return { seen, active, ports };
}
