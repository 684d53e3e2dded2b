/** qos-policy.conf (OpenSM's syntax, doc/QoS_management_in_OpenSM.txt): parsing, matching, and the
 * PathRecords it shapes (SL by service ID, P_Key, port group; MTU/rate/lifetime limits; QoS class).
 * Witnessed against OpenSM on ibsim in ibsim-qos.test.ts. */
import { beforeAll, describe, expect, it } from 'vitest';
import { parseQosPolicy, QosPolicyError, qosVlSettings, sl2vlForPort, type QosPort } from '../src/model/qos-policy.js';
import { parsePartitions } from '../src/model/partitions.js';
import { Method, NodeType } from '../src/wire/mad.js';
import { PathRecord, SaAttr } from '../src/wire/sa.js';
import { SaEngine } from '../src/sa/engine.js';
import { coreSaHandlers } from '../src/sa/server.js';
import type { SaContext } from '../src/sa/types.js';
import { buildContext, mixedFabric, query, requester } from './sa-fixture.js';

const POLICY = `
# OpenSM's example shapes
port-groups
    port-group
        name: Storage
        use: our SRP storage targets
        port-guid: 0x10000000000001, 0x10000000000005-0x10000000000007
    end-port-group
    port-group
        name: Switches
        node-type: SWITCH
    end-port-group
end-port-groups

qos-levels
    qos-level
        name: DEFAULT
        use: default QoS Level
        sl: 0
    end-qos-level
    qos-level
        name: Storage
        sl: 3
        mtu-limit: 3
        rate-limit: 3
        packet-life: 14
    end-qos-level
    qos-level
        name: Mgmt
        sl: 5
    end-qos-level
end-qos-levels

qos-match-rules
    qos-match-rule
        use: storage traffic by service ID
        service-id: 0x1000000000000001-0x1000000000000003
        qos-level-name: Storage
    end-qos-match-rule
    qos-match-rule
        destination: Switches
        qos-level-name: Mgmt
    end-qos-match-rule
end-qos-match-rules

qos-ulps
    default                       : 0
    any, pkey 0x0002              : 6
    any, service-id 0x4000        : 7
    sdp, port-num 30000           : 2
    rds                           : 4
    ipoib, pkey 0x8003            : 1
    srp, target-port-guid 0x10000000000009 : 8
end-qos-ulps
`;

const ca = (guid: bigint): QosPort => ({ guid, kind: 'ca', self: false });

describe('qos-policy.conf', () => {
  const p = parseQosPolicy(POLICY);

  it('full rules first, then the simple qos-ulps rules, in file order; DEFAULT when nothing matches', () => {
    expect(p.levelFor({ serviceId: 0x1000000000000002n, src: ca(1n), dst: ca(2n) })!.name).toBe('Storage');
    expect(p.levelFor({ src: ca(1n), dst: { guid: 9n, kind: 'switch', self: false } })!.sl).toBe(5);
    expect(p.levelFor({ pkey: 0x8002, src: ca(1n), dst: ca(2n) })!.sl).toBe(6); // P_Key matched by base
    expect(p.levelFor({ serviceId: 0x4000n, src: ca(1n), dst: ca(2n) })!.sl).toBe(7);
    expect(p.levelFor({ serviceId: 0x10000n + 30000n, src: ca(1n), dst: ca(2n) })!.sl).toBe(2); // SDP's port space
    expect(p.levelFor({ serviceId: 0x1060000n + 0x48can, src: ca(1n), dst: ca(2n) })!.sl).toBe(4); // RDS
    expect(p.levelFor({ pkey: 0x0003, src: ca(1n), dst: ca(2n) })!.sl).toBe(1);
    expect(p.levelFor({ src: ca(1n), dst: ca(0x10000000000009n) })!.sl).toBe(8); // SRP target
    expect(p.levelFor({ src: ca(1n), dst: ca(2n) })!.name).toBe('DEFAULT');
    // A criterion the request does not carry does not match (service-id rules need a ServiceID).
    expect(p.matchRule({ src: ca(1n), dst: ca(2n) })).toBeUndefined();
  });

  it('port groups by GUID range, node type and partition name', () => {
    expect(p.inGroup('storage', ca(0x10000000000006n))).toBe(true);
    expect(p.inGroup('Storage', ca(0x10000000000004n))).toBe(false);
    const withParts = parseQosPolicy('port-groups\nport-group\nname: P\npartition: Blue\nend-port-group\nend-port-groups\n').withPartitions(parsePartitions('Blue=0x0005 : 0x42=full ;'));
    expect(withParts.inGroup('P', ca(0x42n))).toBe(true);
    expect(withParts.inGroup('P', ca(0x43n))).toBe(false);
  });

  it('the simple default alone is the default level', () => {
    expect(parseQosPolicy('qos-ulps\n default : 9\nend-qos-ulps\n').defaultLevel!.sl).toBe(9);
  });

  it('errors name the line and what is expected', () => {
    expect(() => parseQosPolicy('qos-levels\nqos-level\nname: X\nsl: 16\nend-qos-level\nend-qos-levels')).toThrow(/qos-policy.conf:4: sl must be a number 0..15/); // the sl line, not the block's first
    expect(() => parseQosPolicy('qos-match-rules\nqos-match-rule\nqos-level-name: Nope\nend-qos-match-rule\nend-qos-match-rules')).toThrow(/qos-level "Nope" is not defined/);
    expect(() => parseQosPolicy('qos-ulps\n  bogus : 1\nend-qos-ulps')).toThrow(/:2: unknown ULP "bogus"/);
    expect(() => parseQosPolicy('qos-levels\n')).toThrow(QosPolicyError);
    expect(() => parseQosPolicy('stray')).toThrow(/outside a section/);
    expect(parseQosPolicy('qos-setup\n anything\nend-qos-setup\n').warnings[0]).toMatch(/qos-setup is ignored/);
  });
});

describe('QoS VL settings (OpenSM qos_* options)', () => {
  it("OpenSM's defaults; SL2VL masked to the port's operational VLs", () => {
    const q = qosVlSettings();
    expect(q.sl2vl).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 7]);
    expect(q.vlarbLow.slice(0, 3)).toEqual([{ vl: 0, weight: 0 }, { vl: 1, weight: 4 }, { vl: 2, weight: 4 }]);
    expect(sl2vlForPort(q, 3)).toEqual([0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]); // VL0-3
    expect(sl2vlForPort(q, 1)).toEqual(Array(16).fill(0));
    expect(sl2vlForPort(qosVlSettings({ sl2vl: '0,1,15,3,4,5,6,7,8,9,10,11,12,13,14,7' }), 2)[2]).toBe(15);
    expect(() => qosVlSettings({ sl2vl: '1,2' })).toThrow(/16 VLs/);
    expect(() => qosVlSettings({ vlarbHigh: '0:300' })).toThrow(/weight 0..255/);
  });
});

describe('PathRecords under a QoS policy', () => {
  let ctx: SaContext;
  let engine: SaEngine;
  let lids: number[];
  let h0: ReturnType<typeof requester>;
  beforeAll(async () => {
    ctx = (await buildContext(mixedFabric())).ctx;
    engine = new SaEngine({ qos: true });
    for (const h of coreSaHandlers()) engine.register(h);
    const caIdx = ctx.snapshot.fabric.nodes.findIndex((n) => n.type !== NodeType.Switch);
    h0 = requester(ctx, caIdx);
    lids = ctx.snapshot.fabric.nodes.filter((n) => n.type !== NodeType.Switch).map((n) => n.ports.find((x) => x?.peer)!.lid!);
  });
  const path = (c: SaContext, rec: Partial<PathRecord>, fields: string[]): PathRecord | undefined => {
    const a = engine.answer(query(Method.GetTable, SaAttr.PathRecord, PathRecord.encode({ slid: lids[0]!, dlid: lids[1]!, ...rec }), PathRecord.mask('slid', 'dlid', ...fields), h0), c);
    return a.kind === 'records' && a.records[0] ? PathRecord.decode(a.records[0]) : undefined;
  };

  it('SL per service ID and P_Key; the level limits MTU, rate and packet lifetime; QoS class comes back', () => {
    const c = { ...ctx, qos: parseQosPolicy(POLICY) };
    const plain = path(ctx, {}, [])!;
    expect(plain.sl).toBe(0);
    expect(path(c, { serviceId: 0x4000n }, ['serviceId'])!.sl).toBe(7);
    expect(path(c, { pKey: 0xffff }, ['pKey'])!.sl).toBe(0);
    const st = path(c, { serviceId: 0x1000000000000001n }, ['serviceId'])!;
    expect(st.sl).toBe(3);
    expect(st.mtu).toBe(Math.min(3, plain.mtu));
    expect(st.rate).toBe(3);
    expect(st.packetLifeTime).toBe(14);
    // A requested SL the level does not give: no path.
    expect(path(c, { serviceId: 0x4000n, sl: 2 }, ['serviceId', 'sl'])).toBeUndefined();
    expect(path(c, { serviceId: 0x4000n, sl: 7 }, ['serviceId', 'sl'])!.sl).toBe(7);
    // QoS class: carried back, and matched by a rule's qos-class.
    expect(path(ctx, { qosClass: 5 }, ['qosClass'])!.qosClass).toBe(5);
    const byClass = { ...ctx, qos: parseQosPolicy('qos-levels\nqos-level\nname: Gold\nsl: 9\nend-qos-level\nend-qos-levels\nqos-match-rules\nqos-match-rule\nqos-class: 4-6\nqos-level-name: Gold\nend-qos-match-rule\nend-qos-match-rules\n') };
    expect(path(byClass, { qosClass: 5 }, ['qosClass'])!.sl).toBe(9);
    expect(path(byClass, { qosClass: 7 }, ['qosClass'])!.sl).toBe(0);
  });

  it("a level's pkey list restricts the paths to those P_Keys", () => {
    const c = { ...ctx, qos: parseQosPolicy('qos-levels\nqos-level\nname: DEFAULT\npkey: 0x1234\nend-qos-level\nend-qos-levels\n') };
    expect(path(c, {}, [])).toBeUndefined(); // the ports share only 0x7fff
    expect(path({ ...ctx, qos: parseQosPolicy('qos-levels\nqos-level\nname: DEFAULT\npkey: 0x7fff\nend-qos-level\nend-qos-levels\n') }, {}, [])!.pKey).toBe(0xffff);
  });

  it("a layered routing engine's SL wins over the policy's", () => {
    const c = { ...ctx, qos: parseQosPolicy(POLICY), snapshot: { ...ctx.snapshot, routing: { ...ctx.snapshot.routing, sl: () => 11 } } };
    expect(path(c, { serviceId: 0x4000n }, ['serviceId'])!.sl).toBe(11);
  });
});
