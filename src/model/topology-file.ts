/** The expected topology's file (`--topology`, issue #33): ibnetdiscover's format (what `ibsm
 * discover` and ibnetdiscover write: "discover once, pin it"), or a compact cabling plan:
 *
 *     # NODE  PORT  NODE  PORT  [WIDTH] [SPEED]
 *     leaf-01 1     spine-01 1  4x NDR
 *     "host 7 HCA-1" 1  leaf-01 7
 *     0x0002c90300001234 2  leaf-02 9
 *
 * one link a line; a node is its NodeDescription (quoted when it has blanks) or its node GUID
 * (0x...); WIDTH (1x..12x) and SPEED (SDR..XDR), when given, are the least the link may train at.
 * A plan's node named by its description has no GUID (0: matched by place and description, never
 * "GUID changed") and no type (0: matches any). Pure: the caller reads the file. */
import type { Fabric, FabricNode } from './fabric.js';
import { parseNetText } from './netfile.js';
import { TopologyError } from './errors.js';
import { SPEED_NAMES, widthCode } from './rates.js';

/** Is `text` ibnetdiscover's / ibsim's format (a Switch, Hca, Ca or Rt line)? */
export function isNetFormat(text: string): boolean {
  return /^\s*(Switch|Hca|Ca|Rt)\s/m.test(text);
}

/** The expected topology of a `--topology` file's text. Throws TopologyError naming file:line. */
export function parseExpectedTopology(text: string, fileName = '<topology>'): Fabric {
  if (isNetFormat(text)) return parseNetText(text, { fileName }).fabric;
  return parseCablingPlan(text, fileName);
}

const TOKEN = /"([^"]*)"|(\S+)/g;

/** A cabling plan (above) as a fabric: nodes by name, ports as the links name them. */
export function parseCablingPlan(text: string, fileName = '<plan>'): Fabric {
  const nodes: FabricNode[] = [];
  const byName = new Map<string, number>();
  const nodeOf = (name: string): number => {
    let i = byName.get(name);
    if (i !== undefined) return i;
    const guid = /^0x[0-9a-f]{1,16}$/i.test(name) ? BigInt(name) : 0n;
    i = nodes.length;
    nodes.push({ type: 0 as FabricNode['type'], guid, systemImageGuid: 0n, desc: guid ? '' : name, numPorts: 0, vendorId: 0, deviceId: 0, ports: [] });
    byName.set(name, i);
    return i;
  };
  text.split('\n').forEach((raw, li) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) return;
    const err = (detail: string): TopologyError => new TopologyError(fileName, li + 1, detail);
    const t = [...line.matchAll(TOKEN)].map((m) => m[1] ?? m[2]!);
    if (t.length < 4 || t.length > 6) throw err(`a link is NODE PORT NODE PORT [WIDTH] [SPEED], not "${line}"`);
    const [an, ap, bn, bp, ...rate] = t as [string, string, string, string, ...string[]];
    const pa = Number(ap);
    const pb = Number(bp);
    if (!Number.isInteger(pa) || pa < 1 || pa > 254 || !Number.isInteger(pb) || pb < 1 || pb > 254) throw err(`port numbers are 1..254 ("${ap}", "${bp}")`);
    let width: string | undefined;
    let speed: string | undefined;
    for (const r of rate) {
      if (widthCode(r) !== undefined) width = r.toLowerCase();
      else if (SPEED_NAMES.includes(r.toUpperCase())) speed = r.toUpperCase();
      else throw err(`"${r}" is neither a width (1x, 2x, 4x, 8x, 12x) nor a speed (${SPEED_NAMES.join(', ')})`);
    }
    const a = nodeOf(an);
    const b = nodeOf(bn);
    for (const [n, p, on, op] of [[a, pa, b, pb], [b, pb, a, pa]] as const) {
      const node = nodes[n]!;
      if (node.ports[p]?.peer) throw err(`${n === a ? an : bn} port ${p} is cabled twice`);
      node.ports[p] = { num: p, guid: 0n, peer: { node: on, port: op }, width, speed };
      node.numPorts = Math.max(node.numPorts, p);
    }
  });
  return { nodes };
}
