/** What every SMA attribute handler works with: the request context, the data area of request and
 * response, and the errors that become a response status. */
import { type AnyLayout } from '../wire/layout.js';
import { MadStatus, SMP_DATA_OFFSET, SMP_DATA_SIZE } from '../wire/mad.js';
import type { SimNode, SimPort } from './node.js';
import type { SmaHost } from './sma.js';

export class AttrError {
  constructor(readonly status: number) {}
}
export const unsupported = (): never => {
  throw new AttrError(MadStatus.UnsupportedMethodAttr);
};
export const invalid = (): never => {
  throw new AttrError(MadStatus.InvalidField);
};

/** Replace the response's data area with an encoded attribute value. */
export function writeData(resp: Uint8Array, layout: AnyLayout, value: object): void {
  resp.fill(0, SMP_DATA_OFFSET, SMP_DATA_OFFSET + SMP_DATA_SIZE);
  layout.encode(value, resp, SMP_DATA_OFFSET);
}

export interface AttrCtx {
  host: SmaHost;
  node: SimNode;
  inPort: number;
  mp: SimPort;
  mod: number;
  set: boolean;
  req: Uint8Array;
  resp: Uint8Array;
  keyMatches: boolean;
}

export function reqData<V>(c: AttrCtx, layout: { decode(b: Uint8Array, o?: number): V }): V {
  return layout.decode(c.req, SMP_DATA_OFFSET);
}

/** A port by number for attributes whose modifier selects a port (CA: 0 = the arrival port). */
export function portByMod(c: AttrCtx, portNum: number, caUsesArrival: boolean): SimPort {
  const n = c.node;
  if (!n.isSwitch && caUsesArrival) return n.ports[c.inPort] ?? invalid();
  if (!n.isSwitch && portNum === 0) portNum = c.inPort;
  if (portNum > n.numPorts) invalid();
  return n.ports[portNum] ?? invalid();
}

/** Get/Set handlers by attribute id. */
export type AttrHandlers = Readonly<Record<number, (c: AttrCtx) => void>>;

export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
export function isPort(p: SimPort | undefined): p is SimPort {
  return p !== undefined;
}
