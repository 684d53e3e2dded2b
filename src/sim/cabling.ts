/** Cabling faults of the in-process fabric at run time (issue #33's tests of the expected
 * topology): a link trained below what its cable can do, and two cables swapped. */
import { SimFabricError, type SimFabric, type SimNodeRef } from './fabric.js';

/** Enable only the widths of `widthMask` on (node, port) (0: every width it supports) and let the
 * link train again: it comes up at the best width both ends share (a 4x cable trained at 1x, and
 * back), both ends in INIT. */
export function trainWidth(sim: SimFabric, ref: SimNodeRef, port: number, widthMask: number): void {
  const p = sim.port(ref, port);
  p.info.linkWidthEnabled = widthMask || p.info.linkWidthSupported;
  sim.linkDown(ref, port);
  sim.linkUp(ref, port);
}

/** Swap the far ends of the cables in (a, pa) and (b, pb): both pulled (DOWN, traps), their far
 * ends exchanged, plugged again (INIT, traps). Two cables swapped on a leaf; the same call again
 * puts them back. */
export function swapCables(sim: SimFabric, a: SimNodeRef, pa: number, b: SimNodeRef, pb: number): void {
  const p = sim.port(a, pa);
  const q = sim.port(b, pb);
  const pp = p.peer;
  const qp = q.peer;
  if (!pp || !qp) throw new SimFabricError(`swapCables: ${pp ? `port ${pb}` : `port ${pa}`} has no cable`);
  sim.linkDown(a, pa);
  sim.linkDown(b, pb);
  p.peer = qp;
  qp.peer = p;
  q.peer = pp;
  pp.peer = q;
  sim.linkUp(a, pa);
  sim.linkUp(b, pb);
}
