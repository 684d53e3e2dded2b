// Three subnets joined by IB routers: one SM+SA per subnet, a path to a host of another subnet
// resolved through both SAs, and a probe sent along it through the simulated routers.
import assert from 'node:assert/strict';
import { openSubnets, resolveInterSubnetPath, Logger } from 'ibsm';
import { sendProbe } from 'ibsm/sim';
import { formatGid } from 'ibsm/wire';

const net = await openSubnets({ sim: 'gen:subnets:count=3,shape=ring,routers=2', sweepIntervalS: 0, log: new Logger(undefined, 'warn') });
await net.start();
const c = net.client('s0-host-1 HCA-1');
const dgid = (net.subnets[2]!.part.prefix << 64n) | net.sim.node('s2-host-3 HCA-1').ports[1]!.guid;
const path = await resolveInterSubnetPath(c.rpc, { saLid: c.subnet.sm.snapshot!.smLid, sgid: c.gid, dgid });
assert.ok(path.valid);
console.log(`path to ${formatGid(dgid)}: local slid ${path.p1.slid} dlid ${path.p1.dlid} (the router), remote SA ${path.remoteSa}`);
const probe = await sendProbe(net.sim, c.node, c.port, { slid: path.p1.slid, dlid: path.p1.dlid, sgid: path.p1.sgid, dgid });
assert.ok(probe.arrived, probe.arrived ? '' : probe.reason);
console.log(`probe arrived at "${probe.desc}" after ${probe.hops.length} hops`);
await c.close();
await net.stop();
