// Start an SM+SA on a generated fabric, wait for SUBNET UP, ask the SA for a PathRecord, then pull
// a cable in the simulated fabric and receive the topology change that names the port.
import assert from 'node:assert/strict';
import { openSm, openSaClient, gidOf, NodeType, type TopologyChange } from 'ibsm';

const sm = await openSm({ sim: 'gen:fattree2:leaves=2,spines=2,hosts=2', sweepIntervalS: 0 });
const up = sm.events.next('subnetUp');
await sm.start();
const { stats } = await up;
console.log(`subnet up: ${stats.nodes} nodes, ${stats.endPorts} end ports, ${stats.smps} SMPs`);

// A PathRecord from a client port to the last host, through ibsm's SA.
const sa = await openSaClient({ sm });
const snap = sm.snapshot!;
const host = snap.fabric.nodes.filter((n) => n.type === NodeType.CA).at(-1)!;
const portNum = host.ports.findIndex((p) => p?.peer);
const port = host.ports[portNum]!;
const [path] = await sa.pathRecords({ sgid: sa.portGid(), dgid: gidOf(port.guid) });
assert.equal(path!.dlid, port.lid);
console.log(`PathRecord to ${host.desc}: slid ${path!.slid} dlid ${path!.dlid} mtu code ${path!.mtu}`);

// Pull the host's cable: the SM gets a trap, sweeps, and reports what went.
const changed = sm.events.next('topologyChanged');
sm.sim!.linkDown(host.guid, portNum);
const change: TopologyChange = await changed;
const gone = change.portsRemoved.find((p) => p.portGuid === port.guid);
assert.ok(gone, 'the topology change names the port');
console.log(`topology changed: port ${gone.portNum} of "${gone.nodeDescription}" (0x${gone.portGuid.toString(16)}) removed`);

await sa.close();
await sm.stop();
