/** How `ibsm query` reaches an SA: through libibumad (the SA runs elsewhere: ibsm, OpenSM), or on
 * the in-process fabric, where the subnet is first brought up here (SM + SA at the first node) and
 * the query is sent from a client attached at another port. */
import { MgmtClass, Method, NodeType } from '../wire/mad.js';
import { SA_CLASS_VERSION } from '../wire/sa.js';
import { MadRpc } from '../rpc/madrpc.js';
import { PacedClock } from '../util/paced-clock.js';
import { Logger } from '../util/log.js';
import { loadFabricSpec } from '../model/load.js';
import { SimFabric } from '../sim/fabric.js';
import { smpClientOf } from '../sm/smp-client.js';
import { Subnet } from '../subnet.js';
import { openBackend, parseNodeRef, DEFAULT_SIM_SPEC } from '../api/backend.js';
import type { BackendArgs, QuerySession } from './query.js';
import { UsageError } from '../config/parse.js';
import { SimFabricError } from '../sim/fabric-types.js';

export async function openQuerySession(args: BackendArgs): Promise<QuerySession> {
  const seed = args.seed;
  if (args.umad) {
    if (args.sim !== undefined) throw new UsageError('give either --sim or --umad, not both', 'query');
    const be = await openBackend({ umad: true, ca: args.ca, port: args.caPort, sa: true });
    return { rpc: be.rpc, close: () => be.close() };
  }
  // One time base for the fabric, the SM and the client (util/paced-clock.ts).
  const clock = new PacedClock();
  const fabric = loadFabricSpec(args.sim ?? DEFAULT_SIM_SPEC, { seed });
  const sim = new SimFabric(fabric, { clock, seed });
  const smEp = sim.attach(0);
  smEp.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
  smEp.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
  const smRpc = new MadRpc(smEp, clock, { window: 256, perDestinationWindow: 16 });
  const subnet = new Subnet({
    rpc: smRpc,
    portGuid: smEp.local.portGuid,
    smp: smpClientOf(smRpc),
    clock,
    log: new Logger(undefined, 'warn'),
    routing: ['ftree', 'updn', 'minhop'],
    lmc: 0,
    sweepIntervalMs: 0,
    seed,
  });
  await subnet.start();
  // The client: --attach, else the first CA port that is not the SM's.
  const attach = args.attach;
  const client = attach !== undefined ? parseNodeRef(attach) : sim.nodes.findIndex((n, i) => i !== 0 && n.type !== NodeType.Switch);
  if (client === -1) throw new SimFabricError('the simulated fabric has no CA to send the query from; name a node with --attach');
  const cEp = sim.attach(client);
  cEp.register(MgmtClass.SubnDirected, 1);
  cEp.register(MgmtClass.SubnAdm, SA_CLASS_VERSION);
  const rpc = new MadRpc(cEp, clock);
  return {
    rpc,
    saLid: subnet.sm.current!.smLid,
    async close() {
      rpc.close();
      subnet.stop();
      smRpc.close();
      await cEp.close();
      await smEp.close();
      sim.close();
    },
  };
}
