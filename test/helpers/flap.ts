/** The flapping policy's tests (test/health-flap*.test.ts): the link they bounce, and the bounce. */
import type { Fabric } from '../../src/model/fabric.js';
import type { SimFabric } from '../../src/sim/fabric.js';
import type { VirtualClock } from '../../src/util/clock.js';
import { NodeType } from '../../src/wire/mad.js';
import { drive } from './drive.js';

/** A leaf switch (a switch with a host, not node 0) and its first uplink (a port to a switch). */
export function leafUplink(f: Fabric): { leaf: number; up: number; guid: bigint } {
  const sw = (i: number): boolean => f.nodes[i]!.type === NodeType.Switch;
  const leaf = f.nodes.findIndex((n, i) => i !== 0 && sw(i) && n.ports.some((p) => p?.peer && !sw(p.peer.node)));
  const up = f.nodes[leaf]!.ports.findIndex((p, pn) => pn > 0 && p?.peer !== undefined && sw(p.peer.node));
  return { leaf, up, guid: f.nodes[leaf]!.guid };
}

/** Let `ms` of virtual time pass (the SM runs its timers meanwhile). */
export function wait(clock: VirtualClock, ms: number): Promise<void> {
  return drive(clock, new Promise<void>((r) => clock.setTimeout(r, ms)), ms + 60_000);
}

/** Pull the cable of (guid, port) and put it back, `n` times: down `downMs`, then up `upMs`;
 * `until`: stop early once it says so (checked after each bounce). */
export async function bounce(sim: SimFabric, clock: VirtualClock, guid: bigint, port: number, n: number, o: { downMs?: number; upMs?: number; until?: () => boolean } = {}): Promise<number> {
  for (let i = 0; i < n; i++) {
    sim.linkDown(guid, port);
    await wait(clock, o.downMs ?? 1000);
    sim.linkUp(guid, port);
    await wait(clock, o.upMs ?? 1000);
    if (o.until?.()) return i + 1;
  }
  return n;
}
