/** Light sweeps that cost what OpenSM's cost (issue #32), on the in-process fabric and the virtual
 * clock: an idle periodic light sweep reads every switch's SwitchInfo and only a rotating share of
 * the CA ports (S + ceil(C / K) SMPs, not S + C), every CA port at least once every K sweeps; and
 * with every trap lost, what the traps would have said is still found: a switch port's change
 * within one sweep (PortStateChange), a CA port gone to INIT and a new SM port within K sweeps (the
 * rotation). The simulated fabric is the witness (port states, LIDs, what the SM reads). */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType, PortState, SmpAttr, SMP_DATA_OFFSET } from '../src/wire/mad.js';
import { smpResponse } from '../src/wire/builders.js';
import { SMInfo, SmState } from '../src/wire/sma.js';
import type { SmpClient } from '../src/sm/smp-client.js';
import { caRounds, LIGHT_CA_BOUND_MS } from '../src/sm/light-sweep.js';
import { checkFabric, smRig } from './helpers/sm-rig.js';
import { drive } from './helpers/drive.js';

const SPEC = 'gen:fattree2:leaves=4,spines=2,hosts=6';
const INTERVAL = 5000;
/** K at a 5 s interval: every CA port read once a minute. */
const K = 12;

/** Every getDr the SM sends, recorded (attribute, path, port). */
function spying(gets: Array<{ attr: number; path: string; port: number }>) {
  return (s: SmpClient): SmpClient => ({
    getDr: (path, attr, mod = 0, t) => {
      gets.push({ attr, path: path.join(','), port: mod & 0xff });
      return s.getDr(path, attr, mod, t);
    },
    setDr: (...a) => s.setDr(...a),
    setDrTo: s.setDrTo?.bind(s),
    getLid: (...a) => s.getLid(...a),
    setLid: (...a) => s.setLid(...a),
    trap: (...a) => s.trap(...a),
    get sent() {
      return s.sent;
    },
  });
}

function setup(o: { traps?: boolean } = {}) {
  const topo = loadFabricSpec(SPEC);
  const switches = topo.nodes.filter((n) => n.type === NodeType.Switch).length;
  // Cabled CA ports, counted on the fabric as built (not from the SM's view).
  const caPorts = topo.nodes.filter((n) => n.type !== NodeType.Switch).reduce((k, n) => k + n.ports.filter((p) => p?.peer).length, 0);
  const gets: Array<{ attr: number; path: string; port: number }> = [];
  const r = smRig(topo, { sm: { sweepIntervalMs: INTERVAL }, wrapSmp: spying(gets), traps: o.traps });
  return { r, topo, switches, caPorts, gets };
}

const lights = (r: ReturnType<typeof setup>['r']) => r.sm.stats.filter((s) => s.kind === 'light');

describe('light sweeps: traps and PortStateChange first, a bounded rotation of the CA ports', () => {
  it('K comes from the sweep interval so that every CA port is read at least once a minute', () => {
    expect(LIGHT_CA_BOUND_MS).toBe(60_000);
    expect(caRounds(INTERVAL)).toBe(K);
    expect(caRounds(7000)).toBe(8); // 8 x 7 s = 56 s: within the bound
    expect(caRounds(90_000)).toBe(1);
    expect(caRounds(0)).toBe(1); // no periodic sweeps: each light sweep asked for reads them all
  });

  it('an idle light sweep sends S + ceil(C / K) SMPs (not S + C), and K of them read every CA port', async () => {
    const { r, switches, caPorts, gets } = setup();
    await drive(r.clock, r.sm.start());
    const heavy = r.sm.stats.length;
    gets.length = 0;
    await r.clock.advanceAsync(INTERVAL * K + INTERVAL / 2);
    const ls = lights(r);
    expect(r.sm.stats.length - heavy, 'only light sweeps: nothing changed').toBe(ls.length);
    expect(ls.length).toBe(K);
    const share = Math.ceil(caPorts / K);
    expect(share).toBeLessThan(caPorts);
    for (const l of ls) expect(l.smps).toBe(switches + share);
    expect(gets.filter((g) => g.attr === SmpAttr.SwitchInfo)).toHaveLength(switches * K);
    const caReads = gets.filter((g) => g.attr === SmpAttr.PortInfo);
    expect(caReads).toHaveLength(share * K);
    expect(new Set(caReads.map((g) => `${g.path}/${g.port}`)).size, 'every CA port read within K sweeps').toBe(caPorts);
    // A light sweep asked for (an operator's) reads every CA port.
    gets.length = 0;
    await drive(r.clock, r.sm.sweep('light'));
    expect(gets.filter((g) => g.attr === SmpAttr.PortInfo)).toHaveLength(caPorts);
    r.sm.stop();
  });

  it('every trap lost: a switch port that went down is found within one sweep (PortStateChange) and routed around', async () => {
    const { r, topo } = setup({ traps: false });
    await drive(r.clock, r.sm.start());
    const leaf = topo.nodes.findIndex((n) => n.type === NodeType.Switch && n.ports.some((p) => p?.peer && topo.nodes[p.peer.node]!.type !== NodeType.Switch));
    const up = topo.nodes[leaf]!.ports.findIndex((p) => p?.peer && topo.nodes[p.peer.node]!.type === NodeType.Switch);
    r.sim.linkDown(leaf, up);
    await r.clock.advanceAsync(INTERVAL + INTERVAL / 2);
    const guid = topo.nodes[leaf]!.guid;
    expect(r.sm.current!.fabric.nodes.find((n) => n.guid === guid)!.ports[up]!.peer, 'the link is gone from the view').toBeUndefined();
    expect(r.sim.switchInfo(guid).portStateChange, 'the flag cleared').toBe(0);
    checkFabric(r);
    r.sm.stop();
  });

  it('every trap lost: a CA port that fell back to INIT (no switch flags it) is found and made ACTIVE again within K sweeps', async () => {
    const { r, topo } = setup({ traps: false });
    await drive(r.clock, r.sm.start());
    // The last host: read late in the rotation (the SM's own node is the first).
    const host = topo.nodes.findLastIndex((n) => n.type !== NodeType.Switch);
    r.sim.port(host, 1).info.portState = PortState.Init;
    expect(r.sim.portInfo(host, 1).portState).toBe(PortState.Init);
    await r.clock.runUntil(() => r.sim.portInfo(host, 1).portState === PortState.Active, INTERVAL * (K + 1));
    expect(r.sm.stats.some((s) => s.kind === 'heavy' && s.activated > 0)).toBe(true);
    checkFabric(r);
    r.sm.stop();
  });

  it('every trap lost: a new SM port (IsSM, no trap 144) is found within K sweeps and its SMInfo read', async () => {
    const { r, topo } = setup({ traps: false });
    await drive(r.clock, r.sm.start());
    const host = topo.nodes.findLastIndex((n) => n.type !== NodeType.Switch);
    // A standby SM at that host: it answers SMInfo Gets (its port now advertises IsSM).
    const ep = r.sim.attach(host);
    ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get] });
    const rpc = new MadRpc(ep, r.clock, { timeoutMs: 50, retries: 2 });
    const self = { guid: ep.local.portGuid, smKey: 0n, actCount: 1, priority: 0, smState: SmState.Standby };
    rpc.onUnsolicited(MgmtClass.SubnDirected, (m) => {
      const resp = smpResponse(m.data, 0);
      SMInfo.encode(self, resp, SMP_DATA_OFFSET);
      rpc.respond(m, resp);
    }, { attrId: SmpAttr.SMInfo });
    const t0 = r.clock.now();
    await r.clock.runUntil(() => r.sm.knownSms.some((s) => s.guid === self.guid), INTERVAL * (K + 1));
    expect(r.clock.now() - t0).toBeLessThanOrEqual(INTERVAL * (K + 1));
    expect(r.sm.knownSms.find((s) => s.guid === self.guid)!.state).toBe(SmState.Standby);
    expect(r.sm.state).toBe('master');
    r.sm.stop();
    rpc.close();
    await ep.close();
  });
});
