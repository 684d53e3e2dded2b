/** SMInfo between SMs, the I/O the shell does for the controller: find the other SMs of a fabric
 * (every end port whose PortInfo has IsSM), poll a master, send a HANDOVER or ACKNOWLEDGE, and tell
 * a master with trap 144 that this SM stands by. */
import { NodeType, PortState, SmpAttr } from '../wire/mad.js';
import { PortCap, SMInfo } from '../wire/sma.js';
import { encodeNotice, NoticeType, Trap144Change } from '../wire/notice.js';
import type { DiscoveryResult } from '../model/snapshot.js';
import type { RemoteSm } from './controller.js';
import type { SmpClient } from './smp-client.js';
import type { SmpWrite } from './programmed.js';
import { apply, NO_HOOKS } from './apply.js';

/** An end port that advertises an SM: how to reach it. */
export interface SmPort {
  guid: bigint;
  lid: number;
  path: readonly number[];
}

/** The end ports of a sweep's view that advertise IsSM, other than this SM's own. */
export function smPorts(disc: DiscoveryResult): SmPort[] {
  const out: SmPort[] = [];
  disc.fabric.nodes.forEach((n, ni) => {
    const d = disc.nodes[ni]!;
    n.ports.forEach((p, pn) => {
      if (!p) return;
      const sw = n.type === NodeType.Switch;
      if (sw ? pn !== 0 : pn === 0) return;
      if (ni === disc.smNode && pn === disc.smPort) return;
      const pi = d.portInfo[pn];
      const path = sw ? d.path : d.portPaths[pn];
      if (!pi || !path || !(pi.capabilityMask & PortCap.IsSM)) return;
      if (!sw && pi.portState < PortState.Init) return;
      out.push({ guid: p.guid, lid: p.lid ?? pi.lid, path });
    });
  });
  return out;
}

function remoteOf(at: SmPort, data: Uint8Array): RemoteSm {
  const si = SMInfo.decode(data);
  return { guid: si.guid, priority: si.priority, state: si.smState, actCount: si.actCount, smKey: si.smKey, lid: at.lid || undefined, path: at.path };
}

/** SubnGet(SMInfo) at every SM port; the ones that do not answer (an SM that went away) are left out. */
export async function querySms(smp: SmpClient, ports: readonly SmPort[], onError?: (at: SmPort, e: unknown) => void): Promise<RemoteSm[]> {
  const out = await Promise.all(
    ports.map(async (at) => {
      try {
        return remoteOf(at, await smp.getDr(at.path, SmpAttr.SMInfo, 0));
      } catch (e) {
        onError?.(at, e);
        return undefined;
      }
    }),
  );
  return out.filter((r): r is RemoteSm => r !== undefined);
}

/** SubnGet(SMInfo) to one SM, by its DR path when known, else by LID. */
export async function pollSm(smp: SmpClient, to: RemoteSm): Promise<RemoteSm> {
  const data = to.path ? await smp.getDr(to.path, SmpAttr.SMInfo, 0) : await smp.getLid(to.lid!, SmpAttr.SMInfo, 0);
  return remoteOf({ guid: to.guid, lid: to.lid ?? 0, path: to.path ?? [] }, data);
}

/** SubnSet(SMInfo) with a control modifier, carrying this SM's own SMInfo, through the apply
 * step (by DR path when known, else by LID). Rejects with the write's error: the caller (the
 * controller's action) logs and counts it. */
export async function sendSmInfo(smp: SmpClient, to: RemoteSm, control: number, self: SMInfo): Promise<void> {
  const data = SMInfo.encode(self, new Uint8Array(64));
  const w: SmpWrite = { path: to.path ?? [], ...(to.path ? {} : { lid: to.lid! }), attr: SmpAttr.SMInfo, mod: control, data, effect: { kind: 'smInfo', guid: to.guid } };
  const r = await apply(smp, [w], NO_HOOKS, 1);
  if (r.failed[0]) throw r.failed[0].error;
}

/** Trap 144 (local changes: SM priority / IsSM) from this SM's port to the master's LID. */
export async function notifyMaster(smp: SmpClient, to: RemoteSm, ownLid: number, capabilityMask: number): Promise<void> {
  if (!to.lid) return;
  const data = encodeNotice(
    { isGeneric: 1, type: NoticeType.Info, producerType: 1, issuerLid: ownLid, noticeToggle: 0, noticeCount: 0 },
    { trap: 144, value: { lid: ownLid, otherLocalChanges: 0, capabilityMask, changeFlags: Trap144Change.SmPriority, capabilityMask2: 0 } },
    new Uint8Array(64),
  );
  await smp.trap(to.lid, data);
}
