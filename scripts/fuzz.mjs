#!/usr/bin/env node
// Fuzz the SM and the SA (issue #11 item 6): generated and mutated MADs into a running Subnet (SM +
// SA, src/subnet.ts) on the in-process fabric, on a virtual clock, seeded.
//
//   node scripts/fuzz.mjs [--count N] [--seed S] [--spec gen:...] [--json]
//
// (build first: npx tsc -p tsconfig.json). Kinds of MAD, injected where the SM's transport hands
// received MADs to MadRpc:
//   smp-response  a response to an SMP the SM has just sent (its TID, so the SM decodes it), with
//                 mutated attribute bytes, status, hop pointer, length
//   trap          SubnLid Trap() with a generated Notice (trap numbers the SM acts on, and others)
//   sminfo        SMInfo Get/Set from another "SM" (SubnLid and SubnDirected), generated fields
//   sa            SA requests: every attribute and method, random component masks, records with
//                 random bytes or valid GIDs/LIDs patched in, mutated headers, short MADs
//   rmpp          RMPP segments: ACK/STOP/ABORT toward the SA's own RMPP senders (their TIDs),
//                 and DATA segments of multi-segment requests from clients, out of order
// Every 500 MADs the clock advances 20-200 ms (timeouts, retries, sweeps run), and now and then a heavy
// sweep is requested. A crash is a throw out of the receive path or an unhandled rejection; at the
// end the SM must still bring the fabric up (a heavy sweep with no fuzz) and the SA answer a
// valid query. Prints a summary; exit code 1 on any crash.
import { fileURLToPath } from 'node:url';
import { VirtualClock } from '../dist/util/clock.js';
import { Rng } from '../dist/util/rng.js';
import { SimFabric } from '../dist/sim/fabric.js';
import { loadFabricSpec } from '../dist/model/load.js';
import { MadRpc } from '../dist/rpc/madrpc.js';
import { MgmtClass, Method, NodeType, SmpAttr } from '../dist/wire/mad.js';
import { SaAttr, SA_CLASS_VERSION, SA_QKEY, NodeRecord } from '../dist/wire/sa.js';
import { saRequest } from '../dist/wire/builders.js';
import { SaClient } from '../dist/sa/client.js';
import { Subnet } from '../dist/subnet.js';
import { smpClientOf } from '../dist/sm/smp-client.js';
import { Logger, MemorySink } from '../dist/util/log.js';

const SA_ATTRS = Object.values(SaAttr);
const SMP_ATTRS = Object.values(SmpAttr);
const SA_METHODS = [Method.Get, Method.Set, Method.GetTable, Method.Delete, Method.GetMulti, Method.GetTraceTable, Method.Report, Method.GetResp, Method.ReportResp, 0x15, 0x7f];
const TRAPS = [64, 65, 66, 67, 128, 129, 130, 131, 144, 145, 256, 257, 258, 259, 0, 0xffff];
const KINDS = ['smp-response', 'trap', 'sminfo', 'sa', 'rmpp'];

/** The SM port's transport, wrapped: what the SM sends is kept (the last few of each kind), and
 * MADs can be injected into the receive path as if they came from the fabric. */
class FuzzTransport {
  constructor(inner) {
    this.inner = inner;
    this.kind = 'fuzz';
    this.handler = undefined;
    this.smps = []; // recent SMP requests the SM sent
    this.rmpp = []; // recent RMPP DATA segments the SA sent
    /** Called with each SMP request the SM sends (the fuzzer answers some before the fabric does). */
    this.onSmp = undefined;
  }
  get local() {
    return this.inner.local;
  }
  get maxMadSize() {
    return this.inner.maxMadSize;
  }
  get copiesOnSend() {
    return this.inner.copiesOnSend;
  }
  register(c, v, o) {
    this.inner.register(c, v, o);
  }
  send(mad, addr) {
    const cls = mad[1];
    if ((cls === MgmtClass.SubnDirected || cls === MgmtClass.SubnLid) && !(mad[3] & 0x80)) {
      const req = { mad: Uint8Array.from(mad), addr };
      keep(this.smps, req);
      this.onSmp?.(req);
    }
    else if (cls === MgmtClass.SubnAdm && mad.length > 36 && mad[24] === 1 && mad[25] === 1 && mad[26] & 1) {
      const seg = { mad: Uint8Array.from(mad), addr };
      keep(this.rmpp, seg);
      this.onRmpp?.(seg);
    }
    this.inner.send(mad, addr);
  }
  onReceive(h) {
    this.handler = h;
    this.inner.onReceive(h);
  }
  inject(data, addr, status = 0) {
    this.handler?.({ data, addr, status });
  }
  close() {
    return this.inner.close();
  }
}
function keep(list, v) {
  list.push(v);
  if (list.length > 64) list.shift();
}

function bytes(rng, n) {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = rng.int(256);
  return b;
}

/** Bit flips, random bytes, a random run, or a cut: in place; returns the (maybe shorter) MAD. */
function mutate(rng, mad, from = 0) {
  const ops = 1 + rng.int(4);
  for (let k = 0; k < ops; k++) {
    const i = from + rng.int(Math.max(1, mad.length - from));
    switch (rng.int(5)) {
      case 0:
        mad[i] ^= 1 << rng.int(8);
        break;
      case 1:
        mad[i] = rng.int(256);
        break;
      case 2:
        for (let j = i; j < Math.min(mad.length, i + 1 + rng.int(16)); j++) mad[j] = rng.int(256);
        break;
      case 3:
        mad[i] = rng.chance(0.5) ? 0xff : 0;
        break;
      default:
        if (rng.chance(0.3)) return mad.subarray(0, 24 + rng.int(mad.length - 23));
    }
  }
  return mad;
}

function u16(b, off, v) {
  b[off] = (v >> 8) & 0xff;
  b[off + 1] = v & 0xff;
}
function u64(b, off, v) {
  for (let i = 7; i >= 0; i--) {
    b[off + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}
function madHeader(b, cls, version, method, attrId, attrMod, tid) {
  b[0] = 1;
  b[1] = cls;
  b[2] = version;
  b[3] = method;
  u64(b, 8, tid);
  u16(b, 16, attrId);
  b[20] = (attrMod >>> 24) & 0xff;
  b[21] = (attrMod >>> 16) & 0xff;
  b[22] = (attrMod >>> 8) & 0xff;
  b[23] = attrMod & 0xff;
}

/**
 * Run the fuzzer. Returns { injected, byKind, crashes, unhandled, errors (first few), sweeps, ok }.
 * `ok`: no crash, no unhandled rejection, and the SM and SA still work afterwards.
 */
export async function runFuzz({ count = 1_000_000, seed = 1, spec = 'gen:fattree2:leaves=4,spines=2,hosts=4', log } = {}) {
  const rng = new Rng(seed);
  const clock = new VirtualClock();
  const sim = new SimFabric(loadFabricSpec(spec), { clock, seed });
  const ep = sim.attach(0);
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
  ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
  const t = new FuzzTransport(ep);
  const rpc = new MadRpc(t, clock, { timeoutMs: 50, window: 64 });
  const sink = new MemorySink();
  const subnet = new Subnet({ rpc, portGuid: ep.local.portGuid, smp: smpClientOf(rpc), clock, log: new Logger(sink, 'error'), routing: ['minhop'], lmc: 0, sweepIntervalMs: 1000, saServer: { schedule: (fn) => queueMicrotask(fn) } });

  const unhandled = [];
  const onUnhandled = (e) => unhandled.push(String(e?.stack ?? e));
  process.on('unhandledRejection', onUnhandled);
  const crashes = [];
  let crashCount = 0;
  const states = {};
  const byKind = Object.fromEntries(KINDS.map((k) => [k, 0]));
  let injected = 0;
  try {
    await clock.runUntil(subnet.start(), 120_000);
    const snap = subnet.sm.current;
    const lids = [];
    const gids = [];
    for (const n of snap.fabric.nodes)
      for (const p of n.ports)
        if (p?.lid) {
          lids.push(p.lid);
          gids.push((0xfe80000000000000n << 64n) | p.guid);
        }
    const smLid = snap.smLid;
    const anyLid = () => (rng.chance(0.85) ? lids[rng.int(lids.length)] : rng.int(0x10000));
    const from = () => ({ lid: anyLid(), qpn: rng.chance(0.8) ? 1 : rng.int(1 << 24), qkey: rng.chance(0.9) ? SA_QKEY : rng.int(2 ** 32), sl: rng.int(16), pkeyIndex: rng.chance(0.9) ? 0 : rng.int(64) });
    let tid = 0x5a00_0000_0000n;

    const gen = {
      'smp-response': (outstanding) => {
        const req = outstanding ?? (t.smps.length ? t.smps[rng.int(t.smps.length)] : undefined);
        const mad = req ? Uint8Array.from(req.mad) : bytes(rng, 256);
        if (!req) madHeader(mad, rng.chance(0.5) ? MgmtClass.SubnDirected : MgmtClass.SubnLid, 1, Method.GetResp, SMP_ATTRS[rng.int(SMP_ATTRS.length)], rng.int(256), BigInt(rng.int(2 ** 32)));
        mad[3] = rng.chance(0.9) ? Method.GetResp : rng.int(256);
        if (mad[1] === MgmtClass.SubnDirected) mad[4] |= 0x80; // D bit: returning
        if (rng.chance(0.2)) u16(mad, 4, rng.chance(0.5) ? rng.int(0x10000) : 0x80 | (rng.int(8) << 2));
        // The attribute data: random, or the request's with mutations.
        if (rng.chance(0.5) && mad.length >= 128) mad.set(bytes(rng, 64), 64 + rng.int(mad.length - 127));
        const out = mutate(rng, mad, 24);
        return [out, req?.addr ?? { lid: anyLid(), qpn: 0 }, rng.chance(0.05) ? 110 : 0];
      },
      trap: () => {
        const mad = new Uint8Array(256);
        madHeader(mad, MgmtClass.SubnLid, 1, rng.chance(0.9) ? Method.Trap : rng.int(256), rng.chance(0.9) ? SmpAttr.Notice : rng.int(0x10000), 0, tid++);
        const d = 64;
        mad[d] = 0x80 | (rng.int(8) << 4) | rng.int(16); // IsGeneric, Type, ProducerType high bits
        mad[d + 1] = rng.int(256);
        mad[d + 2] = rng.int(256);
        mad[d + 3] = rng.int(256);
        u16(mad, d + 4, TRAPS[rng.int(TRAPS.length)]);
        u16(mad, d + 6, anyLid());
        u16(mad, d + 8, rng.int(0x10000));
        mad.set(bytes(rng, 54), d + 10);
        if (rng.chance(0.5)) u16(mad, d + 10 + 4, rng.int(256)); // port numbers, LIDs in the details
        return [rng.chance(0.7) ? mad : mutate(rng, mad), { lid: anyLid(), qpn: 0 }];
      },
      sminfo: () => {
        const mad = new Uint8Array(256);
        const dr = rng.chance(0.5);
        madHeader(mad, dr ? MgmtClass.SubnDirected : MgmtClass.SubnLid, 1, rng.chance(0.5) ? Method.Get : Method.Set, SmpAttr.SMInfo, rng.chance(0.8) ? rng.int(6) : rng.int(2 ** 32), tid++);
        if (dr) {
          u16(mad, 32, 0xffff);
          u16(mad, 34, 0xffff);
          mad[5] = rng.int(4); // hop count
        }
        mad.set(bytes(rng, 24), 64);
        return [rng.chance(0.8) ? mad : mutate(rng, mad), { lid: dr ? 0xffff : anyLid(), qpn: 0 }];
      },
      sa: () => {
        const method = SA_METHODS[rng.int(SA_METHODS.length)];
        const attrId = rng.chance(0.95) ? SA_ATTRS[rng.int(SA_ATTRS.length)] : rng.int(0x10000);
        const mask = rng.chance(0.3) ? 0n : rng.chance(0.5) ? BigInt(rng.int(2 ** 32)) : (BigInt(rng.int(2 ** 32)) << 32n) | BigInt(rng.int(2 ** 32));
        const rec = bytes(rng, 200);
        if (rng.chance(0.5)) rec.fill(0, rng.int(200));
        // Valid GIDs and LIDs where records hold them (MCMemberRecord MGID/PortGID, PathRecord, ...).
        if (rng.chance(0.5)) {
          const g = gids[rng.int(gids.length)];
          const at = [0, 8, 16, 32][rng.int(4)];
          u64(rec, at, g >> 64n);
          u64(rec, at + 8, g & 0xffff_ffff_ffff_ffffn);
        }
        if (rng.chance(0.3)) u16(rec, 0, anyLid());
        const mad = saRequest({ method, attrId, attrMod: rng.chance(0.9) ? 0 : rng.int(2 ** 32), componentMask: mask, smKey: rng.chance(0.05) ? BigInt(rng.int(2 ** 32)) : 0n, record: rec, tid: tid++ });
        if (rng.chance(0.1)) mad[2] = rng.int(4); // class version
        return [rng.chance(0.6) ? mad : mutate(rng, mad), from()];
      },
      rmpp: (outstanding) => {
        const seg = outstanding ?? (t.rmpp.length && rng.chance(0.6) ? t.rmpp[rng.int(t.rmpp.length)] : undefined);
        let mad;
        let addr;
        if (seg) {
          // Toward the SA's own sender: ACK (window moves), STOP or ABORT, or a garbled DATA echo.
          mad = Uint8Array.from(seg.mad);
          mad[3] = rng.chance(0.9) ? seg.mad[3] : rng.int(256); // the transfer's method (GetTableResp)
          mad[24] = 1;
          mad[25] = 1 + rng.int(rng.chance(0.9) ? 3 : 8); // DATA=1 ACK=2 STOP=3 ABORT=4
          mad[26] = (rng.int(32) << 3) | (rng.chance(0.8) ? 1 : rng.int(8));
          mad[27] = rng.chance(0.8) ? 0 : rng.int(256);
          const segNo = rng.chance(0.7) ? 1 + rng.int(8) : rng.int(2 ** 32);
          mad[28] = (segNo >>> 24) & 0xff;
          mad[29] = (segNo >>> 16) & 0xff;
          mad[30] = (segNo >>> 8) & 0xff;
          mad[31] = segNo & 0xff;
          const nwl = rng.chance(0.7) ? segNo + rng.int(64) : rng.int(2 ** 32);
          mad[32] = (nwl >>> 24) & 0xff;
          mad[33] = (nwl >>> 16) & 0xff;
          mad[34] = (nwl >>> 8) & 0xff;
          mad[35] = nwl & 0xff;
          addr = seg.addr;
        } else {
          // A client's multi-segment request (GetMulti), segments in any order.
          mad = saRequest({ method: rng.chance(0.8) ? Method.GetMulti : Method.GetTable, attrId: rng.chance(0.5) ? SaAttr.MultiPathRecord : SA_ATTRS[rng.int(SA_ATTRS.length)], componentMask: BigInt(rng.int(2 ** 32)), record: bytes(rng, 200), tid: BigInt(rng.int(64)) });
          mad[24] = 1;
          mad[25] = rng.chance(0.9) ? 1 : rng.int(256);
          mad[26] = (rng.int(32) << 3) | 1 | (rng.chance(0.5) ? 2 : 0) | (rng.chance(0.5) ? 4 : 0);
          const segNo = rng.chance(0.8) ? 1 + rng.int(4) : rng.int(2 ** 32);
          mad[31] = segNo & 0xff;
          mad[30] = (segNo >>> 8) & 0xff;
          const pl = rng.chance(0.7) ? 220 * (1 + rng.int(4)) : rng.int(2 ** 32);
          mad[32] = (pl >>> 24) & 0xff;
          mad[33] = (pl >>> 16) & 0xff;
          mad[34] = (pl >>> 8) & 0xff;
          mad[35] = pl & 0xff;
          addr = { ...from(), lid: lids[rng.int(Math.min(8, lids.length))], qpn: 1 };
        }
        return [rng.chance(0.8) ? mad : mutate(rng, mad, 24), addr];
      },
    };

    const weights = [['smp-response', 25], ['trap', 10], ['sminfo', 10], ['sa', 40], ['rmpp', 15]];
    const total = weights.reduce((a, [, w]) => a + w, 0);
    const pick = () => {
      let x = rng.int(total);
      for (const [k, w] of weights) if ((x -= w) < 0) return k;
      return 'sa';
    };
    // A share of the SMPs the SM sends get a fuzzed response before the fabric's (same TID: the SM
    // decodes it; the real one then arrives late and is dropped as unmatched).
    // The same for the SA's RMPP DATA segments: ACK, STOP or ABORT while the transfer runs.
    const answerEarly = (kind, what) => {
      if (!fuzzing || injected + early >= count || !rng.chance(0.3)) return;
      early++;
      const [mad, addr, status = 0] = gen[kind](what);
      queueMicrotask(() => {
        try {
          t.inject(mad, addr, status);
        } catch (e) {
          crashCount++;
          if (crashes.length < 10) crashes.push(`${kind}: ${e?.stack ?? e}`);
        }
      });
      byKind[kind]++;
    };
    let fuzzing = true;
    let early = 0;
    t.onSmp = (req) => answerEarly('smp-response', req);
    t.onRmpp = (seg) => answerEarly('rmpp', seg);
    const ROUND = 500;
    for (let done = 0; done + early < count; ) {
      const n = Math.min(ROUND, count - done - early);
      for (let i = 0; i < n; i++) {
        const k = pick();
        const [mad, addr, status = 0] = gen[k](); // a bug here is the fuzzer's: it throws out
        try {
          t.inject(mad, addr, status);
        } catch (e) {
          crashCount++;
          if (crashes.length < 10) crashes.push(`${k}: ${e?.stack ?? e}`);
        }
        byKind[k]++;
      }
      done += n;
      injected = done;
      if (rng.chance(0.05)) subnet.sm.sweep('heavy').catch(() => undefined);
      states[subnet.sm.state] = (states[subnet.sm.state] ?? 0) + 1;
      await clock.advanceAsync(20 + rng.int(180));
      if (log && done % 100_000 === 0) log(`${done} MADs, ${crashCount} crashes, ${unhandled.length} unhandled rejections`);
    }
    fuzzing = false;
    injected += early;
    // Let every timer run out, then check the SM and SA still work with the fuzz stopped.
    await clock.advanceAsync(15_000);
    const sweepsBefore = subnet.sm.sweepsDone.heavy + subnet.sm.sweepsDone.light;
    const stats = await clock.runUntil(subnet.sm.sweep('heavy'), 120_000);
    const c = sim.attach(sim.nodes.findIndex((n, i) => i > 0 && n.type !== NodeType.Switch));
    c.register(MgmtClass.SubnAdm, SA_CLASS_VERSION);
    const crpc = new MadRpc(c, clock, { timeoutMs: 50 });
    const sa = await clock.runUntil(SaClient.locate(crpc), 10_000);
    const nodes = await clock.runUntil(sa.getTable(SaAttr.NodeRecord, NodeRecord, {}, 0n), 10_000);
    const fabricUp = stats.kind === 'heavy' && subnet.sm.sweepsDone.heavy + subnet.sm.sweepsDone.light > sweepsBefore && subnet.sm.current.fabric.nodes.length === sim.nodes.length;
    const saAnswers = nodes.length === sim.nodes.length;
    subnet.stop();
    return { injected, byKind, crashes: crashCount, unhandled: unhandled.length, errors: [...crashes, ...unhandled].slice(0, 5), sweeps: subnet.sm.sweepsDone.heavy + subnet.sm.sweepsDone.light, fabricUp, saAnswers, smStates: states, rpcStats: { ...rpc.stats }, rmppStats: { ...rpc.rmppStats }, saByStatus: { ...subnet.sa?.stats.byStatus }, ok: crashCount === 0 && unhandled.length === 0 && fabricUp && saAnswers };
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
}

function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const count = Number(arg('--count', '1000000'));
  const seed = Number(arg('--seed', '1'));
  const spec = arg('--spec', 'gen:fattree2:leaves=4,spines=2,hosts=4');
  const t0 = Date.now();
  const r = await runFuzz({ count, seed, spec, log: (s) => process.stderr.write(`fuzz: ${s}\n`) });
  const secs = (Date.now() - t0) / 1000;
  if (process.argv.includes('--json')) process.stdout.write(JSON.stringify({ ...r, seconds: secs }) + '\n');
  else {
    console.log(`fuzz: seed ${seed}, ${r.injected} MADs (${Object.entries(r.byKind).map(([k, v]) => `${k} ${v}`).join(', ')}) in ${secs.toFixed(1)} s`);
    console.log(`fuzz: ${r.crashes} crashes, ${r.unhandled} unhandled rejections; afterwards: heavy sweep ${r.fabricUp ? 'ok' : 'FAILED'}, SA ${r.saAnswers ? 'answers' : 'DOES NOT ANSWER'}`);
    const rs = r.rpcStats;
    console.log(`fuzz: the SM's RPC matched ${rs.responses} responses (${rs.unmatched} unmatched, ${rs.malformed} malformed), ${rs.unsolicited} unsolicited; RMPP ${r.rmppStats.acksReceived} ACKs, ${r.rmppStats.aborts} aborts, ${r.rmppStats.segmentsReceived} segments received`);
    console.log(`fuzz: SM state after each round ${JSON.stringify(r.smStates)}, ${r.sweeps} sweeps`);
    console.log(`fuzz: SA answers by status ${JSON.stringify(r.saByStatus)}`);
    for (const e of r.errors) console.log('  ' + e.split('\n').slice(0, 4).join('\n  '));
  }
  process.exit(r.ok ? 0 : 1);
}
