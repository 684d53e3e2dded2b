/** One PortInfo Get a management port on a cold fabric (issue #32): a port never seen is read with
 * AttributeModifier bit 31 (SMSupportExtendedSpeeds) from the start, so an NDR/XDR port (whose
 * extended speeds hide without it) is not read twice, as OpenSM's two-stage Get does (PR #39,
 * sm/port-info-get.ts). A port without extended speeds answers in full either way; an old SMA that
 * refuses the bit (an error status) is read again without it and swept as before. */
import { describe, expect, it } from 'vitest';
import { Method, NodeType, PortState, SmpAttr } from '../src/wire/mad.js';
import { FabricBuilder } from '../src/model/generators.js';
import type { Fabric } from '../src/model/fabric.js';
import type { SmpClient } from '../src/sm/smp-client.js';
import { PathRecord, SaAttr } from '../src/wire/sa.js';
import { buildContext, query, requester } from './sa-fixture.js';
import { SaEngine } from '../src/sa/engine.js';
import { coreSaHandlers } from '../src/sa/server.js';
import type { SaContext } from '../src/sa/types.js';

/** Two switches, two hosts on each, every link 4x `speed`. */
function fabric(speed: string): Fabric {
  const b = new FabricBuilder();
  const s0 = b.addSwitch('S0', 8);
  const s1 = b.addSwitch('S1', 8);
  const hosts = [0, 1, 2, 3].map((i) => b.addCa(`H${i} HCA-1`));
  b.link(s0, 1, s1, 1, '4x', speed);
  b.link(hosts[0]!, 1, s0, 2, '4x', speed);
  b.link(hosts[1]!, 1, s0, 3, '4x', speed);
  b.link(hosts[2]!, 1, s1, 2, '4x', speed);
  b.link(hosts[3]!, 1, s1, 3, '4x', speed);
  return b.build();
}

/** The PortInfo Gets an SM sends, as `${path}:${port}` -> the modifiers it used, in order. */
function countingPortInfoGets(gets: Map<string, number[]>): (s: SmpClient) => SmpClient {
  return (s) => ({
    ...s,
    getDr: (p, a, m) => {
      if (a === SmpAttr.PortInfo) {
        const k = `${p.join(',')}:${(m ?? 0) & 0xff}`;
        gets.set(k, [...(gets.get(k) ?? []), (m ?? 0) >>> 0]);
      }
      return s.getDr(p, a, m);
    },
    get sent() {
      return s.sent;
    },
  });
}

const BIT31 = 2 ** 31;

describe('PortInfo on a cold fabric: one Get a port, bit 31 from the start', () => {
  for (const [speed, rate] of [
    ['NDR', 21],
    ['QDR', 7],
  ] as const) {
    it(`4x ${speed}: every port read once, with bit 31; host paths rate ${rate}`, async () => {
      const gets = new Map<string, number[]>();
      const { ctx } = await buildContext(fabric(speed), { wrapSmp: countingPortInfoGets(gets) });
      // 2 switches x (port 0 + 8 ports) + 4 hosts: each once, with the bit (the old code read the
      // NDR switches' port 0 and the hosts twice: first without the bit).
      expect(gets.size).toBe(2 * 9 + 4);
      // With the bit: all of them on NDR; on QDR the management ports (never seen), the switches'
      // external ports not (port 0 says no extended speeds).
      for (const [k, mods] of gets) {
        expect(mods.length, k).toBe(1);
        expect(mods[0]! >= BIT31, k).toBe(speed === 'NDR' || k.endsWith(':0') || !isSwitchPath(ctx, k));
      }
      // the extended speeds were read: PathRecords carry the links' rate
      const f = ctx.snapshot.fabric;
      const hosts = f.nodes.flatMap((n, i) => (n.type === NodeType.Switch ? [] : [i]));
      expect(hosts.length).toBe(4);
      expect(pathRate(ctx, hosts[0]!, hosts[3]!)).toBe(rate);
    });
  }

  it('an SMA that refuses bit 31 (an error status) is read again without it: its port ACTIVE with a LID, the others read once', async () => {
    const gets = new Map<string, number[]>();
    const f = fabric('QDR');
    const old = f.nodes.findIndex((n) => n.desc === 'H3 HCA-1');
    const { ctx, sim } = await buildContext(f, { wrapSmp: countingPortInfoGets(gets), tweak: (s) => (s.nodes[old]!.refusesPortInfoBit31 = true) });
    const twice = [...gets].filter(([, mods]) => mods.length > 1);
    expect(twice.length).toBe(1);
    const [, mods] = twice[0]!;
    expect(mods.map((m) => m >= BIT31)).toEqual([true, false]);
    const port = sim.nodes[old]!.ports[1]!;
    expect(port.info.portState).toBe(PortState.Active);
    expect(port.info.lid).toBeGreaterThan(0);
    const snapNode = ctx.snapshot.fabric.nodes.findIndex((n) => n.desc === 'H3 HCA-1');
    expect(ctx.snapshot.discovery.nodes[snapNode]!.portInfo[1]!.lid).toBe(port.info.lid);
  });
});

/** The rate of the PathRecord from host node `a` to host node `b`. */
function pathRate(ctx: SaContext, a: number, b: number): number {
  const engine = new SaEngine();
  for (const h of coreSaHandlers()) engine.register(h);
  const ports = ctx.snapshot.discovery.nodes;
  const data = PathRecord.encode({ slid: ports[a]!.portInfo[1]!.lid, dlid: ports[b]!.portInfo[1]!.lid });
  const r = engine.answer(query(Method.Get, SaAttr.PathRecord, data, PathRecord.mask('slid', 'dlid'), requester(ctx, a)), ctx);
  if (r.kind !== 'records') throw new Error(`PathRecord: status 0x${r.status.toString(16)}`);
  return PathRecord.decode(r.records[0]!).rate;
}

/** Whether the port key `${path}:${port}` names a port of a switch. */
function isSwitchPath(ctx: SaContext, key: string): boolean {
  const path = key.slice(0, key.lastIndexOf(':'));
  const f = ctx.snapshot.fabric;
  const i = ctx.snapshot.discovery.nodes.findIndex((d) => d.path.join(',') === path);
  return i >= 0 && f.nodes[i]!.type === NodeType.Switch;
}
