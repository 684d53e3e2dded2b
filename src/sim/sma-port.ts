/** SMA attributes of ports: PortInfo (with the port state machine behind its Set), P_Key table,
 * GUIDInfo, SLtoVL mapping and VL arbitration tables. */
import { PhysPortState, PortState, SmpAttr } from '../wire/mad.js';
import {
  GUIDInfo,
  GUID_BLOCK_SIZE,
  PKEY_BLOCK_SIZE,
  PKeyTable,
  PortInfo,
  SLtoVLMappingTable,
  VLArbitrationTable,
} from '../wire/sma.js';
import { decodeGuidInfoMod, decodePkeyBlockMod, decodeSl2vlMod, decodeVlArbMod } from '../wire/modifiers.js';
import { managementPort, type SimPort } from './node.js';
import { linkIsUp, refreshLink, retrain, setLogical, type PortChange } from './link.js';
import { invalid, isPort, portByMod, range, reqData, writeData, type AttrCtx, type AttrHandlers } from './sma-attr.js';

export const PORT_HANDLERS: AttrHandlers = {
  [SmpAttr.GUIDInfo]: (c) => {
    const p = c.mp;
    const { block } = decodeGuidInfoMod(c.mod);
    if (c.mod > 0xff || block * GUID_BLOCK_SIZE >= p.guids.length) invalid();
    if (c.set) {
      const v = reqData(c, GUIDInfo);
      for (let i = 0; i < GUID_BLOCK_SIZE; i++) {
        const idx = block * GUID_BLOCK_SIZE + i;
        if (idx === 0 || idx >= p.guids.length) continue; // GUID 0 is the read-only port GUID
        p.guids[idx] = v.guids[i]!;
      }
    }
    const guids = Array.from({ length: GUID_BLOCK_SIZE }, (_, i) => p.guids[block * GUID_BLOCK_SIZE + i] ?? 0n);
    writeData(c.resp, GUIDInfo, { guids });
  },
  [SmpAttr.PortInfo]: (c) => {
    if (c.mod > 0xff) invalid();
    const p = portByMod(c, c.mod, false);
    if (c.set) setPortInfo(c, p);
    writeData(c.resp, PortInfo, portInfoValue(p, c.inPort, c.keyMatches || c.mp.info.mkeyProtectBits !== 1));
  },
  [SmpAttr.PKeyTable]: (c) => {
    const { block, port } = decodePkeyBlockMod(c.mod);
    const p = c.node.isSwitch ? portByMod(c, port, false) : (c.node.ports[c.inPort] ?? invalid());
    if (block * PKEY_BLOCK_SIZE >= p.pkeys.length) invalid();
    if (c.set) {
      const v = reqData(c, PKeyTable);
      for (let i = 0; i < PKEY_BLOCK_SIZE && block * PKEY_BLOCK_SIZE + i < p.pkeys.length; i++) p.pkeys[block * PKEY_BLOCK_SIZE + i] = v.pkeys[i]!;
    }
    const pkeys = Array.from({ length: PKEY_BLOCK_SIZE }, (_, i) => p.pkeys[block * PKEY_BLOCK_SIZE + i] ?? 0);
    writeData(c.resp, PKeyTable, { pkeys });
  },
  [SmpAttr.SLtoVLMappingTable]: (c) => {
    const m = decodeSl2vlMod(c.mod);
    let out: SimPort;
    let inPorts: number[];
    if (c.node.isSwitch) {
      if (m.outPort > c.node.numPorts || m.inPort > c.node.numPorts) invalid();
      out = c.node.ports[m.outPort] ?? invalid();
      inPorts = [m.inPort];
      if (c.set && m.allInputPorts) inPorts = range(c.node.numPorts + 1);
    } else {
      out = c.node.ports[c.inPort] ?? invalid();
      inPorts = [0];
    }
    if (c.set) {
      const v = reqData(c, SLtoVLMappingTable);
      const outs = c.node.isSwitch && m.allOutputPorts ? range(c.node.numPorts + 1).map((i) => c.node.ports[i]).filter(isPort) : [out];
      for (const o of outs) for (const ip of inPorts) o.sl2vl.set(ip, v.vls.slice());
    }
    writeData(c.resp, SLtoVLMappingTable, { vls: out.sl2vl.get(inPorts[0]!) ?? new Array<number>(16).fill(0) });
  },
  [SmpAttr.VLArbitrationTable]: (c) => {
    const { port, block } = decodeVlArbMod(c.mod);
    const p = c.node.isSwitch ? portByMod(c, port, false) : (c.node.ports[c.inPort] ?? invalid());
    if (block < 1 || block > 4) invalid();
    const cap = block <= 2 ? p.info.vlArbitrationLowCap : p.info.vlArbitrationHighCap;
    if ((block - 1) % 2 === 1 ? cap <= 32 : cap === 0) invalid();
    if (c.set) p.vlarb[block - 1] = reqData(c, VLArbitrationTable).entries;
    writeData(c.resp, VLArbitrationTable, { entries: p.vlarb[block - 1] ?? [] });
  },
};

/** The PortInfo a Get returns: LocalPortNum is the arrival port; M_Key hidden when protection says so. */
export function portInfoValue(p: SimPort, inPort: number, mkeyVisible: boolean): PortInfo {
  const mp = managementPort(p.node, p.num);
  const v = { ...p.info, localPortNum: inPort };
  if (p.node.isSwitch && p.num !== 0 && mp) {
    // switch external ports report no LID/M_Key of their own; the CapabilityMask is port 0's
    v.capabilityMask = 0;
  }
  if (!mkeyVisible) v.mkey = 0n;
  return v;
}

function setPortInfo(c: AttrCtx, p: SimPort): void {
  const v = reqData(c, PortInfo);
  const cur = p.info;
  const mgmt = !p.node.isSwitch || p.num === 0;
  const physical = !(p.node.isSwitch && p.num === 0 && !p.node.sw?.enhancedPort0);
  // ---- validate everything first: an invalid Set changes nothing ----
  if (mgmt && v.lid >= 0xc000) invalid();
  if (![0, 1, 2, 3, 4].includes(v.portState)) invalid();
  if (v.portState === PortState.Init && cur.portState !== PortState.Init) invalid();
  if (v.portState === PortState.Armed && cur.portState !== PortState.Armed) {
    if (cur.portState !== PortState.Init || !linkIsUp(p)) invalid();
  }
  if (v.portState === PortState.Active && cur.portState !== PortState.Active) {
    if (cur.portState !== PortState.Armed) invalid();
    const q = p.peer;
    if (physical && q && q.info.portState < PortState.Armed) invalid();
  }
  if (![0, 2, 3].includes(v.portPhysicalState)) invalid();
  if (v.linkDownDefaultState > 2) invalid();
  const widthSet = v.linkWidthEnabled === 0xff ? cur.linkWidthSupported : v.linkWidthEnabled;
  if (widthSet & ~cur.linkWidthSupported) invalid();
  const speedSet = v.linkSpeedEnabled === 0xf ? cur.linkSpeedSupported : v.linkSpeedEnabled;
  if (speedSet & ~cur.linkSpeedSupported) invalid();
  if (v.neighborMtu > cur.mtuCap) invalid();
  if (v.operationalVls > cur.vlCap) invalid();
  // ---- apply ----
  if (mgmt) {
    cur.mkey = v.mkey;
    cur.gidPrefix = v.gidPrefix;
    cur.lid = v.lid;
    cur.masterSmLid = v.masterSmLid;
    cur.mkeyLeasePeriod = v.mkeyLeasePeriod;
    cur.mkeyProtectBits = v.mkeyProtectBits;
    cur.lmc = v.lmc;
    cur.masterSmSl = v.masterSmSl;
    cur.subnetTimeout = v.subnetTimeout;
    cur.mkeyViolations = v.mkeyViolations;
    if (v.clientReregister && !p.node.isSwitch) {
      p.stats.clientReregisters++;
      c.host.clientReregister?.(p);
    }
  }
  if (widthSet) cur.linkWidthEnabled = widthSet;
  if (speedSet) cur.linkSpeedEnabled = speedSet;
  if (v.linkSpeedExtEnabled) cur.linkSpeedExtEnabled = v.linkSpeedExtEnabled === 0x1f ? cur.linkSpeedExtSupported : v.linkSpeedExtEnabled;
  if (v.linkDownDefaultState) cur.linkDownDefaultState = v.linkDownDefaultState;
  if (v.neighborMtu) cur.neighborMtu = v.neighborMtu;
  if (v.operationalVls) cur.operationalVls = v.operationalVls;
  cur.vlHighLimit = v.vlHighLimit;
  cur.hoqLife = v.hoqLife;
  cur.vlStallCount = v.vlStallCount;
  cur.initType = v.initType;
  cur.partitionEnforcementInbound = v.partitionEnforcementInbound;
  cur.partitionEnforcementOutbound = v.partitionEnforcementOutbound;
  cur.filterRawInbound = v.filterRawInbound;
  cur.filterRawOutbound = v.filterRawOutbound;
  cur.pkeyViolations = v.pkeyViolations;
  cur.qkeyViolations = v.qkeyViolations;
  cur.localPhyErrors = v.localPhyErrors;
  cur.overrunErrors = v.overrunErrors;
  cur.multicastPkeyTrapSuppressionEnabled = v.multicastPkeyTrapSuppressionEnabled;

  const changes: PortChange[] = [];
  if (physical && v.portPhysicalState === PhysPortState.Disabled && !p.disabled) {
    p.disabled = true;
    refreshLink(p, changes);
  } else if (physical && v.portPhysicalState === PhysPortState.Polling && p.disabled) {
    p.disabled = false;
    refreshLink(p, changes);
  }
  if (v.portState === PortState.Down) {
    if (physical) retrain(p, changes);
    else setLogical(p, PortState.Init, changes);
  } else if ((v.portState === PortState.Armed || v.portState === PortState.Active) && !p.stuckInit) {
    setLogical(p, v.portState, changes);
  }
  if (changes.length) c.host.portsChanged(changes, c.node);
}
