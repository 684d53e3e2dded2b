/** Light sweeps that cost what OpenSM's cost (issue #32), on the in-process fabric and the virtual
 * clock: an idle periodic light sweep sends S SMPs (S the switches, OpenSM's light sweep), half of
 * them SwitchInfo of the next half of the switches and the rest PortInfo of the next CA ports: every
 * switch read at least once every 2 sweeps, every CA port once every B = caBound(S, C) sweeps. With
 * every trap lost, what the traps would have said is still found: a switch port's change within 2
 * sweeps (PortStateChange), a CA port gone to INIT and a new SM port within B sweeps; where traps
 * arrive a new SM port is found at once (trap 144). The simulated fabric is the witness (port
 * states, LIDs, what the SM reads). */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType, PortState, SmpAttr, SMP_DATA_OFFSET } from '../src/wire/mad.js';
import { smpResponse } from '../src/wire/builders.js';
import { SMInfo, SmState } from '../src/wire/sma.js';
import type { SmpClient } from '../src/sm/smp-client.js';
import { caBound, caRounds, caShare, switchShare, SWITCH_ROUNDS } from '../src/sm/light-sweep.js';
import { checkFabric, smRig } from './helpers/sm-rig.js';
import { drive } from './helpers/drive.js';

const SPEC = 'gen:fattree2:leaves=4,spines=2,hosts=6';
const INTERVAL = 5000;
/** The fabric: 6 switches, 24 CA ports; B: the sweeps within which every CA port is read. */
const S = 6;
const C = 24;
const B = caBound(S, C);

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

describe('light sweeps: traps and PortStateChange first, S SMPs a sweep in two rotations', () => {
  it('the budget: S SMPs a sweep, every switch within 2 sweeps, every CA port within ceil(C / floor(S / 2))', () => {
    expect(SWITCH_ROUNDS).toBe(2);
    expect(caRounds(INTERVAL)).toBe(2);
    expect(caRounds(0)).toBe(1); // no periodic sweeps: each light sweep asked for reads everything
    // the benchmark's fabrics (scripts/bench/README.md): 5k and 10k
    expect([switchShare(416), caShare(416), caBound(416, 5120)]).toEqual([208, 208, 25]);
    expect([switchShare(522), caShare(522), caBound(522, 9720)]).toEqual([261, 261, 38]);
    expect([switchShare(911), caShare(911), caBound(911, 20_736)]).toEqual([456, 455, 46]);
    // few switches: at least one CA port a sweep
    expect([switchShare(1), caShare(1), caBound(1, 2)]).toEqual([1, 1, 2]);
    expect([switchShare(0), caShare(0), caBound(0, 2)]).toEqual([0, 1, 2]);
    expect(B).toBe(8);
  });

  it('an idle light sweep sends S SMPs (not S + C): every switch read within 2 sweeps, every CA port within B', async () => {
    const { r, switches, caPorts, gets } = setup();
    expect([switches, caPorts]).toEqual([S, C]);
    await drive(r.clock, r.sm.start());
    const heavy = r.sm.stats.length;
    gets.length = 0;
    await r.clock.advanceAsync(INTERVAL * B + INTERVAL / 2);
    const ls = lights(r);
    expect(r.sm.stats.length - heavy, 'only light sweeps: nothing changed').toBe(ls.length);
    expect(ls.length).toBe(B);
    for (const l of ls) expect(l.smps).toBe(S);
    const swReads = gets.filter((g) => g.attr === SmpAttr.SwitchInfo);
    expect(swReads).toHaveLength(switchShare(S) * B);
    // any two sweeps in a row read every switch
    for (let k = 0; k + 2 <= B; k++) expect(new Set(swReads.slice(k * 3, k * 3 + 6).map((g) => g.path)).size, `sweeps ${k + 1} and ${k + 2}`).toBe(S);
    const caReads = gets.filter((g) => g.attr === SmpAttr.PortInfo);
    expect(caReads).toHaveLength(caShare(S) * B);
    expect(new Set(caReads.map((g) => `${g.path}/${g.port}`)).size, 'every CA port read within B sweeps').toBe(C);
    // A light sweep asked for (an operator's) reads every switch and every CA port.
    gets.length = 0;
    await drive(r.clock, r.sm.sweep('light'));
    expect(gets.filter((g) => g.attr === SmpAttr.SwitchInfo)).toHaveLength(S);
    expect(gets.filter((g) => g.attr === SmpAttr.PortInfo)).toHaveLength(C);
    r.sm.stop();
  });

  it('every trap lost: a switch port that went down is found within 2 sweeps (PortStateChange) and routed around', async () => {
    const { r, topo } = setup({ traps: false });
    await drive(r.clock, r.sm.start());
    const sw = topo.nodes.flatMap((n, i) => (n.type === NodeType.Switch ? [i] : []));
    // A host's cable at each leaf in turn (only the leaf flags it; half the switches wait for the
    // second sweep): the link is gone from the view within 2 sweeps, and back once plugged in.
    for (const leaf of sw.filter((i) => topo.nodes[i]!.ports.some((p) => p?.peer && topo.nodes[p.peer.node]!.type !== NodeType.Switch))) {
      const up = topo.nodes[leaf]!.ports.findIndex((p) => p?.peer && topo.nodes[p.peer.node]!.type !== NodeType.Switch);
      r.sim.linkDown(leaf, up);
      const guid = topo.nodes[leaf]!.guid;
      const gone = () => r.sm.current!.fabric.nodes.find((n) => n.guid === guid)!.ports[up]!.peer === undefined;
      await r.clock.advanceAsync(2 * INTERVAL + INTERVAL / 2);
      expect(gone(), `the link of switch ${leaf} port ${up} is gone from the view`).toBe(true);
      expect(r.sim.switchInfo(guid).portStateChange, 'the flag cleared').toBe(0);
      checkFabric(r);
      r.sim.linkUp(leaf, up);
      await r.clock.runUntil(() => !gone(), 4 * INTERVAL);
    }
    r.sm.stop();
  });

  it('every trap lost: a CA port that fell back to INIT (no switch flags it) is found and made ACTIVE again within B sweeps', async () => {
    const { r, topo } = setup({ traps: false });
    await drive(r.clock, r.sm.start());
    // The last host: read late in the rotation (the SM's own node is the first).
    const host = topo.nodes.findLastIndex((n) => n.type !== NodeType.Switch);
    r.sim.port(host, 1).info.portState = PortState.Init;
    expect(r.sim.portInfo(host, 1).portState).toBe(PortState.Init);
    await r.clock.runUntil(() => r.sim.portInfo(host, 1).portState === PortState.Active, INTERVAL * (B + 1));
    expect(r.sm.stats.some((s) => s.kind === 'heavy' && s.activated > 0)).toBe(true);
    checkFabric(r);
    r.sm.stop();
  });

  /** A standby SM attached at the last host (its port now advertises IsSM; it answers SMInfo
   * Gets): the time until the master knows it, at most `bound` ms of virtual time. */
  async function newSm(traps: boolean, bound: number): Promise<number> {
    const { r, topo } = setup({ traps });
    await drive(r.clock, r.sm.start());
    const host = topo.nodes.findLastIndex((n) => n.type !== NodeType.Switch);
    const ep = r.sim.attach(host);
    const rpc = new MadRpc(ep, r.clock, { timeoutMs: 50, retries: 2 });
    const self = { guid: ep.local.portGuid, smKey: 0n, actCount: 1, priority: 0, smState: SmState.Standby };
    rpc.onUnsolicited(MgmtClass.SubnDirected, (m) => {
      const resp = smpResponse(m.data, 0);
      SMInfo.encode(self, resp, SMP_DATA_OFFSET);
      rpc.respond(m, resp);
    }, { attrId: SmpAttr.SMInfo });
    const t0 = r.clock.now();
    ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get] });
    await r.clock.runUntil(() => r.sm.knownSms.some((s) => s.guid === self.guid), bound);
    const took = r.clock.now() - t0;
    expect(took).toBeLessThanOrEqual(bound);
    expect(r.sm.knownSms.find((s) => s.guid === self.guid)!.state).toBe(SmState.Standby);
    expect(r.sm.state).toBe('master');
    r.sm.stop();
    rpc.close();
    await ep.close();
    return took;
  }

  it('every trap lost: a new SM port (IsSM, no trap 144) is found within B sweeps and its SMInfo read', async () => {
    // only a light sweep's read can find it: not before the first periodic one
    expect(await newSm(false, INTERVAL * (B + 1))).toBeGreaterThanOrEqual(INTERVAL);
  });

  it('a new SM port is found within two sweep intervals where traps arrive: at once, by its trap 144', async () => {
    // before the first periodic light sweep: only the trap can have told
    expect(await newSm(true, 2 * INTERVAL)).toBeLessThan(INTERVAL);
  });
});
