#!/usr/bin/env node
// The SL of every (source LID, destination LID) path, read from the running SM's SA (ibsm's or
// OpenSM's) with one PathRecord Get per pair, 32 in flight. routing-quality.mjs runs it under the
// umad2sim preload (LD_PRELOAD, IBSIM_SOCKNAME, SIM_HOST). A Get's answer is one MAD, within the
// 224 bytes umad2sim carries intact; the diags' GetTables cannot serve under ibsim (they never ACK
// RMPP and read only the first segment: docs/ibsim-notes.md).
//
//   node scripts/bench/sl-readback.mjs DIST LIDS_FILE OUT_FILE
// LIDS_FILE: JSON { sources: [CA LIDs], dests: [every LID: CAs and switches] } (every source to
// every destination), or { pairs: [[source LID, destination LID], ...] }. OUT_FILE gets
// { sources, dests, sl: [[...]] per source, failed, ms }, or { pairs, sl: [...] per pair, failed,
// ms } (255: no answer, or the source itself).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, lidsFile, outFile] = process.argv.slice(2);
const { openSaClient } = await import(pathToFileURL(path.join(dist, 'index.js')).href);
const { PathRecord, SaAttr } = await import(pathToFileURL(path.join(dist, 'entry/wire.js')).href);
const input = JSON.parse(readFileSync(lidsFile, 'utf8'));
const pairs = input.pairs;
const sources = pairs ? pairs.map((p) => p[0]) : input.sources;
const dests = pairs ? [0] : input.dests;
const sa = await openSaClient({ umad: true });
const MASK = PathRecord.mask('slid', 'dlid');
const t0 = Date.now();
const sl = sources.map(() => new Array(dests.length).fill(255));
const destOf = pairs ? (i) => pairs[i][1] : (i, j) => dests[j];
let failed = 0;
let next = 0;
const total = sources.length * dests.length;
const worker = async () => {
  for (let k = next++; k < total; k = next++) {
    const i = Math.floor(k / dests.length);
    const j = k % dests.length;
    const dlid = destOf(i, j);
    if (sources[i] === dlid) continue;
    try {
      sl[i][j] = (await sa.get(SaAttr.PathRecord, PathRecord, { slid: sources[i], dlid }, MASK)).sl;
    } catch {
      failed++;
    }
  }
};
await Promise.all(Array.from({ length: 32 }, worker));
await sa.close();
const ms = Date.now() - t0;
writeFileSync(outFile, JSON.stringify(pairs ? { pairs, sl: sl.map((r) => r[0]), failed, ms } : { sources, dests, sl, failed, ms }));
