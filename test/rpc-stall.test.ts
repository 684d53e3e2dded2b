/** MadRpc after a stall of its own thread: a response that arrived during the stall is delivered
 * before the try is declared timed out. */
import { describe, expect, it } from 'vitest';
import { MessageChannel } from 'node:worker_threads';
import { MadRpc } from '../src/rpc/madrpc.js';
import { RealClock } from '../src/util/clock.js';
import type { LocalPortInfo, MadAddress, ReceiveHandler, Transport } from '../src/transport/types.js';

/** Answers every request through a MessageChannel: the answer reaches JS in the I/O phase, as a
 * native receive thread's handoff does. */
class ChannelEcho implements Transport {
  readonly kind = 'echo';
  readonly local: LocalPortInfo = { caName: 'echo', portNum: 1, nodeGuid: 1n, portGuid: 1n, lid: 1, smLid: 0, state: 4, linkLayer: 'InfiniBand' };
  private handler?: ReceiveHandler;
  private readonly ch = new MessageChannel();
  constructor() {
    this.ch.port2.on('message', (b: Uint8Array) => this.handler?.({ data: b, addr: { lid: 2, qpn: 0 }, status: 0 }));
  }
  register(): void {}
  send(mad: Uint8Array, _addr: MadAddress): void {
    const r = Uint8Array.from(mad);
    r[3] = r[3]! | 0x80; // GetResp
    this.ch.port1.postMessage(r);
  }
  onReceive(h: ReceiveHandler): void {
    this.handler = h;
  }
  async close(): Promise<void> {
    this.ch.port1.close();
    this.ch.port2.close();
  }
}

function busyWait(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* a GC pause or a long synchronous step */
  }
}

async function stalledRequest(graceTurn: boolean): Promise<number> {
  const t = new ChannelEcho();
  const rpc = new MadRpc(t, new RealClock(), { timeoutMs: 20, retries: 2, graceTurn });
  const mad = new Uint8Array(256);
  mad[0] = 1;
  mad[1] = 0x81;
  mad[2] = 1;
  mad[3] = 1;
  const p = rpc.request(mad, { lid: 0xffff, qpn: 0 });
  busyWait(60); // the answer arrives meanwhile; the 20 ms deadline passes
  await p;
  const timeouts = rpc.stats.timeouts;
  rpc.close();
  await t.close();
  return timeouts;
}

describe('MadRpc after its thread stalled', () => {
  it('delivers a response that arrived during the stall instead of timing the try out', async () => {
    expect(await stalledRequest(true)).toBe(0);
  });
  it('(without the grace turn the same stall times the try out)', async () => {
    expect(await stalledRequest(false)).toBe(1);
  });
});
