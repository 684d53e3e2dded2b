/** The port state machine of the simulated fabric (IBA 7.2 as far as an SM can observe it): link
 * training from cable and PortPhysicalState, and logical PortState changes. */
import { PhysPortState, PortState } from '../wire/mad.js';
import type { SimPort } from './node.js';

export interface PortChange {
  port: SimPort;
  /** Logical PortState before and after. */
  from: number;
  to: number;
}

export function linkIsUp(p: SimPort): boolean {
  return p.linkUp;
}

/** Write a port's PortPhysicalState, and its mirror `linkUp` (the only writer of either). */
export function setPhysical(p: SimPort, state: number): void {
  p.info.portPhysicalState = state;
  p.linkUp = state === PhysPortState.LinkUp;
}

function linkShouldBeUp(p: SimPort): boolean {
  const q = p.peer;
  return q !== undefined && p.cableUp && q.cableUp && !p.disabled && !q.disabled;
}

const WIDTH_ORDER = [8, 4, 2, 16, 1]; // 12x, 8x, 4x, 2x, 1x
function highestWidth(mask: number): number {
  for (const w of WIDTH_ORDER) if (mask & w) return w;
  return 1;
}
export function highestBit(mask: number): number {
  for (let b = 3; b >= 0; b--) if (mask & (1 << b)) return 1 << b;
  return 0;
}

export function setLogical(p: SimPort, state: number, changes: PortChange[]): void {
  if (p.info.portState === state) return;
  changes.push({ port: p, from: p.info.portState, to: state });
  p.info.portState = state;
}

/** LinkSpeedExtEnabled as a set of speeds (30 = extended speeds disabled). */
const extEnabled = (v: number): number => (v === 30 ? 0 : v & 0xf);

/** The width and speeds a link between `a` and `b` trains to: the best both ends have enabled
 * (XDR in byte 56 over the extended speeds over the base ones). */
function trained(a: SimPort, b: SimPort): { width: number; speed: number; ext: number; ext2: number } {
  const ext2 = highestBit(a.info.linkSpeedExtEnabled2 & b.info.linkSpeedExtEnabled2 & 0x3);
  const ext = highestBit(extEnabled(a.info.linkSpeedExtEnabled) & extEnabled(b.info.linkSpeedExtEnabled));
  return {
    width: highestWidth(a.info.linkWidthEnabled & b.info.linkWidthEnabled),
    // running an extended speed, LinkSpeedActive reads 0 ("Extended speed", as real ports report it)
    speed: ext || ext2 ? 0 : highestBit(a.info.linkSpeedEnabled & b.info.linkSpeedEnabled) || 1,
    ext,
    ext2,
  };
}

/** An up link whose ends' enabled widths/speeds no longer give what it is running at. */
export function trainsDifferently(p: SimPort): boolean {
  const q = p.peer;
  if (!q || !linkIsUp(p)) return false;
  const t = trained(p, q);
  const i = p.info;
  return t.width !== i.linkWidthActive || t.speed !== i.linkSpeedActive || t.ext !== i.linkSpeedExtActive || t.ext2 !== i.linkSpeedExtActive2;
}

function setActive(a: SimPort, b: SimPort): void {
  const t = trained(a, b);
  a.info.linkWidthActive = t.width;
  a.info.linkSpeedActive = t.speed;
  a.info.linkSpeedExtActive = t.ext;
  a.info.linkSpeedExtActive2 = t.ext2;
}

/** An up link whose enabled widths/speeds changed: both ends run at what they now share. */
export function renegotiate(p: SimPort): void {
  const q = p.peer;
  if (!q) return;
  setActive(p, q);
  setActive(q, p);
}

function bringUp(p: SimPort, q: SimPort, changes: PortChange[]): void {
  for (const [a, b] of [
    [p, q],
    [q, p],
  ] as const) {
    setPhysical(a, PhysPortState.LinkUp);
    setActive(a, b);
    setLogical(a, PortState.Init, changes);
  }
}

function bringDown(p: SimPort, changes: PortChange[]): void {
  setPhysical(p, p.disabled ? PhysPortState.Disabled : PhysPortState.Polling);
  if (p.info.portState !== PortState.Down) p.linkDowned++;
  setLogical(p, PortState.Down, changes);
}

/** Make a port and its neighbour consistent with cable/disable state (link training). */
export function refreshLink(p: SimPort, changes: PortChange[]): void {
  if (p.num === 0 && p.node.isSwitch) return;
  const up = linkShouldBeUp(p);
  const q = p.peer;
  if (up && q) {
    if (!linkIsUp(p) || !linkIsUp(q)) bringUp(p, q, changes);
  } else {
    if (linkIsUp(p) || p.info.portState !== PortState.Down) bringDown(p, changes);
    else setPhysical(p, p.disabled ? PhysPortState.Disabled : PhysPortState.Polling);
    if (q && (linkIsUp(q) || q.info.portState !== PortState.Down)) bringDown(q, changes);
  }
}

/** SM set PortState=Down on an up link: the link retrains and both ends come back in Init. */
export function retrain(p: SimPort, changes: PortChange[]): void {
  const q = p.peer;
  if (!q || !linkIsUp(p)) return;
  // the ends pass through Down; both are observed in Init afterwards
  for (const a of [p, q]) {
    if (a.info.portState !== PortState.Init) {
      changes.push({ port: a, from: a.info.portState, to: PortState.Init });
      a.info.portState = PortState.Init;
    } else {
      changes.push({ port: a, from: PortState.Init, to: PortState.Init });
    }
  }
}
