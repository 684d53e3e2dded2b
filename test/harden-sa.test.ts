/** Issue #29 item 5: a join or leave naming another host's PortGID (a proxy join) is accepted
 * only from a trusted requester (the SA_Key, --sa-key, in the SA header's SM_Key field; here apart
 * from the SM_Key, which is no SA_Key: such a request is dropped unanswered), unless `saProxyJoins`
 * (`--sa-proxy-joins`) asks for OpenSM's way (any port of the partition). The real SM + SA on the
 * in-process fabric, SA clients on the hosts. */
import { describe, expect, it } from 'vitest';
import { JoinState, MCMemberRecord, SaAttr, SaStatus } from '../src/wire/sa.js';
import { MC_CREATE_MASK, MC_JOIN_MASK } from '../src/sa/multicast.js';
import { SaClient, SaStatusError } from '../src/sa/client.js';
import { bringUp, client, type Client, type Rig } from './helpers/subnet-rig.js';
import { drive } from './helpers/drive.js';

const SM_KEY = 0x5eb0a7dn;
const SA_KEY = 0x5ab0a7dn;
const SPEC = 'gen:fattree2:leaves=2,spines=1,hosts=3';

async function statusOf(r: Rig, p: Promise<unknown>): Promise<number> {
  try {
    await drive(r.clock, p);
    return 0;
  } catch (e) {
    if (e instanceof SaStatusError) return e.status;
    throw e;
  }
}

/** A group created by `owner` (its own join), and the MGID. */
async function groupOf(r: Rig, owner: Client): Promise<bigint> {
  const g = await drive(r.clock, owner.sa.set(SaAttr.MCMemberRecord, MCMemberRecord, { mgid: 0n, portGid: owner.gid, qKey: 1, pKey: 0xffff, joinState: JoinState.FullMember, tClass: 0, flowLabel: 0, sl: 0 }, MC_CREATE_MASK));
  return g.mgid;
}

const join = (sa: SaClient, mgid: bigint, portGid: bigint) => sa.set(SaAttr.MCMemberRecord, MCMemberRecord, { mgid, portGid, joinState: JoinState.FullMember }, MC_JOIN_MASK);
const leave = (sa: SaClient, mgid: bigint, portGid: bigint) => sa.delete(SaAttr.MCMemberRecord, MCMemberRecord, { mgid, portGid, joinState: JoinState.FullMember }, MC_JOIN_MASK);

describe('joins and leaves for another port', () => {
  it('by default: refused ERR_REQ_DENIED from an untrusted host; accepted from a trusted requester (SA_Key, not the SM_Key); a host still joins and leaves for itself', async () => {
    const r = await bringUp(SPEC, { subnet: { smKey: SM_KEY, saKey: SA_KEY } });
    const [a, b, c] = [await client(r, r.cas[1]!), await client(r, r.cas[2]!), await client(r, r.cas[3]!)];
    const mgid = await groupOf(r, a);
    // b joins c to the group: refused, c is not a member
    expect(await statusOf(r, join(b.sa, mgid, c.gid))).toBe(SaStatus.ReqDenied);
    expect(r.subnet.multicast.list().find((g) => g.mgid === mgid)!.members.has(c.guid)).toBe(false);
    // the SM_Key is not the SA_Key: not answered at all (the client times out), counted
    const withSmKey = new SaClient(b.rpc, { saLid: b.sa.saLid, smKey: SM_KEY });
    await expect(drive(r.clock, join(withSmKey, mgid, c.gid))).rejects.toThrow(/timed out|timeout|no answer|no response/i);
    expect(r.subnet.multicast.list().find((g) => g.mgid === mgid)!.members.has(c.guid)).toBe(false);
    expect(r.subnet.sa!.stats.wrongKey).toBeGreaterThanOrEqual(1);
    // a trusted requester (on b's port, with the SA_Key) may
    const trusted = new SaClient(b.rpc, { saLid: b.sa.saLid, smKey: SA_KEY });
    expect(await statusOf(r, join(trusted, mgid, c.gid))).toBe(0);
    expect(r.subnet.multicast.list().find((g) => g.mgid === mgid)!.members.get(c.guid)?.proxyJoin).toBe(true);
    // b may not take c out of it (a proxy membership): refused; the trusted requester may
    expect(await statusOf(r, leave(b.sa, mgid, c.gid))).not.toBe(0);
    expect(r.subnet.multicast.list().find((g) => g.mgid === mgid)!.members.has(c.guid)).toBe(true);
    expect(await statusOf(r, leave(trusted, mgid, c.gid))).toBe(0);
    // a host for itself: as ever
    expect(await statusOf(r, join(b.sa, mgid, b.gid))).toBe(0);
    expect(await statusOf(r, leave(b.sa, mgid, b.gid))).toBe(0);
    r.subnet.stop();
  });

  it('saProxyJoins (--sa-proxy-joins): any port of the partition, as OpenSM', async () => {
    const r = await bringUp(SPEC, { subnet: { smKey: SM_KEY, saProxyJoins: true } });
    const [a, b, c] = [await client(r, r.cas[1]!), await client(r, r.cas[2]!), await client(r, r.cas[3]!)];
    const mgid = await groupOf(r, a);
    expect(await statusOf(r, join(b.sa, mgid, c.gid))).toBe(0);
    expect(r.subnet.multicast.list().find((g) => g.mgid === mgid)!.members.get(c.guid)?.proxyJoin).toBe(true);
    expect(await statusOf(r, leave(b.sa, mgid, c.gid))).toBe(0);
    expect(r.subnet.multicast.list().find((g) => g.mgid === mgid)!.members.has(c.guid)).toBe(false);
    r.subnet.stop();
  });
});
