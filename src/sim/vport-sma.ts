/** The simulated SMA's answers to the SR-IOV vport attributes (wire/vport.ts) of a
 * virtualization-capable CA port (sim/vport.ts). A port without virtualization answers
 * UnsupportedMethodAttr, as a CA without the feature does. */
import { PortState } from '../wire/mad.js';
import { PKEY_BLOCK_SIZE, GUID_BLOCK_SIZE } from '../wire/sma.js';
import {
  decodeVportBlockMod,
  decodeVportIndexMod,
  decodeVportStateMod,
  VirtualizationInfo,
  VNodeDescription,
  VNodeInfo,
  VPORT_STATE_BLOCK_SIZE,
  VPortAttr,
  VPortGUIDInfo,
  VPortInfo,
  VPortPKeyTable,
  VPortState,
} from '../wire/vport.js';
import { invalid, reqData, unsupported, writeData, type AttrCtx, type AttrHandlers } from './sma-attr.js';
import type { SimVirt, SimVPort } from './vport.js';

function virtOf(c: AttrCtx): SimVirt {
  if (c.node.isSwitch) unsupported();
  return c.mp.virt ?? unsupported();
}
function vportOf(virt: SimVirt, index: number): SimVPort {
  return virt.vports.get(index) ?? invalid();
}

/** A Set of VPortInfo: the SM writes state, ClientReregister and (LidRequired vports) the LID;
 * GUID, LidRequired and LidByVPortIndex belong to the hypervisor. */
function setVPortInfo(c: AttrCtx, virt: SimVirt, v: SimVPort): void {
  const w = reqData(c, VPortInfo);
  if (v.lidRequired) virt.setLid(v, w.vportLid);
  if (w.clientReregister) v.clientReregisters++; // the vport's clients re-register (the bit reads 0 again)
  const to = w.vportState;
  if (to === PortState.Down) v.state = PortState.Init; // an SM takes a vport back to Init
  else if (to === PortState.Armed || to === PortState.Active) {
    if (v.state === PortState.Down) invalid();
    v.state = to;
  } else if (to !== 0) invalid();
}

function writeVPortInfo(c: AttrCtx, v: SimVPort): void {
  writeData(c.resp, VPortInfo, {
    vportState: v.state,
    clientReregister: 0,
    lidRequired: v.lidRequired ? 1 : 0,
    guidCap: v.guids.length,
    capabilityMask: 0,
    vportLid: v.lid,
    lidByVPortIndex: v.lidByVPortIndex,
    portGuid: v.guid,
    profile: 0n,
  });
}

export const VPORT_HANDLERS: AttrHandlers = {
  [VPortAttr.VirtualizationInfo]: (c) => {
    const virt = virtOf(c);
    if (c.set) {
      const w = reqData(c, VirtualizationInfo);
      virt.enabled = w.virtualizationEnable === 1;
      if (w.vportStateChange) virt.vportStateChange = false; // the SM acknowledges by writing 1
    }
    writeData(c.resp, VirtualizationInfo, {
      vportCap: virt.vportCap,
      vportIndexTop: virt.indexTop,
      virtualizationEnable: virt.enabled ? 1 : 0,
      vClientReregister: 0,
      vportStateChange: virt.vportStateChange ? 1 : 0,
      revision: 1,
      capabilityMask: 0,
    });
  },
  [VPortAttr.VPortInfo]: (c) => {
    const virt = virtOf(c);
    const v = vportOf(virt, decodeVportIndexMod(c.mod).index);
    if (c.set) setVPortInfo(c, virt, v);
    writeVPortInfo(c, v);
  },
  [VPortAttr.VPortState]: (c) => {
    const virt = virtOf(c);
    if (c.set) unsupported();
    const { block } = decodeVportStateMod(c.mod);
    if (block * VPORT_STATE_BLOCK_SIZE > virt.vportCap) invalid();
    const states = new Array<number>(VPORT_STATE_BLOCK_SIZE).fill(0);
    for (let i = 0; i < VPORT_STATE_BLOCK_SIZE; i++) states[i] = virt.vports.get(block * VPORT_STATE_BLOCK_SIZE + i)?.state ?? 0;
    writeData(c.resp, VPortState, { states });
  },
  [VPortAttr.VNodeInfo]: (c) => {
    const virt = virtOf(c);
    if (c.set) unsupported();
    const v = vportOf(virt, decodeVportIndexMod(c.mod).index);
    writeData(c.resp, VNodeInfo, { numPorts: 1, vnodeGuid: v.vnodeGuid, partitionCap: v.pkeys.length, localPortNum: 1 });
  },
  [VPortAttr.VNodeDescription]: (c) => {
    const virt = virtOf(c);
    if (c.set) unsupported();
    const v = vportOf(virt, decodeVportIndexMod(c.mod).index);
    writeData(c.resp, VNodeDescription, { description: v.desc.slice(0, 64) });
  },
  [VPortAttr.VPortGUIDInfo]: (c) => {
    const virt = virtOf(c);
    const { index, block } = decodeVportBlockMod(c.mod);
    const v = vportOf(virt, index);
    if (block * GUID_BLOCK_SIZE >= v.guids.length) invalid();
    if (c.set) {
      const w = reqData(c, VPortGUIDInfo);
      for (let i = 0; i < GUID_BLOCK_SIZE; i++) if (block + i > 0) v.guids[block * GUID_BLOCK_SIZE + i] = w.guids[i]!; // GUID 0 is read-only
    }
    writeData(c.resp, VPortGUIDInfo, { guids: v.guids.slice(block * GUID_BLOCK_SIZE, (block + 1) * GUID_BLOCK_SIZE) });
  },
  [VPortAttr.VPortPKeyTable]: (c) => {
    const virt = virtOf(c);
    const { index, block } = decodeVportBlockMod(c.mod);
    const v = vportOf(virt, index);
    if (block * PKEY_BLOCK_SIZE >= v.pkeys.length) invalid();
    if (c.set) {
      const w = reqData(c, VPortPKeyTable);
      for (let i = 0; i < PKEY_BLOCK_SIZE && block * PKEY_BLOCK_SIZE + i < v.pkeys.length; i++) v.pkeys[block * PKEY_BLOCK_SIZE + i] = w.pkeys[i]!;
    }
    writeData(c.resp, VPortPKeyTable, { pkeys: Array.from(v.pkeys.subarray(block * PKEY_BLOCK_SIZE, (block + 1) * PKEY_BLOCK_SIZE)) });
  },
};
