/** Opening the SA client (sa/client.ts `SaClient`) for programs: record queries, multicast
 * join/leave, service register/delete and InformInfo subscriptions with the Reports delivered as
 * events, against ibsm's SA (on the simulated fabric of an `IbsmSm`) or any SA reached through
 * libibumad (OpenSM's included). */
export { SaClient, gidOf, type SaClientEvents, type SaClientOptions } from '../sa/client.js';
import { MgmtClass, Method, NodeType } from '../wire/mad.js';
import { SA_CLASS_VERSION } from '../wire/sa.js';
import { MadRpc } from '../rpc/madrpc.js';
import { SaClient } from '../sa/client.js';
import { parseNodeRef, openBackend, type Backend } from './backend.js';
import type { IbsmSm } from './sm.js';
import { localSmOn } from './local-sms.js';
import { SubnetNotUpError } from '../util/errors.js';
import { SimFabricError } from '../sim/fabric-types.js';

export interface OpenSaClientOptions {
  /** Query the SA of this SM: on its simulated fabric a client is attached to another CA port; on
   * a device the client shares the SM's port and MadRpc (its requests go to the SM's own LID). */
  sm?: IbsmSm;
  /** With `sm`: where to attach (node index, GUID or description); default the first other CA. */
  attach?: string;
  /** Otherwise, through libibumad (real HCA, or ibsim under umad2sim). */
  umad?: boolean;
  ca?: string;
  port?: number;
  guid?: bigint;
  /** The SA's LID (default: the SM LID in the local PortInfo). */
  saLid?: number;
  /** SM_Key for trusted requests. */
  smKey?: bigint;
}

/** A client on the SA of `o.sm` (simulated fabric) or through libibumad. On a device, a client of
 * this process's own SM (`{ sm }`, or `{ umad: true }` on the port an SM of this process runs on)
 * shares the SM's MadRpc: its requests go to the SM's LID over the SM's port and come back to it
 * (a second SA agent on that port would never see its answers: the SM's server agent has the
 * class). Such a client receives no Reports (the SM's agent does not take that method). */
export async function openSaClient(o: OpenSaClientOptions): Promise<SaClient> {
  if (o.sm && !o.sm.sim) {
    const snap = o.sm.snapshot;
    if (!snap) throw new SubnetNotUpError('openSaClient({ sm }): the subnet is not up yet (await sm.start())');
    return sharedClient(o.sm.backend.rpc, o.saLid ?? snap.smLid, o.smKey);
  }
  if (o.sm) {
    const sim = o.sm.sim!;
    const snap = o.sm.snapshot;
    if (!snap) throw new SubnetNotUpError('openSaClient({ sm }): the subnet is not up yet (await sm.start())');
    const smNode = snap.discovery.smNode;
    const smGuid = snap.fabric.nodes[smNode]!.guid;
    const at = o.attach !== undefined ? parseNodeRef(o.attach) : sim.nodes.findIndex((n) => n.type !== NodeType.Switch && n.guid !== smGuid);
    if (at === -1) throw new SimFabricError('the simulated fabric has no other CA to attach the SA client to; name one with attach');
    const ep = sim.attach(at);
    ep.register(MgmtClass.SubnDirected, 1);
    ep.register(MgmtClass.SubnAdm, SA_CLASS_VERSION, { methods: [Method.Report] });
    const rpc = new MadRpc(ep, o.sm.backend.clock);
    const onClose = async (): Promise<void> => {
      rpc.close();
      await ep.close();
    };
    return new SaClient(rpc, { saLid: o.saLid ?? snap.smLid, smKey: o.smKey, reports: true, onClose });
  }
  const local = (o.umad ?? true) ? localSmOn({ ca: o.ca, port: o.port, guid: o.guid }) : undefined;
  if (local) {
    const saLid = o.saLid ?? local.saLid();
    if (saLid === undefined) throw new SubnetNotUpError('openSaClient: the SM of this process on that port has no subnet up yet (await sm.start())');
    return sharedClient(local.rpc, saLid, o.smKey);
  }
  const be: Backend = await openBackend({ umad: o.umad ?? true, ca: o.ca, port: o.port, guid: o.guid, sa: true, reports: true });
  try {
    return await SaClient.locate(be.rpc, { saLid: o.saLid, smKey: o.smKey, reports: true, onClose: () => be.close() });
  } catch (e) {
    await be.close();
    throw e;
  }
}

/** A client on the MadRpc of an SM of this process: closing it leaves the SM's port open. */
function sharedClient(rpc: MadRpc, saLid: number, smKey?: bigint): SaClient {
  return new SaClient(rpc, { saLid, smKey, reports: true });
}
