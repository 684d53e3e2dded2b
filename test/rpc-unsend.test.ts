/** Issue #32: a paced transport (umad under umad2sim) may still hold a request in its send queue
 * when the try times out; MadRpc then asks the transport to drop it (unsend), so after a stalled
 * peer only the retry goes out, not a stale copy ahead of it. */
import { describe, expect, it } from 'vitest';
import { MadRpc } from '../src/rpc/madrpc.js';
import { RealClock } from '../src/util/clock.js';
import type { LocalPortInfo, MadAddress, ReceiveHandler, Transport } from '../src/transport/types.js';

/** Never answers; records what was sent and what MadRpc asked to unsend. */
class Silent implements Transport {
  readonly kind = 'silent';
  readonly local: LocalPortInfo = { caName: 'silent', portNum: 1, nodeGuid: 1n, portGuid: 1n, lid: 1, smLid: 0, state: 4, linkLayer: 'InfiniBand' };
  readonly sent: bigint[] = [];
  readonly unsent: bigint[] = [];
  register(): void {}
  send(mad: Uint8Array, _addr: MadAddress): void {
    this.sent.push(new DataView(mad.buffer, mad.byteOffset).getBigUint64(8));
  }
  unsend(mad: Uint8Array): void {
    this.unsent.push(new DataView(mad.buffer, mad.byteOffset).getBigUint64(8));
  }
  onReceive(_h: ReceiveHandler): void {}
  async close(): Promise<void> {}
}

describe('MadRpc over a transport that can unsend', () => {
  it('unsends each try that timed out, the try it sent, and retries', async () => {
    const t = new Silent();
    const rpc = new MadRpc(t, new RealClock(), { timeoutMs: 10, retries: 2 });
    const mad = new Uint8Array(256);
    mad.set([1, 0x81, 1, 1], 0);
    await expect(rpc.request(mad, { lid: 0xffff, qpn: 0 })).rejects.toThrow();
    expect(t.sent.length).toBe(3);
    expect(t.unsent).toEqual(t.sent);
    rpc.close();
  });
});
