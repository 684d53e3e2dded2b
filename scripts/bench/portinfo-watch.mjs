#!/usr/bin/env node
// failover.mjs's witness of ports moving to a new master: one ibsim client (run under umad2sim:
// LD_PRELOAD, IBSIM_SOCKNAME, SIM_HOST) that, once it reads "go" on stdin, reads the PortInfo of
// every given LID (SubnGet by LID, all at once, then again WATCH_PAUSE_MS after each round) until
// every one names `--want` as its SMLid. Prints "ready" once its port is open, then one JSON line:
// { moved: { lid: epoch ms first seen moved }, rounds, roundMs } (a LID not moved within
// --timeout seconds is absent). One process and no fork per read: a round of 25 reads takes
// milliseconds where smpquery's take a few hundred.
//   node scripts/bench/portinfo-watch.mjs --want LID --lids L1,L2,... [--timeout S]
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { opt } from './args.mjs';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist');
const load = (m) => import(pathToFileURL(path.join(dist, m)).href);
const [{ openBackend }, { MgmtClass, SmpAttr }, { PortInfo }] = await Promise.all([load('api/backend.js'), load('wire/mad.js'), load('wire/sma.js')]);
const WANT = Number(opt('--want', '0'));
const LIDS = opt('--lids', '').split(',').filter(Boolean).map(Number);
const TIMEOUT_MS = Number(opt('--timeout', '60')) * 1000;
const PAUSE_MS = 5;

const b = await openBackend({ umad: true, rpc: { timeoutMs: 100, retries: 2 } });
b.transport.register(MgmtClass.SubnLid, 1);
console.log('ready');
await new Promise((resolve) => createInterface({ input: process.stdin }).on('line', (l) => l.trim() === 'go' && resolve()));
const t0 = Date.now();
const moved = {};
let rounds = 0;
while (Object.keys(moved).length < LIDS.length && Date.now() - t0 < TIMEOUT_MS) {
  rounds++;
  await Promise.all(
    LIDS.filter((l) => moved[l] === undefined).map(async (lid) => {
      try {
        if (PortInfo.decode(await b.rpc.smpGet(lid, SmpAttr.PortInfo, 0)).masterSmLid === WANT) moved[lid] ??= Date.now();
      } catch {
        // unanswered this round (ibsim busy): read again next round
      }
    }),
  );
  await new Promise((r) => setTimeout(r, PAUSE_MS));
}
console.log(JSON.stringify({ moved, rounds, roundMs: rounds ? (Date.now() - t0) / rounds : 0 }));
await b.close();
process.exit(0);
