import { describe, expect, it } from 'vitest';
import { LoopbackHub } from '../src/transport/loopback.js';
import { VirtualClock } from '../src/util/clock.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method } from '../src/wire/mad.js';
import { smpLid, tidHigh } from '../src/wire/builders.js';
import { SaEngine } from '../src/sa/engine.js';
import { SaServer } from '../src/sa/server.js';
import { encodeSaMad, SaAttr } from '../src/wire/sa.js';
import type { ReceivedMad } from '../src/transport/types.js';

describe('deferrals go through the clock; the SA asks the RPC, not the transport', () => {
  it("loopback 'immediate' delivery defers on the hub's clock", () => {
    const clock = new VirtualClock();
    const hub = new LoopbackHub({ delivery: 'immediate', clock });
    const a = hub.endpoint({ lid: 1, tidHighBits: 0xabcd });
    const b = hub.endpoint({ lid: 2 });
    a.register(MgmtClass.SubnLid, 1);
    b.register(MgmtClass.SubnLid, 1);
    const got: ReceivedMad[] = [];
    b.onReceive((m) => got.push(m));
    a.send(smpLid({ method: Method.Get, attrId: 0x11 }), { lid: 2, qpn: 0 });
    expect(got.length).toBe(0);
    clock.advance(0);
    expect(got.length).toBe(1);
    expect(tidHigh(got[0]!.data)).toBe(0xabcd);
  });
  it('MadRpc says whether the transport copies on send', () => {
    const hub = new LoopbackHub();
    const clock = new VirtualClock();
    expect(new MadRpc(hub.endpoint({ lid: 1 }), clock).copiesOnSend).toBe(false);
    const t = hub.endpoint({ lid: 2 });
    expect(new MadRpc(Object.assign(t, { copiesOnSend: true }), clock).copiesOnSend).toBe(true);
  });
  it("the SA server drains on the RPC clock's defer by default", () => {
    const clock = new VirtualClock();
    const hub = new LoopbackHub();
    const rpc = new MadRpc(hub.endpoint({ lid: 1 }), clock);
    const server = new SaServer(rpc, new SaEngine(), { registerAgent: false });
    const sent: Uint8Array[] = [];
    (rpc as unknown as { respond: (r: ReceivedMad, m: Uint8Array) => void }).respond = (_r, m) => void sent.push(m);
    server.receive({ data: encodeSaMad({ header: { method: Method.Get, attrId: SaAttr.NodeRecord } }), addr: { lid: 5, qpn: 1 }, status: 0 });
    expect(sent.length).toBe(0);
    clock.advance(0);
    expect(sent.length).toBe(1); // answered BUSY: no context yet
  });
});
