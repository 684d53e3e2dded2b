// Test your own code against the simulated fabric: an SM that comes up through MAD loss, then
// a switch-to-switch link taken down and up again, seen as port-state and topology events.
import assert from 'node:assert/strict';
import { openSm, Logger, NodeType, type PortStateChange } from 'ibsm';
import { loadFabricSpec } from 'ibsm/routing';

const fabric = loadFabricSpec('gen:fattree2:leaves=2,spines=2,hosts=2');
const sm = await openSm({ sim: fabric, seed: 7, sweepIntervalS: 0, log: new Logger(undefined, 'warn') });
sm.sim!.setFaults({ dropRate: 0.05 }); // 5% of MADs lost, seeded
await sm.start();
console.log(`up through 5% MAD loss: ${sm.sim!.stats.dropped} MADs dropped, ${sm.backend.rpc.stats.retries} retries`);
sm.sim!.setFaults({});

const states: PortStateChange[] = [];
sm.events.on('portStateChanged', (c) => states.push(c));
const leaf = sm.sim!.nodes.find((n) => n.type === NodeType.Switch && n.ports.some((p) => p?.peer?.node.type === NodeType.CA))!;
const uplink = leaf.ports.findIndex((p) => p?.peer?.node.type === NodeType.Switch);

const down = sm.events.next('topologyChanged');
sm.sim!.linkDown(leaf.idx, uplink);
const change = await down;
assert.equal(change.linksRemoved.length, 1);
console.log(`link down: ${change.linksRemoved.map((l) => `${l.a.nodeDescription}/${l.a.portNum} - ${l.b.nodeDescription}/${l.b.portNum}`).join()}`);

const up = sm.events.next('topologyChanged');
sm.sim!.linkUp(leaf.idx, uplink);
assert.equal((await up).linksAdded.length, 1);
assert.ok(states.some((s) => s.port.portNum === uplink && s.to === 'Down'));
console.log(`link up again; port state changes seen: ${states.map((s) => `${s.port.nodeDescription}/${s.port.portNum} ${s.from}->${s.to}`).join(', ')}`);
await sm.stop();
