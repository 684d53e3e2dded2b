// The offline router and verifier, and the topology loaders and writers, without any SM.
import assert from 'node:assert/strict';
import { loadFabricSpec, assignLids, routeWithFallback, verifyRoutes, DEFAULT_FALLBACK, formatIbnetdiscover, parseTopologyText, fabricToJson, parseFabricJson } from 'ibsm/routing';

const fabric = loadFabricSpec('gen:fattree3:radix=8');
assignLids(fabric, { lmc: 0 });
const { engine, result, skipped } = routeWithFallback(fabric, DEFAULT_FALLBACK, { lmc: 0 });
const report = verifyRoutes(fabric, result);
console.log(`engine ${engine} (skipped: ${skipped.map((s) => s.engine).join(', ') || 'none'}); ${report.pairs} CA pairs, max hops ${report.hops.max}, deadlock-free ${report.deadlockFree}`);
assert.ok(report.ok);

// Writers and loaders: ibnetdiscover text and JSON load back to the same nodes.
const again = parseTopologyText(formatIbnetdiscover(fabric));
assert.equal(again.nodes.length, fabric.nodes.length);
assert.equal(parseFabricJson(fabricToJson(fabric)).nodes.length, fabric.nodes.length);
console.log(`round trip: ${fabric.nodes.length} nodes through ibnetdiscover text and JSON`);
