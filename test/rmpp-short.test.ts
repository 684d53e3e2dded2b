/** RMPP over a link that delivers only the first 224 bytes of a MAD intact (ibsim does, found by
 * experiment): segments sized to the link reassemble exactly; 256-byte segments would not. */
import { describe, expect, it } from 'vitest';
import { LoopbackHub } from '../src/transport/loopback.js';
import { VirtualClock, flushMicrotasks } from '../src/util/clock.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method } from '../src/wire/mad.js';
import { Rng } from '../src/util/rng.js';
import type { AgentOptions, MadAddress, ReceiveHandler, Transport } from '../src/transport/types.js';

const CUT = 224;

/** Garbles every received MAD from byte 224 on, as ibsim does; declares it when `declare`. */
class ShortLink implements Transport {
  readonly kind = 'short';
  constructor(
    private readonly inner: Transport,
    declare: boolean,
  ) {
    this.maxMadSize = declare ? CUT : undefined;
  }
  readonly maxMadSize: number | undefined;
  get local() {
    return this.inner.local;
  }
  register(c: number, v: number, o?: AgentOptions): void {
    this.inner.register(c, v, o);
  }
  send(m: Uint8Array, a: MadAddress): void {
    this.inner.send(m, a);
  }
  onReceive(h: ReceiveHandler): void {
    this.inner.onReceive((m) => {
      const d = Uint8Array.from(m.data);
      if (d.length > CUT) d.fill(0xa5, CUT);
      h({ ...m, data: d });
    });
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

async function transfer(declare: boolean, len: number): Promise<{ sent: Uint8Array; got: Uint8Array }> {
  const hub = new LoopbackHub();
  const clock = new VirtualClock();
  const c = hub.endpoint({ lid: 1 });
  const s = hub.endpoint({ lid: 2 });
  c.register(MgmtClass.SubnAdm, 2);
  s.register(MgmtClass.SubnAdm, 2, { methods: [Method.GetTable] });
  const client = new MadRpc(new ShortLink(c, declare), clock, { timeoutMs: 50 });
  const server = new MadRpc(new ShortLink(s, declare), clock);
  const r = new Rng(5);
  const payload = Uint8Array.from({ length: len }, () => r.int(256));
  server.onUnsolicited(MgmtClass.SubnAdm, (req) => {
    const h = req.data.slice(0, 56);
    h[3] = Method.GetTableResp;
    void server.respondRmpp(req, h, payload).catch(() => undefined);
  });
  const q = new Uint8Array(256);
  q.set([1, MgmtClass.SubnAdm, 2, Method.GetTable]);
  const resp = await clock.runUntil(client.request(q, { lid: 2, qpn: 1 }), 20_000);
  await flushMicrotasks();
  return { sent: payload, got: resp.data.subarray(56, 56 + len) };
}

describe('RMPP over a link that cuts MADs at 224 bytes', () => {
  it('reassembles a 30-segment transfer exactly when the transport declares the limit', async () => {
    const { sent, got } = await transfer(true, 30 * 168 + 17);
    expect(Buffer.from(got).equals(Buffer.from(sent))).toBe(true);
  });
  it('(with 256-byte segments the same link corrupts the data)', async () => {
    const { sent, got } = await transfer(false, 30 * 168 + 17);
    expect(Buffer.from(got).equals(Buffer.from(sent))).toBe(false);
  });
});
