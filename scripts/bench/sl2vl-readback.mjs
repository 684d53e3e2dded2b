#!/usr/bin/env node
// Every switch's SL→VL tables by (in port, out port), read from the switches themselves with
// LID-routed SLtoVLMappingTable Gets (SMPs), 32 in flight, from one preloaded process (the
// project's MadRpc over libibumad). routing-quality.mjs runs it under the umad2sim preload
// (LD_PRELOAD, IBSIM_SOCKNAME, SIM_HOST) while the SM still runs, and compares a few switches'
// tables with `smpquery sl2vl` (the real tool, one process per out port: too slow for every one).
//
//   node scripts/bench/sl2vl-readback.mjs DIST IN_FILE OUT_FILE
// IN_FILE: JSON { switches: [{ lid, ports: [linked port numbers] }] }. Every (in, out) pair of
// linked ports with in ≠ out is read (in port 0 is not: the verifier's routes enter a switch
// from a link or from a CA port).
// OUT_FILE gets { tables: [[16 VLs per (in, out) pair in the order read, or null]], failed, ms }.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, inFile, outFile] = process.argv.slice(2);
const imp = (p) => import(pathToFileURL(path.join(dist, p)).href);
const [{ openBackend }, { MgmtClass, SmpAttr }, { sl2vlMod }, { SLtoVLMappingTable }] = await Promise.all([imp('api/backend.js'), imp('wire/mad.js'), imp('wire/modifiers.js'), imp('wire/sma.js')]);
const { switches } = JSON.parse(readFileSync(inFile, 'utf8'));
const b = await openBackend({ umad: true });
// LID-routed SMPs (class 0x01) as a client, like smpquery: openBackend registers only the
// directed-route class for a client.
b.transport.register(MgmtClass.SubnLid, 1);
const t0 = Date.now();
const jobs = [];
const tables = switches.map((s, i) => {
  const pairs = [];
  for (const inP of s.ports) for (const outP of s.ports) if (inP !== outP) pairs.push([inP, outP]);
  pairs.forEach(([inP, outP], k) => jobs.push([i, k, s.lid, inP, outP]));
  return { pairs, vls: new Array(pairs.length).fill(null) };
});
let failed = 0;
let firstError = '';
let next = 0;
const worker = async () => {
  for (let j = next++; j < jobs.length; j = next++) {
    const [i, k, lid, inP, outP] = jobs[j];
    try {
      const data = await b.rpc.smpGet(lid, SmpAttr.SLtoVLMappingTable, sl2vlMod(inP, outP));
      tables[i].vls[k] = SLtoVLMappingTable.decode(data).vls;
    } catch (e) {
      failed++;
      firstError ||= `LID ${lid} in ${inP} out ${outP}: ${e?.message ?? e}`;
    }
  }
};
await Promise.all(Array.from({ length: 32 }, worker));
await b.close();
writeFileSync(outFile, JSON.stringify({ tables, failed, firstError, ms: Date.now() - t0 }));
