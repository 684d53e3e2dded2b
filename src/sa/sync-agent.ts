/** The vendor MADs that carry SA state from a master to its standbys (sa/sync.ts): a standby
 * sends a Get with the sequence number it has; the master answers with the changes since, in an
 * RMPP transfer when they do not fit one MAD. Class 0x31 (vendor range 2, the OpenFabrics OUI
 * 0x001405, as libibmad's vendor MADs use), attribute 0xff10.
 *
 * Request data (at byte 40): SM_Key (8), the standby's port GUID (8), its sequence number (8).
 * The master answers only a requester whose SM_Key is its own; any other gets status
 * 0x001c (invalid field) and nothing of the state. */
import { MadHeaderView, Method, MAD_SIZE } from '../wire/mad.js';
import { MadStatus } from '../wire/mad.js';
import type { MadRpc } from '../rpc/madrpc.js';
import type { ReceivedMad } from '../transport/types.js';
import { GSI_QKEY } from '../wire/mad.js';
import { decodeSyncUpdate, encodeSyncUpdate, type SyncMirror, type SyncSource, type SyncUpdate } from './sync.js';
import { MadStatusError } from '../rpc/errors.js';

export const SYNC_CLASS = 0x31;
/** A master whose SA serves pulls says so with a ServiceRecord of this ServiceID at its port GID
 * ("IBSM" in the low bytes). A standby asks for it through the standard SA before it sends the
 * vendor MAD: a vendor MAD toward an SM that does not know the class (OpenSM) is at best
 * dropped, and under umad2sim it kills the receiving process. */
export const SYNC_SERVICE_ID = 0x1000_0000_4942_534dn;
export const SYNC_SERVICE_NAME = 'ibsm SA state sync';
export const SYNC_CLASS_VERSION = 1;
export const SYNC_OUI = 0x001405;
export const SYNC_ATTR = 0xff10;
/** MAD header (24), RMPP header (12), reserved (1), OUI (3). */
const DATA_OFFSET = 40;

function header(method: number): Uint8Array {
  const b = new Uint8Array(MAD_SIZE);
  const h = MadHeaderView.over(b);
  h.baseVersion = 1;
  h.mgmtClass = SYNC_CLASS;
  h.classVersion = SYNC_CLASS_VERSION;
  h.method = method;
  h.attrId = SYNC_ATTR;
  b[37] = (SYNC_OUI >> 16) & 0xff;
  b[38] = (SYNC_OUI >> 8) & 0xff;
  b[39] = SYNC_OUI & 0xff;
  return b;
}

/** Register the sync class on this port (client and server of Get). Returns false when the
 * transport refuses it (e.g. no vendor-class support): this SM then runs without SA sync. */
export function registerSync(rpc: MadRpc): boolean {
  try {
    rpc.register(SYNC_CLASS, SYNC_CLASS_VERSION, { methods: [Method.Get], oui: SYNC_OUI });
    return true;
  } catch {
    return false;
  }
}

export interface SyncServerOptions {
  smKey: bigint;
  /** Only a master answers. */
  active(): boolean;
  /** Refresh the source from the SA's current state (called before every answer). */
  refresh(): void;
  onError?(e: unknown, m: ReceivedMad): void;
}

/** The master's side: answer pulls. Returns the unsubscribe function. */
export function serveSync(rpc: MadRpc, source: SyncSource, o: SyncServerOptions): () => void {
  return rpc.onUnsolicited(
    SYNC_CLASS,
    (m) => {
      if (!o.active() || m.data.length < DATA_OFFSET + 24) return;
      const dv = new DataView(m.data.buffer, m.data.byteOffset + DATA_OFFSET, 24);
      const key = dv.getBigUint64(0);
      const resp = header(Method.GetResp);
      if (key !== o.smKey) {
        MadHeaderView.over(resp).status = MadStatus.InvalidField;
        rpc.respond(m, resp);
        return;
      }
      o.refresh();
      const u = source.pull(dv.getBigUint64(8), dv.getBigUint64(16), rpc.clock.now());
      rpc.respondRmpp(m, resp.subarray(0, DATA_OFFSET), encodeSyncUpdate(u)).catch((e: unknown) => o.onError?.(e, m));
    },
    { method: Method.Get, attrId: SYNC_ATTR },
  );
}

/** The standby's side: pull from the master at `lid` and apply it to `mirror`. */
export async function pullSync(rpc: MadRpc, lid: number, smKey: bigint, guid: bigint, mirror: SyncMirror): Promise<SyncUpdate> {
  const req = header(Method.Get);
  const dv = new DataView(req.buffer, DATA_OFFSET, 24);
  dv.setBigUint64(0, smKey);
  dv.setBigUint64(8, guid);
  dv.setBigUint64(16, mirror.seq);
  const r = await rpc.request(req, { lid, qpn: 1, qkey: GSI_QKEY }, { retries: 1 });
  const st = MadHeaderView.over(r.data).status;
  if (st !== 0) throw new MadStatusError({ mgmtClass: SYNC_CLASS, method: Method.Get, attrId: SYNC_ATTR, attrMod: 0, destination: `LID ${lid}` }, st, r.data, `the master refused the SA state (MAD status 0x${st.toString(16).padStart(4, '0')}): its SM_Key differs (give every SM the same SM_Key)`);
  const u = decodeSyncUpdate(r.data.subarray(DATA_OFFSET));
  mirror.apply(u);
  return u;
}
