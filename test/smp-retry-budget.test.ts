/** One retry layer for the sweeps' SMPs (issue #31): RetryingSmp over MadRpc makes at most
 * 1 + rounds tries of an SMP in all, whatever MadRpc's own `retries` (MadRpc's tries used to nest
 * inside its rounds: 4 × 4 = 16 tries). Counted on the wire: MadRpc's `sent`, over the in-process
 * fabric with the SM's link dropping everything. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { MadTimeoutError } from '../src/rpc/errors.js';
import { NodeType, SmpAttr } from '../src/wire/mad.js';
import { RetryingSmp, DEFAULT_SMP_RETRY } from '../src/sm/retry.js';
import { smpClientOf, type SmpSetReq } from '../src/sm/smp-client.js';
import { drive } from './helpers/drive.js';
import { smRig } from './helpers/sm-rig.js';

/** The SM on a host whose only link drops every MAD, MadRpc with 3 retries of its own. */
function deadLink(): ReturnType<typeof smRig> {
  const f = loadFabricSpec('gen:fattree2:leaves=2,spines=1,hosts=1');
  const at = f.nodes.findIndex((n) => n.type !== NodeType.Switch);
  const r = smRig(f, { attach: at, rpc: { retries: 3, timeoutMs: 20 } });
  r.sim.setLinkFaults(at, 1, { dropRate: 1 });
  return r;
}

describe('the sweeps\' SMPs have one retry budget', () => {
  it('a Get that is never answered is sent 1 + rounds times in all (MadRpc retries none of them)', async () => {
    const r = deadLink();
    const smp = new RetryingSmp(smpClientOf(r.rpc), r.clock, { rounds: 2, backoffMs: 5 });
    const s0 = r.rpc.stats.sent;
    await expect(drive(r.clock, smp.getDr([1], SmpAttr.NodeInfo, 0))).rejects.toBeInstanceOf(MadTimeoutError);
    expect(r.rpc.stats.sent - s0).toBe(3);
    expect(r.rpc.stats.retries).toBe(0);
    expect(smp.failures).toEqual({ timeout: 1, status: 0 });
  });

  it('a Set through the callback slot: 1 + rounds Sets, then the Get that may find it done, 1 + rounds Gets', async () => {
    const r = deadLink();
    const smp = new RetryingSmp(smpClientOf(r.rpc), r.clock, { rounds: 2, backoffMs: 5 });
    const s0 = r.rpc.stats.sent;
    const req: SmpSetReq = { path: [1], attr: SmpAttr.PortInfo, mod: 1, data: new Uint8Array(64) };
    const failed = new Promise<Error>((resolve, reject) => smp.setDrTo(req, { smpOk: () => reject(new Error('answered')), smpFailed: (_, e) => resolve(e) }));
    expect(await drive(r.clock, failed)).toBeInstanceOf(MadTimeoutError);
    expect(r.rpc.stats.sent - s0).toBe(6);
    expect(r.rpc.stats.retries).toBe(0);
  });

  it('a Get through the callback slot: 1 + rounds tries, then the caller\'s sink told once', async () => {
    const r = deadLink();
    const smp = new RetryingSmp(smpClientOf(r.rpc), r.clock, { rounds: 2, backoffMs: 5 });
    const s0 = r.rpc.stats.sent;
    let told = 0;
    const failed = new Promise<Error>((resolve, reject) =>
      smp.getDrTo({ path: [1], attr: SmpAttr.NodeInfo, mod: 0 }, {
        smpOk: () => reject(new Error('answered')),
        smpFailed: (_, e) => {
          told++;
          resolve(e);
        },
      }),
    );
    expect(await drive(r.clock, failed)).toBeInstanceOf(MadTimeoutError);
    expect(told).toBe(1);
    expect(r.rpc.stats.sent - s0).toBe(3);
    expect(r.rpc.stats.retries).toBe(0);
    expect(smp.failures).toEqual({ timeout: 1, status: 0 });
  });

  it('by default an SMP gets DEFAULT_SMP_RETRY.rounds + 1 tries, fewer than the 16 of the nested layers', async () => {
    const r = deadLink();
    const smp = new RetryingSmp(smpClientOf(r.rpc), r.clock);
    const s0 = r.rpc.stats.sent;
    await expect(drive(r.clock, smp.getLid(5, SmpAttr.NodeInfo, 0))).rejects.toBeInstanceOf(MadTimeoutError);
    expect(r.rpc.stats.sent - s0).toBe(DEFAULT_SMP_RETRY.rounds + 1);
    expect(DEFAULT_SMP_RETRY.rounds + 1).toBeLessThan(16);
  });

  it('with an adaptive timeout, each retry round waits longer (backed off as MadRpc\'s own retries): an SMA slower than the RTO is read, and one that never answers is given up in about OpenSM\'s time', async () => {
    // The SM on a host of a leaf with two more hosts; MadRpc's timeout adaptive (as on a device).
    const f = loadFabricSpec('gen:fattree2:leaves=1,spines=1,hosts=3');
    const at = f.nodes.findIndex((n) => n.type !== NodeType.Switch);
    const r = smRig(f, { attach: at, rpc: { adaptiveTimeout: true, timeoutMs: 200, retries: 0 } });
    const leaf = f.nodes[at]!.ports[1]!.peer!.node;
    const hostPorts = f.nodes[leaf]!.ports.flatMap((p, i) => (p?.peer && p.peer.node !== at && f.nodes[p.peer.node]!.type !== NodeType.Switch ? [i] : []));
    const [slow, dead] = hostPorts;
    const smp = new RetryingSmp(smpClientOf(r.rpc), r.clock);
    // The leaf answers at once: the RTO falls to its floor.
    for (let i = 0; i < 40; i++) await drive(r.clock, smp.getDr([1], SmpAttr.NodeInfo, 0));
    expect(r.rpc.rto!.rto).toBe(r.rpc.rto!.minMs);
    // One host answers 30 ms late (15 ms each way on its cable): more than the RTO, less than 8 RTOs.
    r.sim.setLinkFaults(leaf, slow!, { delayMs: 15 });
    const sent0 = r.rpc.stats.sent;
    const ni = await drive(r.clock, smp.getDr([1, slow!], SmpAttr.NodeInfo, 0));
    expect(ni.length).toBe(64);
    expect(r.rpc.stats.sent - sent0).toBeGreaterThan(1); // the first tries timed out
    expect(smp.recovered).toBe(1);
    // One host never answers (the RTO back at its floor): all 1 + rounds tries, in ~0.9 s
    // (10 + 20 + 40 + 9 x 80 ms, and the pauses), where the rounds' tries at the RTO took ~0.2 s.
    for (let i = 0; i < 80; i++) await drive(r.clock, smp.getDr([1], SmpAttr.NodeInfo, 0));
    expect(r.rpc.rto!.rto).toBe(r.rpc.rto!.minMs);
    r.sim.setLinkFaults(leaf, dead!, { dropRate: 1 });
    const t0 = r.clock.now();
    const sent1 = r.rpc.stats.sent;
    await expect(drive(r.clock, smp.getDr([1, dead!], SmpAttr.NodeInfo, 0))).rejects.toBeInstanceOf(MadTimeoutError);
    expect(r.rpc.stats.sent - sent1).toBe(DEFAULT_SMP_RETRY.rounds + 1);
    const took = r.clock.now() - t0;
    expect(took).toBeGreaterThan(800);
    expect(took).toBeLessThan(1200);
  });
});
