/** NDR and XDR fabrics (issue #30): the simulated Quantum-2 / Quantum-X800 generation hides its
 * extended speeds from a PortInfo Get or Set without AttributeModifier bit 31 (OpenSM issue #38);
 * the SM sets the bit as OpenSM does, and PathRecords carry the links' real rates. */
import { describe, expect, it } from 'vitest';
import { Method, MgmtClass, NodeType, SmpAttr } from '../src/wire/mad.js';
import { JoinState, MCMemberRecord, MultiPathRecord, PathRecord, PortInfoRecord, SaAttr, SaStatus } from '../src/wire/sa.js';
import { MC_CREATE_MASK, MC_JOIN_MASK, MulticastManager } from '../src/sa/multicast.js';
import { SaEngine } from '../src/sa/engine.js';
import { coreSaHandlers } from '../src/sa/server.js';
import { snapshotPorts } from '../src/model/snapshot.js';
import { FabricBuilder, generateFabric, hardwareModelsMarkdown } from '../src/model/generators.js';
import { parseTopologyText } from '../src/model/load.js';
import { fabricToJson } from '../src/model/json.js';
import { main } from '../src/cli/main.js';
import { parsePartitions, partitionGroups } from '../src/model/partitions.js';
import { readOpensmConf } from '../src/config/opensm-conf.js';
import { OPTIONS } from '../src/config/options.js';
import { openSm } from '../src/api/sm.js';
import { Logger, MemorySink } from '../src/util/log.js';
import type { Fabric } from '../src/model/fabric.js';
import { knownPortRate, portRate, speedCodes, speedName, widthName } from '../src/model/rates.js';
import type { SaAnswer, SaContext } from '../src/sa/types.js';
import type { SmpClient } from '../src/sm/smp-client.js';
import { SimFabric } from '../src/sim/fabric.js';
import { buildContext, query, requester } from './sa-fixture.js';
import { VirtualClock } from '../src/util/clock.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { SubnetManager } from '../src/sm/sm.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { installSmHandlers } from '../src/sm/handlers.js';

/** Two switches, two hosts on each, every link `width` `speed`. */
function uniform(width: string, speed: string): Fabric {
  const b = new FabricBuilder();
  const s0 = b.addSwitch('S0', 8);
  const s1 = b.addSwitch('S1', 8);
  const hosts = [0, 1, 2, 3].map((i) => b.addCa(`H${i} HCA-1`));
  b.link(s0, 1, s1, 1, width, speed);
  b.link(hosts[0]!, 1, s0, 2, width, speed);
  b.link(hosts[1]!, 1, s0, 3, width, speed);
  b.link(hosts[2]!, 1, s1, 2, width, speed);
  b.link(hosts[3]!, 1, s1, 3, width, speed);
  return b.build();
}

/** An SM as ibsm was before issue #30: no PortInfo Get or Set carries bit 31. */
const withoutBit31 = (s: SmpClient): SmpClient => ({
  getDr: (p, a, m) => s.getDr(p, a, a === SmpAttr.PortInfo ? (m ?? 0) & 0xff : m),
  setDr: (p, a, m, d) => s.setDr(p, a, a === SmpAttr.PortInfo ? m & 0xff : m, d),
  getLid: (l, a, m) => s.getLid(l, a, a === SmpAttr.PortInfo ? (m ?? 0) & 0xff : m),
  setLid: (l, a, m, d) => s.setLid(l, a, a === SmpAttr.PortInfo ? m & 0xff : m, d),
  get sent() {
    return s.sent;
  },
});

/** Every PathRecord between two hosts: [rate, mtu] of each. */
function hostPaths(ctx: SaContext): { rate: number; mtu: number }[] {
  const engine = new SaEngine();
  for (const h of coreSaHandlers()) engine.register(h);
  const f = ctx.snapshot.fabric;
  const cas = snapshotPorts(ctx.snapshot).endPorts.filter((e) => f.nodes[e.node]!.type !== NodeType.Switch);
  const out: { rate: number; mtu: number }[] = [];
  for (const a of cas) {
    for (const b of cas) {
      if (a === b) continue;
      const data = PathRecord.encode({ slid: a.lid, dlid: b.lid });
      const r = engine.answer(query(Method.Get, SaAttr.PathRecord, data, PathRecord.mask('slid', 'dlid'), requester(ctx, a.node)), ctx);
      if (r.kind !== 'records') throw new Error(`PathRecord ${a.lid} -> ${b.lid}: status 0x${r.status.toString(16)}`);
      const pr = PathRecord.decode(r.records[0]!);
      out.push({ rate: pr.rate, mtu: pr.mtu });
    }
  }
  return out;
}

describe('issue #38 on the simulated fabric: bit 31 (SMSupportExtendedSpeeds)', () => {
  for (const [speed, rate, name] of [
    ['NDR', 21, '400 Gb/s'],
    ['XDR', 23, '800 Gb/s'],
  ] as const) {
    it(`4x ${speed}: without bit 31 the ports say "Extended speed" and no extended speed (rate 3, 4x SDR); with it every host PathRecord says rate ${rate} (${name}) and MTU 4096`, async () => {
      const old = await buildContext(uniform('4x', speed), { wrapSmp: withoutBit31 });
      const wrong = hostPaths(old.ctx);
      expect(wrong.length).toBe(12);
      for (const p of wrong) expect(p.rate).toBe(3);
      const now = await buildContext(uniform('4x', speed));
      const right = hostPaths(now.ctx);
      expect(right.length).toBe(12);
      for (const p of right) expect(p).toEqual({ rate, mtu: 5 });
    });
  }
});

describe('rates of every width and speed (IBA 1.7 rate codes, as NVIDIA OpenSM and rdma-core)', () => {
  // [width code, name], lanes: 1x 1, 2x 2, 4x 4, 8x 8, 12x 12
  const widths = [
    [1, 1],
    [16, 2],
    [2, 4],
    [4, 8],
    [8, 12],
  ] as const;
  it('NDR: 1x 16 (100G), 2x 17 (200G), 4x 21 (400G), 8x 23 (800G), 12x 24 (1200G)', () => {
    expect(widths.map(([w]) => portRate({ linkWidthActive: w, linkSpeedActive: 4, linkSpeedExtActive: 8 }))).toEqual([16, 17, 21, 23, 24]);
  });
  it('XDR (byte 56): 1x 17, 2x 21, 4x 23, 8x 25 (1600G), 12x 26 (2400G); XDR wins over the extended speed field', () => {
    expect(widths.map(([w]) => portRate({ linkWidthActive: w, linkSpeedActive: 4, linkSpeedExtActive: 8, linkSpeedExtActive2: 1 }))).toEqual([17, 21, 23, 25, 26]);
    expect(widths.map(([w]) => knownPortRate({ linkWidthActive: w, linkSpeedActive: 0, linkSpeedExtActive: 0, linkSpeedExtActive2: 1 }))).toEqual([17, 21, 23, 25, 26]);
  });
  it('HDR 12x is 22 (600G), EDR 4x 16, FDR 4x 12, QDR 4x 7', () => {
    expect(portRate({ linkWidthActive: 8, linkSpeedActive: 4, linkSpeedExtActive: 4 })).toBe(22);
    expect(portRate({ linkWidthActive: 2, linkSpeedActive: 4, linkSpeedExtActive: 2 })).toBe(16);
    expect(portRate({ linkWidthActive: 2, linkSpeedActive: 4, linkSpeedExtActive: 1 })).toBe(12);
    expect(portRate({ linkWidthActive: 2, linkSpeedActive: 4, linkSpeedExtActive: 0 })).toBe(7);
  });
  it('names as ibnetdiscover prints them', () => {
    expect(`${widthName(16)}${speedName(4, 8, 1)}`).toBe('2xXDR');
    expect(`${widthName(2)}${speedName(4, 8)}`).toBe('4xNDR');
    expect(speedCodes('xdr')).toEqual({ speed: 0, ext: 0, ext2: 1 });
  });
});

/**
 *  S0 (NDR switch) ─4x─ S1 (XDR switch): the link trains NDR (400G, 21)
 *  H0: 2x XDR host on a 4x XDR port of S1 → 2xXDR (400G, 21)
 *  H1: 4x XDR host on S1 → 4xXDR (800G, 23)
 *  H2: 1x NDR host on S0 → 1xNDR (100G, 16)
 *  H3: 4x HDR host on a 4x NDR port of S0 → 4xHDR (200G, 17)
 */
function mixed(): Fabric {
  const b = new FabricBuilder();
  const s0 = b.addSwitch('S0', 8);
  const s1 = b.addSwitch('S1', 8);
  const h = [0, 1, 2, 3].map((i) => b.addCa(`H${i} HCA-1`));
  b.link(s0, 1, s1, 1, '4x', 'NDR', { speed: 'XDR' });
  b.link(h[0]!, 1, s1, 2, '2x', 'XDR', { width: '4x' });
  b.link(h[1]!, 1, s1, 3, '4x', 'XDR');
  b.link(h[2]!, 1, s0, 2, '1x', 'NDR');
  b.link(h[3]!, 1, s0, 3, '4x', 'HDR', { speed: 'NDR' });
  return b.build();
}

describe('mixed fabrics: the slowest link of the path', () => {
  it('a 2x XDR host link, a 1x link, an HDR host on NDR, an NDR switch to an XDR one: links train to the best common width and speed, PathRecords carry the slowest', async () => {
    const { ctx } = await buildContext(mixed());
    const f = ctx.snapshot.fabric;
    const at = (desc: string): string => {
      const n = f.nodes.find((x) => x.desc === desc)!;
      return `${n.ports[1]!.width}${n.ports[1]!.speed}`;
    };
    expect(['H0 HCA-1', 'H1 HCA-1', 'H2 HCA-1', 'H3 HCA-1'].map(at)).toEqual(['2xXDR', '4xXDR', '1xNDR', '4xHDR']);
    expect(at('S0')).toBe('4xNDR');
    const engine = new SaEngine();
    for (const x of coreSaHandlers()) engine.register(x);
    const lid = (desc: string): number => f.nodes.find((x) => x.desc === desc)!.ports[1]!.lid!;
    const node = (desc: string): number => f.nodes.findIndex((x) => x.desc === desc);
    const rate = (a: string, b: string): number => {
      const r = engine.answer(query(Method.Get, SaAttr.PathRecord, PathRecord.encode({ slid: lid(a), dlid: lid(b) }), PathRecord.mask('slid', 'dlid'), requester(ctx, node(a))), ctx);
      if (r.kind !== 'records') throw new Error(`status 0x${r.status.toString(16)}`);
      return PathRecord.decode(r.records[0]!).rate;
    };
    expect(rate('H1 HCA-1', 'H0 HCA-1')).toBe(21); // 4x XDR then 2x XDR
    expect(rate('H1 HCA-1', 'H3 HCA-1')).toBe(17); // ... NDR between the switches, 4x HDR last
    expect(rate('H1 HCA-1', 'H2 HCA-1')).toBe(16); // the 1x NDR link
    expect(rate('H0 HCA-1', 'H3 HCA-1')).toBe(17);
    expect(rate('H3 HCA-1', 'H2 HCA-1')).toBe(16);
    // MultiPathRecord: the same rates (H1 to H0 and to H2)
    const gid = (desc: string): bigint => (0xfe80000000000000n << 64n) | f.nodes[node(desc)]!.ports[1]!.guid;
    const data = MultiPathRecord.encode({ sgidCount: 1, dgidCount: 2, numbPath: 4, gids: [gid('H1 HCA-1'), gid('H0 HCA-1'), gid('H2 HCA-1')] });
    const r = engine.answer(query(Method.GetMulti, SaAttr.MultiPathRecord, data, MultiPathRecord.mask('sgidCount', 'dgidCount', 'numbPath', 'gids'), requester(ctx, node('H1 HCA-1'))), ctx);
    if (r.kind !== 'records') throw new Error(`status 0x${r.status.toString(16)}`);
    const byDlid = new Map(r.records.map((x) => PathRecord.decode(x)).map((p) => [p.dlid, p.rate]));
    expect(byDlid).toEqual(new Map([[lid('H0 HCA-1'), 21], [lid('H2 HCA-1'), 16]]));
  });

  it('HDR leaves under NDR spines (gen keys speed=NDR,leafspeed=HDR): every host path is 4x HDR (17); the spine links train HDR too', async () => {
    const { ctx } = await buildContext(generateFabric('fattree2:leaves=2,spines=2,hosts=2,speed=NDR,leafspeed=HDR'));
    for (const p of hostPaths(ctx)) expect(p.rate).toBe(17);
    const speeds = new Set(ctx.snapshot.fabric.nodes.flatMap((n) => n.ports.filter((p) => p?.peer).map((p) => `${p!.width}${p!.speed}`)));
    expect([...speeds]).toEqual(['4xHDR']);
  });

  it('an XDR fabric with 2x hosts (speed=XDR,hostwidth=2x): host paths 2x XDR (21)', async () => {
    const { ctx } = await buildContext(generateFabric('fattree2:leaves=2,spines=2,hosts=2,speed=XDR,hostwidth=2x'));
    for (const p of hostPaths(ctx)) expect(p.rate).toBe(21);
  });

  it('every width on the simulated fabric, PathRecords read from the ports the SM swept: NDR 1x/8x/12x 16/23/24, XDR 1x/8x/12x 17/25/26', async () => {
    const got: string[] = [];
    for (const speed of ['NDR', 'XDR']) {
      for (const width of ['1x', '8x', '12x']) {
        const { ctx } = await buildContext(uniform(width, speed));
        got.push(`${width}${speed} ${[...new Set(hostPaths(ctx).map((p) => p.rate))].join(',')}`);
      }
    }
    expect(got).toEqual(['1xNDR 16', '8xNDR 23', '12xNDR 24', '1xXDR 17', '8xXDR 25', '12xXDR 26']);
  });

  it('rejects an unknown speed name with the valid ones', () => {
    expect(() => generateFabric('fattree2:leaves=2,spines=2,hosts=2,speed=ZDR')).toThrow(/speed=ZDR.*SDR, DDR, QDR, FDR, EDR, HDR, NDR, XDR/s);
  });
});

describe('named hardware models (gen key model=, leafmodel=, hostmodel=)', () => {
  const ids = (f: Fabric): string[] => [...new Set(f.nodes.map((n) => `${n.type === NodeType.Switch ? 'switch' : 'ca'} 0x${n.vendorId.toString(16)}:0x${n.deviceId.toString(16)}`))].sort();
  const links = (f: Fabric): string[] => [...new Set(f.nodes.flatMap((n) => n.ports.filter((p, pn) => pn > 0 && p?.peer).map((p) => `${p!.width}${p!.speed}`)))].sort();

  it('model=ndr (Quantum-2 / ConnectX-7): 4x NDR links, the NodeInfo IDs the SM reads, and issue #38 (rate 3 without bit 31, 21 with it)', async () => {
    const f = generateFabric('fattree2:leaves=2,spines=2,hosts=2,model=ndr');
    const old = await buildContext(f, { wrapSmp: withoutBit31 });
    for (const p of hostPaths(old.ctx)) expect(p.rate).toBe(3);
    const { ctx } = await buildContext(generateFabric('fattree2:leaves=2,spines=2,hosts=2,model=Quantum-2'));
    expect(links(ctx.snapshot.fabric)).toEqual(['4xNDR']);
    // read from the simulated NodeInfo by the SM's discovery
    expect(ids(ctx.snapshot.fabric)).toEqual(['ca 0x2c9:0x1021', 'switch 0x2c9:0xd2f2']);
    for (const p of hostPaths(ctx)) expect(p).toEqual({ rate: 21, mtu: 5 });
  });

  it('model=xdr (Quantum-X800 / ConnectX-8) with 2x hosts: byte 56 and CapabilityMask2 bits 4, 11, 12 on the hosts\' ports as the SM read them; paths 2x XDR (21)', async () => {
    const { ctx } = await buildContext(generateFabric('fattree2:leaves=2,spines=1,hosts=2,model=xdr,hostwidth=2x'));
    const f = ctx.snapshot.fabric;
    expect(ids(f)).toEqual(['ca 0x2c9:0x1023', 'switch 0x2c9:0xd2f4']);
    expect(links(f)).toEqual(['2xXDR', '4xXDR']);
    const h = f.nodes.findIndex((n) => n.type !== NodeType.Switch);
    const pi = ctx.snapshot.discovery.nodes[h]!.portInfo[1]!;
    expect(pi.capabilityMask2 & ((1 << 4) | (1 << 11) | (1 << 12))).toBe((1 << 4) | (1 << 11) | (1 << 12));
    expect([pi.linkSpeedExtActive2, pi.linkSpeedExtSupported2, pi.linkWidthActive]).toEqual([1, 1, 16]);
    for (const p of hostPaths(ctx)) expect(p.rate).toBe(21);
  });

  it('a mixed fabric: NDR spines, HDR leaves (Quantum), ConnectX-7 hosts: links train HDR, each tier reports its own IDs, paths 4x HDR (17)', async () => {
    const f = generateFabric('fattree2:leaves=2,spines=2,hosts=2,model=quantum-2,leafmodel=hdr,hostmodel=connectx-7');
    const byDesc = (re: RegExp): string[] => ids({ nodes: f.nodes.filter((n) => re.test(n.desc)) });
    expect(byDesc(/^sw-l2/)).toEqual(['switch 0x2c9:0xd2f2']);
    expect(byDesc(/^sw-l1/)).toEqual(['switch 0x2c9:0xd2f0']);
    expect(byDesc(/^host/)).toEqual(['ca 0x2c9:0x1021']);
    const { ctx } = await buildContext(f);
    expect(links(ctx.snapshot.fabric)).toEqual(['4xHDR']);
    for (const p of hostPaths(ctx)) expect(p.rate).toBe(17);
  });

  it('model= is a bundle over speed=/width=: the explicit key wins; hosts follow the leaves\' generation', () => {
    const f = generateFabric('fattree2:leaves=2,spines=1,hosts=1,model=hdr,hostspeed=EDR');
    const host = f.nodes.find((n) => n.type !== NodeType.Switch)!;
    expect([host.ports[1]!.speed, host.deviceId]).toEqual(['EDR', 0x101b]);
    const g = generateFabric('fattree2:leaves=2,spines=1,hosts=1,model=ndr,width=2x');
    expect(links(g)).toEqual(['2xNDR']);
  });

  it('rejects an unknown model with the valid names, and a switch named for the hosts (or an HCA for the switches)', () => {
    expect(() => generateFabric('fattree2:leaves=2,spines=1,hosts=1,model=quantum-9')).toThrow(/model=quantum-9: expected one of QDR, InfiniScale-IV, ConnectX-2, .*NDR, Quantum-2, ConnectX-7, XDR, Quantum-X800, ConnectX-8/);
    expect(() => generateFabric('fattree2:leaves=2,spines=1,hosts=1,hostmodel=Quantum-2')).toThrow(/Quantum-2 is a switch/);
    expect(() => generateFabric('fattree2:leaves=2,spines=1,hosts=1,model=ConnectX-7')).toThrow(/ConnectX-7 is an HCA \(hostmodel= names the hosts'\)/);
  });
});

describe('README and man page: speeds, widths and models', () => {
  it("the README's model table is the generators' (npm run docs); the man page lists the models, speeds and widths in roff, no stray control characters", async () => {
    const { readFileSync } = await import('node:fs');
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(`<!-- hardware-models -->\n${hardwareModelsMarkdown()}\n<!-- /hardware-models -->`);
    expect(readme).toMatch(/SDR, DDR, QDR \(LinkSpeedActive\); FDR, EDR, HDR, NDR \(LinkSpeedExtActive\); XDR \(LinkSpeedExtActive2, PortInfo byte 56\) \| 1x, 2x, 4x, 8x, 12x/);
    const man = readFileSync(new URL('../docs/ibsm.8', import.meta.url), 'utf8');
    // eslint-disable-next-line no-control-regex
    expect(man.match(/[\x00-\x08\x0b-\x1f]/g) ?? []).toEqual([]);
    expect(man).toContain('\\fBmodel=\\fR');
    expect(man).toContain('ndr (Quantum\\-2 / ConnectX\\-7), xdr (Quantum\\-X800 / ConnectX\\-8)');
    expect(man).toMatch(/widths 1x, 2x, 4x, 8x, 12x/);
    expect(man).toContain('With \\fB\\-\\-umad\\fR and no');
  });
});

describe('ibsm discover prints NDR/XDR as ibnetdiscover does, and its output loads back', () => {
  it('4xNDR, 2xXDR, 1xNDR, 4xHDR in the port lines; parsed back, the same widths and speeds', async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'ibsm-ndr-'));
    const json = join(dir, 'mixed.json');
    writeFileSync(json, fabricToJson(mixed()));
    let out = '';
    const code = await main(['discover', '--sim', json], { stdout: { write: (s: string) => (out += s) }, stderr: { write: () => undefined } });
    expect(code).toBe(0);
    expect(out).toMatch(/lid \d+ 2xXDR/);
    expect(out).toMatch(/lid \d+ 1xNDR/);
    expect(out).toMatch(/lid \d+ 4xNDR/);
    expect(out).toMatch(/lid \d+ 4xHDR/);
    const back = parseTopologyText(out);
    const links = (f: Fabric): string[] =>
      f.nodes
        .flatMap((n) => n.ports.filter((p, pn) => pn > 0 && p?.peer).map((p) => `${n.desc}/${p!.num}:${p!.width}${p!.speed}`))
        .sort();
    const { ctx } = await buildContext(mixed());
    expect(links(back)).toEqual(links(ctx.snapshot.fabric));
  });
});

describe('force_link_* as OpenSM applies them: the links come back up at the forced width and speed', () => {
  const active = (sim: SimFabric, f: Fabric): string[] => {
    const out = new Set<string>();
    for (const n of f.nodes) {
      n.ports.forEach((p, pn) => {
        if (!p?.peer || pn === 0) return;
        const pi = sim.portInfo(n.guid, pn);
        out.add(`${pi.portState}:${widthName(pi.linkWidthActive)}${speedName(pi.linkSpeedActive, pi.linkSpeedExtActive, pi.linkSpeedExtActive2)}`);
      });
    }
    return [...out].sort();
  };

  it('force_link_speed_ext 4 (HDR) on a 4x NDR fabric: every link ACTIVE at 4x HDR, PathRecords rate 17', async () => {
    const f = uniform('4x', 'NDR');
    const b = await buildContext(f, { sm: { forceLinkSpeedExt: 4 } });
    expect(active(b.sim, f)).toEqual(['4:4xHDR']);
    for (const p of hostPaths(b.ctx)) expect(p.rate).toBe(17);
  });

  it('on a 4x XDR fabric: force_link_speed_ext2 1 keeps XDR; force_link_speed_ext 4 alone does not take it away (byte 56 wins over the extended speeds)', async () => {
    const f = uniform('4x', 'XDR');
    expect(active((await buildContext(f, { sm: { forceLinkSpeedExt2: 1 } })).sim, f)).toEqual(['4:4xXDR']);
    const b = await buildContext(f, { sm: { forceLinkSpeedExt: 4 } });
    expect(active(b.sim, f)).toEqual(['4:4xXDR']);
    // what was written is there: LinkSpeedExtEnabled 4 (HDR) on every linked port
    for (const n of f.nodes) n.ports.forEach((p, pn) => p?.peer && pn > 0 && expect(b.sim.portInfo(n.guid, pn).linkSpeedExtEnabled).toBe(4));
  });

  it('force_link_width 1 (1x) and force_link_speed 1 (SDR) on a 4x QDR fabric: 1x SDR links, rate 2', async () => {
    const f = uniform('4x', 'QDR');
    const b = await buildContext(f, { sm: { forceLinkWidth: 1, forceLinkSpeed: 1 } });
    expect(active(b.sim, f)).toEqual(['4:1xSDR']);
    for (const p of hostPaths(b.ctx)) expect(p.rate).toBe(2);
  });

  it('OpenSM\'s defaults (15, 31, 255) on ports that already have everything enabled: no Set changes a link', async () => {
    const f = uniform('4x', 'NDR');
    const b = await buildContext(f, { sm: { forceLinkSpeed: 15, forceLinkSpeedExt: 31, forceLinkWidth: 255 } });
    expect(active(b.sim, f)).toEqual(['4:4xNDR']);
  });
});

describe('force_link_* from an opensm.conf', () => {
  const conf = ['# as an operator writes it for a fabric of NDR switches run at HDR', 'force_link_speed 15', 'force_link_speed_ext 4   # HDR', 'force_link_width 255', ''].join('\n');

  it('`ibsm config` maps them to --force-link-* and shows the values', async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const f = join(mkdtempSync(join(tmpdir(), 'ibsm-ndr-')), 'opensm.conf');
    writeFileSync(f, conf);
    let out = '';
    let err = '';
    const code = await main(['config', '--config', f], { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } });
    expect(code, err).toBe(0);
    expect(out).toMatch(/force-link-speed-ext\b[^\n]*4/);
    expect(out).toMatch(/force-link-speed\b[^\n]*15/);
    expect(out).toMatch(/force-link-width\b[^\n]*255/);
    expect(out).toContain(`${f}:3 force_link_speed_ext 4: --force-link-speed-ext`);
  });

  it("force_link_speed_ext2 (NVIDIA's OpenSM, byte 56): read from an opensm.conf as --force-link-speed-ext2, shown by `ibsm config`, listed in docs/configuration.md's key table", async () => {
    const { writeFileSync, mkdtempSync, readFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const text = ['force_link_speed_ext 31', 'force_link_speed_ext2 1', ''].join('\n');
    const read = readOpensmConf(text, 'opensm.conf');
    expect(read.values.get('force-link-speed-ext2')).toBe(1);
    const f = join(mkdtempSync(join(tmpdir(), 'ibsm-ndr-')), 'opensm.conf');
    writeFileSync(f, text);
    let out = '';
    let err = '';
    const code = await main(['config', '--config', f], { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } });
    expect(code, err).toBe(0);
    expect(out).toContain(`${f}:2 force_link_speed_ext2 1: --force-link-speed-ext2`);
    expect(out).toMatch(/"forceLinkSpeedExt2": 1/);
    const doc = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    expect(doc).toMatch(/\| `force_link_speed_ext2` \|[^\n]*--force-link-speed-ext2/);
  });

  it('take effect on the simulated fabric: an NDR fabric comes up at HDR (speeds read back from the ports)', async () => {
    const read = readOpensmConf(conf, 'opensm.conf');
    expect(read.notes).toEqual([]);
    const opts: Record<string, unknown> = {};
    for (const [name, v] of read.values) opts[OPTIONS.find((o) => o.name === name)!.key!] = v;
    expect(opts).toMatchObject({ forceLinkSpeed: 15, forceLinkSpeedExt: 4, forceLinkWidth: 255 });
    const sm = await openSm({ sim: 'gen:fattree2:leaves=2,spines=2,hosts=2,speed=NDR', seed: 1, sweepIntervalS: 0, log: new Logger(new MemorySink(), 'info'), ...opts });
    try {
      const up = sm.events.next('subnetUp');
      await sm.start();
      const { snapshot } = await up;
      const seen = new Set<string>();
      snapshot.fabric.nodes.forEach((n, i) =>
        n.ports.forEach((p, pn) => {
          if (!p?.peer || pn === 0) return;
          const pi = snapshot.discovery.nodes[i]!.portInfo[pn]!;
          seen.add(`${widthName(pi.linkWidthActive)}${speedName(pi.linkSpeedActive, pi.linkSpeedExtActive, pi.linkSpeedExtActive2)} ext-enabled ${pi.linkSpeedExtEnabled}`);
        }),
      );
      expect([...seen]).toEqual(['4xHDR ext-enabled 4']);
    } finally {
      await sm.stop();
    }
  });
});

describe('SA PortInfoRecord on extended speeds, as OpenSM answers it (Options bit 7)', () => {
  it('a port running NDR also says QDR in LinkSpeedSupported/Enabled/Active unless the request sets Options bit 7; the match is on the port as it is', async () => {
    const { ctx } = await buildContext(uniform('4x', 'NDR'));
    const engine = new SaEngine();
    for (const x of coreSaHandlers()) engine.register(x);
    const h = ctx.snapshot.fabric.nodes.findIndex((n) => n.desc === 'H0 HCA-1');
    const lid = ctx.snapshot.fabric.nodes[h]!.ports[1]!.lid!;
    const ask = (options?: number): PortInfoRecord[] => {
      const data = PortInfoRecord.encode({ endportLid: lid, options: options ?? 0 });
      const mask = options === undefined ? PortInfoRecord.mask('endportLid') : PortInfoRecord.mask('endportLid', 'options');
      const r = engine.answer(query(Method.GetTable, SaAttr.PortInfoRecord, data, mask, requester(ctx, h)), ctx);
      if (r.kind !== 'records') throw new Error(`status 0x${r.status.toString(16)}`);
      return r.records.map((b) => PortInfoRecord.decode(b));
    };
    const raw = ctx.snapshot.discovery.nodes[h]!.portInfo[1]!;
    // the port as the SM read it: "Extended speed" (0) in LinkSpeedActive, NDR in LinkSpeedExtActive
    expect([raw.linkSpeedActive, raw.linkSpeedExtActive]).toEqual([0, 8]);
    const [old] = ask();
    expect(old!.portInfo.linkSpeedActive).toBe(4);
    expect(old!.portInfo.linkSpeedSupported & 4).toBe(4);
    expect(old!.portInfo.linkSpeedEnabled & 4).toBe(4);
    expect(old!.options).toBe(0);
    const [knows] = ask(0x80);
    expect(knows!.options).toBe(0x80);
    expect(knows!.portInfo.linkSpeedActive).toBe(raw.linkSpeedActive);
    expect(knows!.portInfo.linkSpeedExtActive).toBe(8);
  });
});

describe('which PortInfo SMPs carry bit 31', () => {
  it('Sets: exactly those to ports whose CapabilityMask (a switch external port: port 0\'s) has IsExtendedSpeedsSupported; Gets: every management port (never seen: one read with the bit) and every external port of such a switch', async () => {
    const mods: { set: boolean; path: string; mod: number }[] = [];
    const spy = (s: SmpClient): SmpClient => ({
      getDr: (p, a, m) => {
        if (a === SmpAttr.PortInfo) mods.push({ set: false, path: p.join(','), mod: m ?? 0 });
        return s.getDr(p, a, m);
      },
      setDr: (p, a, m, d) => {
        if (a === SmpAttr.PortInfo) mods.push({ set: true, path: p.join(','), mod: m });
        return s.setDr(p, a, m, d);
      },
      getLid: (l, a, m) => s.getLid(l, a, m),
      setLid: (l, a, m, d) => s.setLid(l, a, m, d),
      get sent() {
        return s.sent;
      },
    });
    // NDR hosts on QDR switches: only the hosts' ports have extended speeds
    const b = new FabricBuilder();
    const s0 = b.addSwitch('S0', 4);
    const h0 = b.addCa('H0 HCA-1');
    const h1 = b.addCa('H1 HCA-1');
    b.link(h0, 1, s0, 1, '4x', 'NDR', { speed: 'QDR' });
    b.link(h1, 1, s0, 2, '4x', 'NDR', { speed: 'QDR' });
    await buildContext(b.build(), { wrapSmp: spy });
    const bit31 = (m: number): boolean => m >>> 31 === 1;
    const sets = mods.filter((m) => m.set);
    // the SM's own CA (path "") and the other host (path "1,2"): every Set with bit 31; the switch's ports: none
    expect(sets.filter((m) => m.path === '' || m.path === '1,2').every((m) => bit31(m.mod))).toBe(true);
    expect(sets.filter((m) => m.path === '1').some((m) => bit31(m.mod))).toBe(false);
    expect(sets.length).toBeGreaterThan(0);
    // each CA port read once, with the bit from the start (never seen before: port-info-get.ts)
    const caGets = mods.filter((m) => !m.set && m.path === '1,2');
    expect(caGets.map((m) => bit31(m.mod))).toEqual([true]);
    // the switch's external ports read without it (port 0 says no extended speeds), port 0 with it
    const qdrSw = mods.filter((m) => !m.set && m.path === '1');
    expect(qdrSw.filter((m) => (m.mod & 0xff) !== 0).some((m) => bit31(m.mod))).toBe(false);
    expect(qdrSw.filter((m) => (m.mod & 0xff) === 0).map((m) => bit31(m.mod))).toEqual([true]);
    // NDR switches: every port read (once) and set with the bit
    mods.length = 0;
    await buildContext(uniform('4x', 'NDR'), { wrapSmp: spy });
    const sw = mods.filter((m) => m.path === '1');
    expect(sw.every((m) => bit31(m.mod))).toBe(true);
    expect(sw.filter((m) => !m.set && (m.mod & 0xff) === 0).length).toBe(1);
  });
});

describe('bit 14 remembered between heavy sweeps', () => {
  it('a heavy sweep of an NDR fabric reads every PortInfo once, with bit 31 from the start (no re-read), the first as the second, and a light sweep too', async () => {
    let gets: { path: string; mod: number }[] = [];
    const spy = (s: SmpClient): SmpClient => ({
      getDr: (p, a, m) => {
        if (a === SmpAttr.PortInfo) gets.push({ path: p.join(','), mod: m ?? 0 });
        return s.getDr(p, a, m);
      },
      setDr: (p, a, m, d) => s.setDr(p, a, m, d),
      getLid: (l, a, m) => s.getLid(l, a, m),
      setLid: (l, a, m, d) => s.setLid(l, a, m, d),
      get sent() {
        return s.sent;
      },
    });
    const b = await buildContext(uniform('4x', 'NDR'), { wrapSmp: spy });
    const reads = (): Map<string, number[]> => {
      const m = new Map<string, number[]>();
      for (const g of gets) {
        const k = `${g.path}/${g.mod & 0xff}`;
        m.set(k, [...(m.get(k) ?? []), g.mod >>> 31]);
      }
      return m;
    };
    const first = reads();
    // the SM's own CA port (path "", port 1) and switch S0's port 0, never seen: read once, with the bit
    expect(first.get('/1')).toEqual([1]);
    expect(first.get('1/0')).toEqual([1]);
    // a light sweep reads the CA ports' state: with the bit, as the snapshot says they have extended speeds
    gets = [];
    await b.clock.runUntil(b.sm.sweep('light'), 100_000);
    expect(gets.length).toBeGreaterThan(0);
    for (const g of gets) expect([g.path, g.mod >>> 31]).toEqual([g.path, 1]);
    gets = [];
    await b.clock.runUntil(b.sm.sweep('heavy'), 100_000);
    const second = reads();
    expect(second.size).toBe(first.size);
    for (const [k, bits] of second) expect([k, bits]).toEqual([k, [1]]);
  });
});

describe('bit 14 remembered by the local sweep', () => {
  it('an NDR host whose cable goes out and back in: the local sweep that takes it in reads its PortInfo with bit 31 from the start (never without)', async () => {
    const clock = new VirtualClock();
    const spec = 'gen:fattree2:leaves=2,spines=2,hosts=2,speed=NDR';
    const topo = loadFabricSpec(spec);
    const sim = new SimFabric(topo, { clock, seed: 7 });
    const ep = sim.attach(topo.nodes.findIndex((n) => n.type !== NodeType.Switch));
    ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
    ep.register(MgmtClass.SubnDirected, 1);
    const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 3, window: 64, perDestinationWindow: 8 });
    let gets: { path: string; mod: number }[] = [];
    const base = smpClientOf(rpc);
    const smp: SmpClient = {
      ...base,
      getDr: (p, a, m) => {
        if (a === SmpAttr.PortInfo) gets.push({ path: p.join(','), mod: m ?? 0 });
        return base.getDr(p, a, m);
      },
      get sent() {
        return base.sent;
      },
    };
    const log = new Logger(new MemorySink(), 'error');
    const sm = new SubnetManager({ smp, clock, log, routing: ['ftree', 'minhop'], lmc: 0, sweepIntervalMs: 1000, localSweeps: true });
    installSmHandlers(rpc, sm, { portGuid: ep.local.portGuid, log });
    await clock.runUntil(sm.start(), 600_000);
    const f0 = sm.current!.fabric;
    const host = f0.nodes.findIndex((n, i) => n.type !== NodeType.Switch && i !== sm.current!.discovery.smNode);
    const guid = f0.nodes[host]!.guid;
    const after = async (act: () => void): Promise<void> => {
      const n = sm.stats.length;
      act();
      await clock.runUntil(() => sm.stats.length > n, 10_000);
    };
    await after(() => sim.linkDown(guid, 1));
    expect(sm.current!.fabric.nodes.some((n) => n.guid === guid)).toBe(false);
    gets = [];
    await after(() => sim.linkUp(guid, 1));
    const back = sm.current!.fabric.nodes.findIndex((n) => n.guid === guid);
    expect(back).toBeGreaterThanOrEqual(0);
    expect(sm.stats.at(-1)!.reroute).toBe('incremental');
    const path = sm.current!.discovery.nodes[back]!.portPaths[1]!.join(',');
    // (read when the node is taken in, and again once linked: both with the bit)
    const reads = gets.filter((g) => g.path === path).map((g) => [g.mod & 0xff, g.mod >>> 31]);
    expect(reads.length).toBeGreaterThan(0);
    for (const r of reads) expect(r).toEqual([1, 1]);
    // and the port was read in full: 4x NDR
    expect(sm.current!.fabric.nodes[back]!.ports[1]).toMatchObject({ width: '4x', speed: 'NDR' });
    sm.stop();
  });
});

describe("partitions.conf rate= and mtu=: OpenSM's codes, up to XDR's, and the names no code can mean", () => {
  const group = (flags: string): { rate: number; mtu: number; warnings: string[] } => {
    const r = partitionGroups(parsePartitions(`Default=0x7fff, ipoib, ${flags} : ALL=full;`));
    return { rate: r.groups[0]!.rate, mtu: r.groups[0]!.mtu, warnings: r.warnings };
  };
  it('codes as OpenSM reads them (strtoul): rate=21 is 400 Gb/s, rate=25 1600 Gb/s, rate=10 120 Gb/s (a code, not Gb/s)', () => {
    expect(group('rate=21')).toMatchObject({ rate: 21, warnings: [] });
    expect(group('rate=25')).toMatchObject({ rate: 25, warnings: [] });
    expect(group('rate=10')).toMatchObject({ rate: 10, warnings: [] });
    expect(group('mtu=5')).toMatchObject({ mtu: 5, warnings: [] });
  });
  it('mtu=4096 and rate=400 (what no code means) read as bytes and Gb/s, with a warning', () => {
    const g = group('mtu=4096, rate=400');
    expect(g).toMatchObject({ mtu: 5, rate: 21 });
    expect(g.warnings.join('\n')).toMatch(/mtu=4096' read as 4096 bytes \(MTU code 5\); OpenSM takes only the code/);
    expect(g.warnings.join('\n')).toMatch(/rate=400' read as 400 Gb\/s \(rate code 21\)/);
    expect(group('rate=1600')).toMatchObject({ rate: 25 });
    expect(group('rate=33').warnings.join('\n')).toMatch(/needs a rate code 2\.\.26 \(or Gb\/s above 26: 28, 30, 40/);
  });
});

describe('MCMemberRecord rates on XDR/NDR ports', () => {
  it('a group created from a 4x XDR host is 800 Gb/s (23); a 1x NDR host (100 Gb/s) cannot join it; one created from the 1x NDR host is 16 and the XDR host joins', async () => {
    const { ctx } = await buildContext(mixed());
    const f = ctx.snapshot.fabric;
    const node = (desc: string): number => f.nodes.findIndex((x) => x.desc === desc);
    const gid = (desc: string): bigint => (0xfe80000000000000n << 64n) | f.nodes[node(desc)]!.ports[1]!.guid;
    const mm = new MulticastManager();
    const ask = (method: number, rec: Partial<MCMemberRecord>, mask: bigint, desc: string): SaAnswer => {
      const data = new Uint8Array(200);
      MCMemberRecord.encode(rec, data, 0);
      return mm.handle({ method, attrId: SaAttr.MCMemberRecord, attrMod: 0, componentMask: mask, data, requester: requester(ctx, node(desc)) }, ctx);
    };
    const create = (desc: string): MCMemberRecord => {
      const a = ask(Method.Set, { portGid: gid(desc), joinState: JoinState.FullMember, qKey: 0x11, pKey: 0xffff }, MC_CREATE_MASK, desc);
      if (a.kind !== 'records') throw new Error(`create: status 0x${a.status.toString(16)}`);
      return MCMemberRecord.decode(a.records[0]!);
    };
    const fast = create('H1 HCA-1');
    expect(fast.rate).toBe(23);
    const join = ask(Method.Set, { mgid: fast.mgid, portGid: gid('H2 HCA-1'), joinState: JoinState.FullMember }, MC_JOIN_MASK, 'H2 HCA-1');
    expect(join.kind === 'status' ? join.status : 0).toBe(SaStatus.ReqInvalid);
    const slow = create('H2 HCA-1');
    expect(slow.rate).toBe(16);
    const j2 = ask(Method.Set, { mgid: slow.mgid, portGid: gid('H1 HCA-1'), joinState: JoinState.FullMember }, MC_JOIN_MASK, 'H1 HCA-1');
    expect(j2.kind).toBe('records');
  });
});
