// The SA client: every record table, a multicast group created, joined and left, a service
// registered and deleted, and an InformInfo subscription whose Reports arrive as events.
import assert from 'node:assert/strict';
import { openSm, openSaClient, Logger, NodeType } from 'ibsm';
import { formatGid, JoinState, SaAttr, LinkRecord } from 'ibsm/wire';

const sm = await openSm({ sim: 'gen:fattree2:leaves=2,spines=2,hosts=3', sweepIntervalS: 0, log: new Logger(undefined, 'warn') });
await sm.start();
const sa = await openSaClient({ sm }); // attaches at another CA of the simulated fabric

// Any record table through one call (here LinkRecord), or the helpers for the usual ones.
const links = await sa.getTable(SaAttr.LinkRecord, LinkRecord);
const nodes = await sa.nodes();
console.log(`${nodes.length} NodeRecords, ${links.length} LinkRecords`);
assert.equal(nodes.length, sm.snapshot!.fabric.nodes.length);

// Multicast: MGID 0 lets the SA pick one; the SM's events say when groups come and go.
sm.events.on('multicastGroupCreated', (g) => console.log(`group created ${formatGid(g.mgid)} mlid 0x${g.mlid.toString(16)}`));
sm.events.on('multicastGroupDeleted', (g) => console.log(`group deleted mlid 0x${g.mlid.toString(16)}`));
const group = await sa.join(0n, { create: { qKey: 0x12345678, pKey: 0xffff } });
assert.equal(group.joinState, JoinState.FullMember);
await sa.leave(group.mgid);

// Services.
await sa.registerService({ serviceId: 0x10000ce42n, serviceName: 'example' });
assert.ok((await sa.services()).some((s) => s.serviceName === 'example'));
await sa.deleteService(0x10000ce42n);

// InformInfo: subscribe to trap 65 (GID out of service); pulling a host's cable makes the SA report it.
await sa.subscribe(65);
const report = sa.events.next('report');
const host = sm.sim!.nodes.filter((n) => n.type === NodeType.CA).at(-1)!;
sm.sim!.linkDown(host.idx, host.ports.findIndex((p) => p?.peer));
const notice = await report;
console.log(`report: trap ${notice.trapNumber} from producer type ${notice.producerType}`);
assert.equal(notice.trapNumber, 65);

await sa.close();
await sm.stop();
