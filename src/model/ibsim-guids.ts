/**
 * ibsim's GUID rules (ibsim/sim_net.c), shared by the .net parser and the generators so a
 * generated fabric gets the GUIDs ibsim would give it: each node type has its own counter
 * (CA 0x100000, switch 0x200000, router 0); a switch takes one GUID (all its ports share it), a
 * CA or router takes numPorts + 1 (port p has GUID node + p). GUIDs are 64-bit and wrap.
 */
import { NodeType } from '../wire/mad.js';
import type { NodeKind } from './fabric.js';
import { GUID_MASK } from '../util/guid.js';

const FIRST_GUID: Record<NodeKind, bigint> = { [NodeType.CA]: 0x100000n, [NodeType.Switch]: 0x200000n, [NodeType.Router]: 0n };

/** Where the GUID counters of a fresh ibsim start (by node type). */
export function initialGuids(): Record<NodeKind, bigint> {
  return { ...FIRST_GUID };
}

/** The counter value after a node of `type` with `numPorts` ports took `guid`. */
export function guidAfter(type: NodeKind, guid: bigint, numPorts: number): bigint {
  return (guid + (type === NodeType.Switch ? 1n : BigInt(numPorts) + 1n)) & GUID_MASK;
}

/** The GUID of port `port` of a node whose node GUID is `nodeGuid`. */
export function portGuid(type: NodeKind, nodeGuid: bigint, port: number): bigint {
  return type === NodeType.Switch ? nodeGuid : (nodeGuid + BigInt(port)) & GUID_MASK;
}
