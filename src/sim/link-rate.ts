/** A link trained below what its cable can do, on the in-process fabric (issue #33's tests of the
 * expected topology's width class): the port's enabled widths narrowed and the link bounced. */
import type { SimFabric, SimNodeRef } from './fabric.js';

/** Enable only the widths of `widthMask` on (node, port) (0: every width it supports) and let the
 * link train again: it comes up at the best width both ends share (a 4x cable trained at 1x, and
 * back), both ends in INIT. */
export function trainWidth(sim: SimFabric, ref: SimNodeRef, port: number, widthMask: number): void {
  const p = sim.port(ref, port);
  p.info.linkWidthEnabled = widthMask || p.info.linkWidthSupported;
  sim.linkDown(ref, port);
  sim.linkUp(ref, port);
}
