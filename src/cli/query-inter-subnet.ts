/**
 * `ibsm query path --sgid <local> --dgid <remote> [--send]`: a path between subnets through the
 * a-g sequence (sa/inter-subnet-client.ts): P1 from the local SA, P2 from the remote SA through the
 * router, the validation. On an in-process fabric of several subnets (--sim gen:subnets:...) the
 * subnets are brought up here and the query is sent from the port with the SGID's GUID; `--send`
 * then injects a test packet each way with exactly the paths' fields and prints the hops it took
 * (ibtracert across subnets). Elsewhere (--umad) the query goes from the local port to its SA.
 */
import { formatGid } from '../wire/format.js';
import { PathRecord } from '../wire/sa.js';
import { loadFabricSpec } from '../model/load.js';
import { isMultiSubnet } from '../model/subnets.js';
import { Logger } from '../util/log.js';
import { openSubnets, type IbsmSubnets } from '../api/subnets.js';
import { sendProbe, type ProbeResult } from '../sim/probe.js';
import { resolveInterSubnetPath, InterSubnetPathError, type InterSubnetPath } from '../sa/inter-subnet-client.js';
import { SaClient } from '../sa/client.js';
import { UsageError } from '../config/parse.js';
import type { BackendArgs, QueryIo, QuerySession } from './query.js';
import { GUID_MASK, formatGuid } from '../util/guid.js';


export interface InterSubnetQuery {
  sgid: bigint;
  dgid: bigint;
  json: boolean;
  send: boolean;
  backend: BackendArgs;
  saLid?: number;
  smKey?: bigint;
}

/** Is this a query between two subnets (different GID prefixes)? */
export function isInterSubnetQuery(sgid: bigint | undefined, dgid: bigint | undefined): boolean {
  return sgid !== undefined && dgid !== undefined && sgid >> 64n !== dgid >> 64n;
}

const hexBig = (_k: string, v: unknown): unknown => (typeof v === 'bigint' ? `0x${v.toString(16)}` : v);

function printProbe(io: QueryIo, what: string, r: ProbeResult): void {
  io.stdout.write(`${what}: ${r.arrived ? `arrived at ${r.desc} port ${r.port} (SLID ${r.slid} DLID ${r.dlid}${r.hopLimit !== undefined ? ` HopLimit ${r.hopLimit}` : ''})` : `lost: ${r.reason}`}, ${r.hops.length} link(s)\n`);
  for (const h of r.hops) io.stdout.write(`  ${h.desc} port ${h.port}  SLID ${h.slid} DLID ${h.dlid}\n`);
}

export async function queryInterSubnet(q: InterSubnetQuery, io: QueryIo, openRpc: (b: BackendArgs) => Promise<QuerySession>): Promise<number> {
  let net: IbsmSubnets | undefined;
  let session: QuerySession | undefined;
  try {
    let rpc;
    let saLid = q.saLid;
    let from: { node: number; port: number } | undefined;
    if (q.backend.sim !== undefined && !q.backend.umad) {
      const fabric = loadFabricSpec(q.backend.sim, { seed: q.backend.seed });
      if (!isMultiSubnet(fabric)) throw new UsageError(`--sgid and --dgid are in different subnets, but ${q.backend.sim} is one subnet (try --sim gen:subnets:count=2)`);
      net = await openSubnets({ sim: fabric, sweepIntervalS: 0, seed: q.backend.seed, log: new Logger(undefined, 'warn') });
      await net.start();
      const guid = q.sgid & GUID_MASK;
      const node = net.sim.nodes.find((n) => n.ports.some((p) => p?.guid === guid));
      if (!node) throw new UsageError(`no port of the simulated fabric has the SGID's GUID ${formatGuid(guid)}`);
      const c = net.client(node.idx, node.ports.findIndex((p) => p?.guid === guid));
      if (c.subnet.part.prefix !== q.sgid >> 64n) throw new UsageError(`the SGID's prefix is not its port's subnet prefix ${formatGid(c.subnet.part.prefix << 64n).slice(0, 19)}`);
      session = { rpc: c.rpc, saLid: c.subnet.sm.snapshot!.smLid, close: () => c.close() };
      from = { node: c.node, port: c.port };
    } else {
      session = await openRpc(q.backend);
    }
    rpc = session.rpc;
    saLid ??= session.saLid ?? (await SaClient.locate(rpc, { smKey: q.smKey })).saLid;
    let r: InterSubnetPath;
    try {
      r = await resolveInterSubnetPath(rpc, { saLid, sgid: q.sgid, dgid: q.dgid, smKey: q.smKey });
    } catch (e) {
      if (!(e instanceof InterSubnetPathError)) throw e;
      io.stderr.write(`ibsm query: ${e.message}\n`);
      return 1;
    }
    let fwd: ProbeResult | undefined;
    let back: ProbeResult | undefined;
    if (q.send) {
      if (!net || !from) throw new UsageError('--send needs the in-process fabric (--sim)');
      fwd = await sendProbe(net.sim, from.node, from.port, { slid: r.p1.slid, dlid: r.p1.dlid, sl: r.p1.sl, sgid: r.p1.sgid, dgid: r.p1.dgid, hopLimit: r.p1.hopLimit });
      if (r.p2) {
        const dguid = q.dgid & GUID_MASK;
        const dn = net.sim.nodes.find((n) => n.ports.some((p) => p?.guid === dguid))!;
        back = await sendProbe(net.sim, dn.idx, dn.ports.findIndex((p) => p?.guid === dguid), { slid: r.p2.slid, dlid: r.p2.dlid, sl: r.p2.sl, sgid: r.p2.sgid, dgid: r.p2.dgid, hopLimit: r.p2.hopLimit });
      }
    }
    if (q.json) {
      io.stdout.write(JSON.stringify({ p1: r.p1, p2: r.p2 ?? null, validation: r.validation ?? null, valid: r.valid, remoteSa: r.remoteSa, attempts: r.attempts.length, saRequests: r.saRequests, ...(fwd ? { send: { forward: fwd, back: back ?? null } } : {}) }, hexBig, 2) + '\n');
    } else {
      io.stdout.write(`P1 (local SA, LID ${saLid}):\n${PathRecord.name} dump:\n${PathRecord.dump(r.p1, '\t\t')}\n`);
      if (r.p2) io.stdout.write(`P2 (remote SA ${formatGid(((q.dgid >> 64n) << 64n) | 0x0200000000000002n)} through the router at LID ${r.p1.dlid}):\n${PathRecord.name} dump:\n${PathRecord.dump(r.p2, '\t\t')}\n`);
      else io.stdout.write(`P2: the remote SA did not answer: P1 alone (as OpenSM's prefix routes)\n`);
      if (r.validation) {
        io.stdout.write(`validation: ${r.valid ? 'ok' : 'failed'}: packets sent with P2 arrive by LID ${r.validation.dlid} at LID ${r.validation.slid} (P1: router LID ${r.p1.dlid}, source LID ${r.p1.slid}); ${r.attempts.length} P1 tried, ${r.saRequests} SA requests\n`);
      } else io.stdout.write(`validation: not done\n`);
      if (fwd) printProbe(io, 'send P1', fwd);
      if (back) printProbe(io, 'send P2', back);
    }
    if (fwd && !fwd.arrived) return 1;
    if (back && !back.arrived) return 1;
    return r.valid || r.remoteSa === 'unreachable' ? 0 : 1;
  } finally {
    await session?.close();
    await net?.stop();
  }
}
