import { describe, expect, test } from 'vitest';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkFabric, links } from '../src/model/fabric.js';
import { NodeType } from '../src/wire/mad.js';
import { parseNetText, readNetFile, TopologyError } from '../src/model/netfile.js';
import { formatIbnetdiscover, parseIbnetdiscover, parseIbnetdiscoverFull, cleanNodeDesc, ctime } from '../src/model/ibnetdiscover.js';
import { canonicalFabric, diffFabrics, fabricToJson, parseFabricJson } from '../src/model/json.js';
import { loadFabricSpec, parseTopologyText } from '../src/model/load.js';

const FIX = path.join(import.meta.dirname, 'fixtures/topo');
const topoFiles = readdirSync(FIX).filter((f) => !/\.(ibnetdiscover|sh|md)$/.test(f));
const capturedOf = (f: string): string => path.join(FIX, f.replace(/\.net$/, '') + '.ibnetdiscover');
const stampOf = (text: string): string => /^# Topology file: generated on (.*)$/m.exec(text)![1]!;

function expectTopologyError(text: string, line: number, pattern: RegExp, fileName = 'bad.net'): TopologyError {
  let caught: unknown;
  try {
    parseNetText(text, { fileName });
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(TopologyError);
  const te = caught as TopologyError;
  expect({ file: te.file, line: te.line }).toEqual({ file: fileName, line });
  expect(te.detail).toMatch(pattern);
  return te;
}

describe('ibsim .net files against what ibnetdiscover printed under ibsim', () => {
  test('fixtures cover every ibsim example', () => {
    const examples = readdirSync(FIX).filter((f) => /^net(\.|$)/.test(f) && !f.endsWith('.ibnetdiscover'));
    expect(examples.sort()).toEqual(['net', 'net.1', 'net.2sw2path', 'net.2sw2path4hca', 'net.2sw2path4hca2port']);
  });

  for (const file of topoFiles) {
    test(`${file}: same graph as ibnetdiscover saw`, () => {
      const ours = readNetFile(path.join(FIX, file)).fabric;
      expect(checkFabric(ours)).toEqual([]);
      const seen = parseIbnetdiscover(readFileSync(capturedOf(file), 'utf8'));
      expect(diffFabrics(ours, seen)).toEqual([]);
      expect(canonicalFabric(ours)).toEqual(canonicalFabric(seen));
    });

    test(`${file}: writer prints exactly what ibnetdiscover printed`, () => {
      const parsed = readNetFile(path.join(FIX, file));
      const captured = readFileSync(capturedOf(file), 'utf8');
      const text = formatIbnetdiscover(parsed.fabric, { timestamp: stampOf(captured), enhancedPort0: parsed.enhancedPort0 });
      expect(text).toBe(captured);
    });

    test(`${file}: ibnetdiscover text -> fabric -> text is identical`, () => {
      const captured = readFileSync(capturedOf(file), 'utf8');
      const p = parseIbnetdiscoverFull(captured);
      expect(p.source).toBeDefined();
      const text = formatIbnetdiscover(p.fabric, { sourceNode: p.source!.node, timestamp: stampOf(captured), enhancedPort0: p.enhancedPort0 });
      expect(text).toBe(captured);
    });
  }

  test('GUIDs, descriptions and ports of the net example follow ibsim numbering', () => {
    const { fabric, ids } = readNetFile(path.join(FIX, 'net'));
    expect(ids).toEqual(['Switch1', 'Switch2', 'Hca1', 'Hca2']);
    expect(fabric.nodes.map((n) => [n.type, n.guid, n.desc, n.numPorts])).toEqual([
      [NodeType.Switch, 0x200000n, 'Switch1', 8],
      [NodeType.Switch, 0x200001n, 'Switch2', 8],
      [NodeType.CA, 0x100000n, 'Hca1', 2],
      [NodeType.CA, 0x100003n, 'Hca2', 2],
    ]);
    const hca2 = fabric.nodes[3]!;
    expect(hca2.ports[0]).toBeUndefined();
    expect(hca2.ports.slice(1).map((p) => p!.guid)).toEqual([0x100004n, 0x100005n]);
    // Switch1 has 8 ports (+ port 0); unconnected ones exist without a peer.
    const sw1 = fabric.nodes[0]!;
    expect(sw1.ports.length).toBe(9);
    expect(sw1.ports.map((p) => (p?.peer ? `${p.peer.node}/${p.peer.port}` : '-'))).toEqual(['-', '2/1', '3/2', '1/3', '1/4', '-', '-', '-', '-']);
    expect(sw1.ports[1]).toMatchObject({ width: '4x', speed: 'SDR', guid: 0x200000n });
    expect(links(fabric)).toHaveLength(4);
  });

  test('extras.net: GUID/vendor/devid/sysimgguid lines, LIDs, rate text and options', () => {
    const p = readNetFile(path.join(FIX, 'extras.net'));
    const [s1, s2, h1, h2, r1] = p.fabric.nodes;
    expect(s1).toMatchObject({ guid: 0x5000n, systemImageGuid: 0x777n, vendorId: 0x2c9, deviceId: 0, desc: 'my switch desc' });
    expect(s1!.ports[0]).toMatchObject({ lid: 7, lmc: 0 });
    expect(s2).toMatchObject({ guid: 0x5001n, systemImageGuid: 0x5001n, vendorId: 0, deviceId: 0x1234, desc: 'S2' });
    expect(h1).toMatchObject({ guid: 0x9000n, desc: 'host one HCA-1' });
    expect(h1!.ports[1]).toMatchObject({ guid: 0x9001n, lid: 33, lmc: 1, width: '12x', speed: 'SDR' });
    expect(h1!.ports[2]).toEqual({ num: 2, guid: 0x9002n, lid: 0, lmc: 0 });
    expect(h2!.ports[1]).toMatchObject({ guid: 0x9004n, lid: 44, lmc: 2, width: '4x', speed: 'EDR' });
    expect(r1).toMatchObject({ type: NodeType.Router, guid: 0x10n, numPorts: 3 });
    expect(s1!.ports[3]).toMatchObject({ width: '12x', speed: 'HDR' });
    expect(p.enhancedPort0).toEqual([0]);
    expect(p.warnings.some((w) => w.includes(':16:'))).toBe(true);
  });

  test('routers get ibsim router GUIDs starting at 0', () => {
    const { fabric } = readNetFile(path.join(FIX, 'router.net'));
    expect(fabric.nodes[2]).toMatchObject({ type: NodeType.Router, guid: 0n, systemImageGuid: 0n });
    expect(fabric.nodes[2]!.ports[1]!.guid).toBe(1n);
  });
});

describe('malformed input gives TopologyError with the line', () => {
  test('port line outside a record', () => {
    expectTopologyError('Switch 4 "S1"\n[1] "H1"[1]\n\n[2] "H2"[1]\n', 4, /outside a node record/);
  });
  test('missing port count and missing id', () => {
    expectTopologyError('\n# c\nSwitch "S1"\n', 3, /number of ports/);
    expectTopologyError('Hca 2 S1\n', 1, /quoted node id/);
    expectTopologyError('Ca 0 "x"\n', 1, /1\.\.255 ports/);
  });
  test('port number out of range and listed twice', () => {
    expectTopologyError('Switch 2 "S1"\n[1] "S2"[1]\n[3] "S2"[2]\n', 3, /out of range.*\[1\]\.\.\[2\]/);
    expectTopologyError('Switch 2 "S1"\n[0] "S2"[1]\n', 2, /out of range/);
    expectTopologyError('Switch 4 "S1"\n[1] "S2"[1]\n[1] "S2"[2]\n', 3, /already listed on line 2/);
  });
  test('bad remote port, missing remote id', () => {
    expectTopologyError('Switch 4 "S1"\n[1] "S2"[0]\n', 2, /invalid remote port/);
    expectTopologyError('Switch 4 "S1"\n[1] S2 1\n', 2, /quoted remote node id/);
  });
  test('record ended by a non-blank line (ibsim would drop the line)', () => {
    expectTopologyError('Switch 4 "S1"\n[1] "H1"[1]\nHca 1 "H1"\n[1] "S1"[1]\n', 3, /blank line to end the record/);
  });
  test('duplicate ids and GUIDs', () => {
    expectTopologyError('Hca 1 "A"\n\nHca 1 "A"\n', 3, /defined twice/);
    expectTopologyError('Hca 1 "A"\n\ncaguid=0x100000\nHca 1 "B"\n', 4, /already used by "A"/);
  });
  test('one-sided, dangling and oversubscribed links (ibsim refuses them too)', () => {
    expectTopologyError('Switch 4 "S1"\n[1] "H1"[1]\n[2] "H2"[1]\n\nHca 1 "H1"\n[1] "S1"[1]\n\nHca 1 "H2"\n', 3, /"H2"\[1\].*has no port line/);
    expectTopologyError('Switch 4 "S1"\n[1] "Nope"[1]\n', 2, /"Nope", which is not defined/);
    expectTopologyError('Switch 4 "S1"\n[1] "H1"[2]\n\nHca 1 "H1"\n[1] "S1"[1]\n', 2, /has only 1 ports/);
    expectTopologyError('Switch 4 "S1"\n[1] "H1"[1]\n[2] "H1"[1]\n\nHca 1 "H1"\n[1] "S1"[1]\n', 3, /connects to "S1"\[1\]/);
  });
  test('bad options and global settings', () => {
    expectTopologyError('Switch 4 "S1"\n[1] "S2"[1] w=0\n', 2, /w=0/);
    expectTopologyError('Switch 4 "S1"\n[1] "S2"[1] s=9\n', 2, /s=9/);
    expectTopologyError('speed=12\n', 1, /speed=12 is out of range/);
    expectTopologyError('switchguid 5\n', 1, /"=<guid>"/);
    expectTopologyError('Switch 1 "S1"\n[1] "S2"[1] w=1\n\nSwitch 1 "S2"\n[1] "S1"[1] w=2\n', 2, /no link width enabled on both ends/);
  });
  test('aliases are refused explicitly', () => {
    expectTopologyError('Switch 4 "S1"\n@[1] "x"\n', 2, /aliases/);
  });
  test('only TopologyError escapes, for any garbage', () => {
    const junk = ['Switch', 'Switch 9999999999999999999999 "x"', 'Hca 1 ""', 'Ca 1 "a#b"', 'include', '[', 'module=x', 'caguid', '\u0000\u0001'];
    for (const j of junk) {
      try {
        parseNetText(j + '\n');
      } catch (e) {
        expect(e).toBeInstanceOf(TopologyError);
      }
    }
  });
});

describe('include, do, module', () => {
  test('include is relative to the including file; errors point into the included file', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'topo-'));
    mkdirSync(path.join(dir, 'sub'));
    writeFileSync(path.join(dir, 'sub/hcas.net'), 'Hca 1 "H1"\n[1] "S1"[1]\n');
    writeFileSync(path.join(dir, 'main.net'), 'do Dump\nSwitch 4 "S1"\n[1] "H1"[1]\n\ninclude "sub/hcas.net"\n');
    const p = readNetFile(path.join(dir, 'main.net'));
    expect(p.fabric.nodes.map((n) => n.desc)).toEqual(['S1', 'H1']);
    expect(p.commands).toEqual([{ file: path.join(dir, 'main.net'), line: 1, command: 'Dump' }]);
    writeFileSync(path.join(dir, 'sub/bad.net'), '\n[9] "x"\n');
    writeFileSync(path.join(dir, 'main2.net'), 'include "sub/bad.net"\n');
    let e: unknown;
    try {
      readNetFile(path.join(dir, 'main2.net'));
    } catch (x) {
      e = x;
    }
    expect(e).toMatchObject({ name: 'TopologyError', file: path.join(dir, 'sub/bad.net'), line: 2 });
    writeFileSync(path.join(dir, 'loop.net'), 'include "loop.net"\n');
    expect(() => readNetFile(path.join(dir, 'loop.net'))).toThrow(/include cycle/);
    writeFileSync(path.join(dir, 'missing.net'), '\n\ninclude "nothere.net"\n');
    expect(() => readNetFile(path.join(dir, 'missing.net'))).toThrow(/missing\.net:3: cannot find include file "nothere\.net"/);
  });

  test('module prefixes node ids; descriptions default to the prefixed id', () => {
    const p = parseNetText('module="m1"\nSwitch 2 "S"\n[1] "H"[1]\n\nHca 1 "H"\n[1] "S"[1]\n');
    expect(p.ids).toEqual(['m1#S', 'm1#H']);
    expect(p.fabric.nodes[0]!.desc).toBe('m1#S');
  });
});

describe('writer details', () => {
  test('ctime and clean_nodedesc', () => {
    expect(ctime(new Date(2026, 10, 9, 1, 2, 3))).toBe('Mon Nov  9 01:02:03 2026');
    expect(cleanNodeDesc('a\tb\u00e9' + 'x'.repeat(80))).toBe(('a b  ' + 'x'.repeat(80)).slice(0, 63));
  });

  test('discovery from a CA port, CA-to-CA links only seen from the source', () => {
    const text = 'Switch 2 "S"\n[1] "A"[1]\n\nHca 2 "A"\n[1] "S"[1]\n[2] "B"[1]\n\nHca 1 "B"\n[1] "A"[2]\n';
    const f = parseNetText(text).fabric;
    const fromS = formatIbnetdiscover(f, { timestamp: 'T' });
    expect(fromS).not.toContain('H-0000000000100003'); // B is behind a CA: not discovered from S
    const fromA2 = formatIbnetdiscover(f, { sourceNode: 1, sourcePort: 2, timestamp: 'T' });
    expect(fromA2).toContain('# Initiated from node 0000000000100000 port 0000000000100002\n');
    expect(fromA2).toContain('[2](100002) \t"H-0000000000100003"[1] (100004) \t\t# lid 0 lmc 0 "B" lid 0 4xSDR\n');
    expect(fromA2).not.toContain('"S-0000000000200000"'); // A is not crossed from port 2
  });
});

describe('JSON form', () => {
  test('round trip is identical and stable', () => {
    for (const file of topoFiles) {
      const f = readNetFile(path.join(FIX, file)).fabric;
      const json = fabricToJson(f);
      expect(parseFabricJson(json)).toEqual(f);
      expect(fabricToJson(parseFabricJson(json))).toBe(json);
      expect(json).toContain('"guid": "0x0000000000');
    }
  });

  test('loadFabricSpec reads JSON, .net and ibnetdiscover files', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'topo-'));
    const f = readNetFile(path.join(FIX, 'net.2sw2path4hca')).fabric;
    writeFileSync(path.join(dir, 'f.json'), fabricToJson(f));
    expect(loadFabricSpec(path.join(dir, 'f.json'))).toEqual(f);
    expect(loadFabricSpec(path.join(FIX, 'net.2sw2path4hca'))).toEqual(f);
    expect(diffFabrics(loadFabricSpec(capturedOf('net.2sw2path4hca')), f)).toEqual([]);
    expect(() => loadFabricSpec(path.join(dir, 'nope.net'))).toThrow(TopologyError);
  });

  test('bad JSON gives TopologyError naming the path', () => {
    const good = JSON.parse(fabricToJson(readNetFile(path.join(FIX, 'net.1')).fabric));
    const bad = (mut: (d: any) => void): string => {
      const d = structuredClone(good);
      mut(d);
      return JSON.stringify(d);
    };
    expect(() => parseTopologyText('{ nope', 'x.json')).toThrow(/not valid JSON/);
    expect(() => parseFabricJson(bad((d) => (d.nodes[0].guid = '12')))).toThrow(/nodes\[0\]\.guid: expected a GUID/);
    expect(() => parseFabricJson(bad((d) => (d.nodes[1].ports[0].peer = { node: 0, port: 7 })))).toThrow(/inconsistent links/);
    expect(() => parseFabricJson(bad((d) => (d.nodes[0].type = 'Hub')))).toThrow(/nodes\[0\]\.type/);
    expect(() => parseFabricJson(bad((d) => (d.version = 2)))).toThrow(TopologyError);
  });
});
