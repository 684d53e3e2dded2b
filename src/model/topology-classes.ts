/** The expected topology's mismatch classes and the actions an operator sets per class (issue
 * #33): what the option table checks `--topology-action` against, with no other import (the CLI
 * loads it at start). */

/** The mismatch classes, in the order they are reported and configured. */
export const MISMATCH_CLASSES = ['missing-node', 'extra-node', 'missing-link', 'extra-link', 'wrong-port', 'guid-changed', 'width', 'speed'] as const;
export type MismatchClass = (typeof MISMATCH_CLASSES)[number];

export type HealthAction = 'ignore' | 'warn' | 'isolate';
export const HEALTH_ACTIONS: readonly HealthAction[] = ['ignore', 'warn', 'isolate'];
export type TopologyActions = Readonly<Record<MismatchClass, HealthAction>>;
/** Every class warns unless configured otherwise. */
export const DEFAULT_TOPOLOGY_ACTIONS: TopologyActions = Object.fromEntries(MISMATCH_CLASSES.map((c) => [c, 'warn'])) as Record<MismatchClass, HealthAction>;

/** Parse `class=action,...` (e.g. "wrong-port=isolate,width=ignore"; `all=action` for every
 * class, later items win) over the defaults. Throws RangeError naming what is wrong. */
export function parseTopologyActions(text: string): TopologyActions {
  const out: Record<string, HealthAction> = { ...DEFAULT_TOPOLOGY_ACTIONS };
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [cls, action] = item.split('=').map((s) => s.trim());
    if (!HEALTH_ACTIONS.includes(action as HealthAction)) throw new RangeError(`topology action "${item}": the action is one of ${HEALTH_ACTIONS.join(', ')}`);
    if (cls === 'all') for (const c of MISMATCH_CLASSES) out[c] = action as HealthAction;
    else if ((MISMATCH_CLASSES as readonly string[]).includes(cls!)) out[cls!] = action as HealthAction;
    else throw new RangeError(`topology action "${item}": the class is one of ${MISMATCH_CLASSES.join(', ')}, all`);
  }
  return out as TopologyActions;
}

/** One end of a mismatch or an isolation: a node (port 0 for the node itself) or a port. */
export interface MismatchEnd {
  guid: bigint;
  desc: string;
  port: number;
  /** The node's type (NodeInfo NodeType; 0: not known, a cabling plan's node). */
  type?: number;
}

/** One isolated node (no `b`, port 0) or link (sm/health-state.ts holds them). */
export interface Isolation {
  key: string;
  kind: 'node' | 'link';
  a: MismatchEnd;
  b?: MismatchEnd;
  /** The mismatch class or policy that isolated it. */
  cls: string;
  /** Who holds it: 'topology' (the expected topology), or another source (a policy, an operator). */
  source: string;
  reason: string;
  /** Clock time (ms) it was isolated. */
  since: number;
}
