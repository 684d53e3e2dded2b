/** RMPP toward a receiver that never ACKs (a diag tool under umad2sim reads the first segment as
 * the whole answer): with quietWithoutAck the sender sends the first window once and stops, so no
 * late resend or ABORT reaches whichever process next uses the requester's LID and QP. */
import { describe, expect, it } from 'vitest';
import { LoopbackHub } from '../src/transport/loopback.js';
import { VirtualClock, flushMicrotasks } from '../src/util/clock.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method } from '../src/wire/mad.js';
import { decodeRmpp, RmppType } from '../src/wire/rmpp.js';
import type { ReceivedMad } from '../src/transport/types.js';

const CLIENT = 1;
const SA = 2;

function saRequest(): Uint8Array {
  const b = new Uint8Array(256);
  b[0] = 1;
  b[1] = MgmtClass.SubnAdm;
  b[2] = 2;
  b[3] = Method.GetTable;
  b[16] = 0x00;
  b[17] = 0x11;
  b[12] = 0x12; // a TID
  return b;
}

async function run(quietWithoutAck: boolean | undefined): Promise<{ got: ReceivedMad[]; server: MadRpc; settled: string }> {
  const hub = new LoopbackHub();
  const clock = new VirtualClock();
  const c = hub.endpoint({ lid: CLIENT });
  const s = hub.endpoint({ lid: SA });
  c.register(MgmtClass.SubnAdm, 2);
  s.register(MgmtClass.SubnAdm, 2, { methods: [Method.GetTable] });
  const server = new MadRpc(s, clock, { rmpp: { ackTimeoutMs: 40, retries: 5, ...(quietWithoutAck === undefined ? {} : { quietWithoutAck }) } });
  // The client is a bare transport: it never ACKs (no RMPP), as saquery under umad2sim.
  const got: ReceivedMad[] = [];
  c.onReceive((m) => got.push(m));
  let settled = 'pending';
  server.onUnsolicited(
    MgmtClass.SubnAdm,
    (req) => {
      const hdr = req.data.slice(0, 56);
      hdr[3] = Method.GetTableResp;
      server.respondRmpp(req, hdr, new Uint8Array(450)).then(
        () => (settled = 'ok'),
        (e: Error) => (settled = `failed: ${e.message}`),
      );
    },
    { method: Method.GetTable },
  );
  c.send(saRequest(), { lid: SA, qpn: 1 });
  for (let t = 0; t < 5000; t += 10) await clock.advanceAsync(10);
  await flushMicrotasks();
  return { got, server, settled };
}

describe('RMPP sender toward a receiver that never ACKs', () => {
  it('quietWithoutAck: segment 1 once, no resend, no ABORT; the send settles and is counted', async () => {
    const { got, server, settled } = await run(true);
    expect(got.map((m) => [decodeRmpp(m.data).type, decodeRmpp(m.data).data1])).toEqual([[RmppType.Data, 1]]);
    expect(server.rmppStats.segmentsResent).toBe(0);
    expect(server.rmppStats.transfersUnacked).toBe(1);
    expect(server.rmppStats.aborts).toBe(0);
    expect(settled).toBe('ok');
  });

  it('without it (the default off umad2sim): segment 1 is resent and the transfer ends with an ABORT', async () => {
    const { got, server, settled } = await run(undefined);
    const kinds = got.map((m) => decodeRmpp(m.data).type);
    expect(kinds.filter((k) => k === RmppType.Data).length).toBe(6);
    expect(kinds.at(-1)).toBe(RmppType.Abort);
    expect(server.rmppStats.segmentsResent).toBe(5);
    expect(settled).toMatch(/^failed: .*no ACK after 6 sends of segment 1/);
  });
});


describe('RMPP receiver, a lone segment of a standard-size sender where fewer bytes arrive', () => {
  it('keeps the bytes that arrived and says so in PayloadLength (OpenSM GetMultiResp under umad2sim)', async () => {
    const hub = new LoopbackHub();
    const clock = new VirtualClock();
    const c = hub.endpoint({ lid: CLIENT });
    const s = hub.endpoint({ lid: SA });
    c.register(MgmtClass.SubnAdm, 2);
    s.register(MgmtClass.SubnAdm, 2, { methods: [Method.GetTable] });
    const client = new MadRpc(c, clock, { timeoutMs: 100, retries: 0, rmpp: { madSize: 224 } });
    let requests = 0;
    s.onReceive((m) => {
      if (m.data[25] === RmppType.Ack) return; // the client's ACK (method flipped: GetTable)
      requests++;
      // One DATA segment, First|Last, PayloadLength 220 (a full 256-byte segment's), 120 bytes long.
      const rsp = new Uint8Array(120);
      rsp.set(m.data.subarray(0, 24));
      rsp[3] = Method.GetTableResp;
      rsp[24] = 1; // RMPP version
      rsp[25] = RmppType.Data;
      rsp[26] = 0x07; // Active | First | Last
      rsp[31] = 1; // segment 1
      rsp[35] = 220; // PayloadLength
      for (let i = 56; i < 120; i++) rsp[i] = i;
      s.send(rsp, m.addr);
    });
    const p = client.request(saRequest(), { lid: SA, qpn: 1 });
    let got: ReceivedMad | undefined;
    void p.then((r) => (got = r));
    for (let t = 0; t < 50 && !got; t += 5) await clock.advanceAsync(5);
    await flushMicrotasks();
    expect(requests).toBe(1);
    expect(got).toBeDefined();
    expect(got!.data.length).toBe(56 + 64);
    expect(decodeRmpp(got!.data).data2).toBe(20 + 64);
    expect(Array.from(got!.data.subarray(56, 60))).toEqual([56, 57, 58, 59]);
  });
});
