/** SMA attributes of ports: PortInfo (with the port state machine behind its Set), P_Key table,
 * GUIDInfo, SLtoVL mapping and VL arbitration tables. */
import { PhysPortState, PortState, SMP_DATA_OFFSET, SMP_DATA_SIZE, SmpAttr } from '../wire/mad.js';
import {
  GUIDInfo,
  GUID_BLOCK_SIZE,
  PKEY_BLOCK_SIZE,
  PKeyTable,
  PortInfo,
  SLtoVLMappingTable,
} from '../wire/sma.js';
import { decodeGuidInfoMod, decodePkeyBlockMod, decodePortInfoMod, decodeSl2vlMod, decodeVlArbMod } from '../wire/modifiers.js';
import { PortInfoView, type SimPort } from './node.js';
import { linkIsUp, refreshLink, renegotiate, retrain, setLogical, trainsDifferently, type PortChange } from './link.js';
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
    const { port, smSupportsExtendedSpeeds } = decodePortInfoMod(c.mod);
    if ((c.mod & 0x7fffff00) !== 0 || (smSupportsExtendedSpeeds && c.node.refusesPortInfoBit31)) invalid();
    const p = portByMod(c, port, false);
    // An NDR/XDR generation SMA hides its extended speeds from an SM that does not say it knows them
    const ext = smSupportsExtendedSpeeds || !c.node.extSpeedsNeedSmSupport;
    if (c.set) setPortInfo(c, p, ext);
    writePortInfo(c.resp, p, c.inPort, c.keyMatches || c.mp.info.mkeyProtectBits !== 1, ext);
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
    const n = c.node;
    let out: number;
    let inPort: number;
    if (n.isSwitch) {
      if (m.outPort > n.numPorts || m.inPort > n.numPorts) invalid();
      out = (n.ports[m.outPort] ?? invalid()).num;
      inPort = c.set && m.allInputPorts ? 0 : m.inPort;
    } else {
      out = (n.ports[c.inPort] ?? invalid()).num;
      inPort = 0;
    }
    if (c.set) {
      const v = reqData(c, SLtoVLMappingTable);
      const allIn = n.isSwitch && m.allInputPorts;
      const allOut = n.isSwitch && m.allOutputPorts;
      const outs = allOut ? range(n.numPorts + 1).filter((i) => isPort(n.ports[i])) : [out];
      n.vl.setSl2vl(outs, allIn ? range(n.numPorts + 1) : [inPort], v.vls, allIn && allOut && outs.length === n.numPorts + 1);
    }
    writeData(c.resp, SLtoVLMappingTable, { vls: n.vl.sl2vl(out, inPort) });
  },
  [SmpAttr.VLArbitrationTable]: (c) => {
    const { port, block } = decodeVlArbMod(c.mod);
    const p = c.node.isSwitch ? portByMod(c, port, false) : (c.node.ports[c.inPort] ?? invalid());
    if (block < 1 || block > 4) invalid();
    const cap = block <= 2 ? p.info.vlArbitrationLowCap : p.info.vlArbitrationHighCap;
    if ((block - 1) % 2 === 1 ? cap <= 32 : cap === 0) invalid();
    if (c.set) c.node.vl.writeVlArb(p.num, block, c.req, SMP_DATA_OFFSET);
    c.resp.fill(0, SMP_DATA_OFFSET, SMP_DATA_OFFSET + SMP_DATA_SIZE);
    c.node.vl.readVlArb(p.num, block, c.resp, SMP_DATA_OFFSET);
  },
};

/** Write the PortInfo a Get returns into the data area of `resp`: the port's bytes, LocalPortNum
 * the arrival port, M_Key hidden when protection says so. */
function writePortInfo(resp: Uint8Array, p: SimPort, inPort: number, mkeyVisible: boolean, extendedSpeeds = true): void {
  const st = p.node.store.info;
  const o = p.slot * PortInfo.byteLength;
  for (let i = 0; i < PortInfo.byteLength; i++) resp[SMP_DATA_OFFSET + i] = st[o + i]!;
  const v = PortInfoView.over(resp, SMP_DATA_OFFSET);
  v.localPortNum = inPort;
  // switch external ports report no LID/M_Key of their own; the CapabilityMask is port 0's
  if (p.node.isSwitch && p.num !== 0) v.capabilityMask = 0;
  if (!mkeyVisible) v.mkey = 0n;
  if (!extendedSpeeds) {
    // "extended speeds capability without the actual extended speeds data" (OpenSM issue #38)
    v.linkSpeedExtActive = 0;
    v.linkSpeedExtSupported = 0;
    v.linkSpeedExtEnabled = 0;
    v.linkSpeedExtActive2 = 0;
    v.linkSpeedExtSupported2 = 0;
    v.linkSpeedExtEnabled2 = 0;
  }
}

/** The PortInfo a Get returns: LocalPortNum is the arrival port; M_Key hidden when protection says so. */
export function portInfoValue(p: SimPort, inPort: number, mkeyVisible: boolean): PortInfo {
  const b = new Uint8Array(SMP_DATA_OFFSET + PortInfo.byteLength);
  writePortInfo(b, p, inPort, mkeyVisible);
  return PortInfo.decode(b, SMP_DATA_OFFSET);
}

function setPortInfo(c: AttrCtx, p: SimPort, extendedSpeeds: boolean): void {
  const v = PortInfoView.over(c.req, SMP_DATA_OFFSET);
  const cur = p.info;
  const mgmt = !p.node.isSwitch || p.num === 0;
  const physical = !(p.node.isSwitch && p.num === 0 && !p.node.sw?.enhancedPort0);
  // ---- validate everything first: an invalid Set changes nothing ----
  if (mgmt && v.lid >= 0xc000) invalid();
  if (v.portState > PortState.Active) invalid(); // NoChange .. Active
  if (v.portState === PortState.Init && cur.portState !== PortState.Init) invalid();
  if (v.portState === PortState.Armed && cur.portState !== PortState.Armed) {
    if (cur.portState !== PortState.Init || !linkIsUp(p)) invalid();
  }
  if (v.portState === PortState.Active && cur.portState !== PortState.Active) {
    if (cur.portState !== PortState.Armed) invalid();
    const q = p.peer;
    if (physical && q && q.info.portState < PortState.Armed) invalid();
  }
  const phys = v.portPhysicalState;
  if (phys !== PhysPortState.NoChange && phys !== PhysPortState.Polling && phys !== PhysPortState.Disabled) invalid();
  if (v.linkDownDefaultState > 2) invalid();
  const widthSet = v.linkWidthEnabled === 0xff ? cur.linkWidthSupported : v.linkWidthEnabled;
  if (widthSet & ~cur.linkWidthSupported) invalid();
  const speedSet = v.linkSpeedEnabled === 0xf ? cur.linkSpeedSupported : v.linkSpeedEnabled;
  if (speedSet & ~cur.linkSpeedSupported) invalid();
  const extSet = !extendedSpeeds || v.linkSpeedExtEnabled === 0 ? 0 : v.linkSpeedExtEnabled === 0x1f ? cur.linkSpeedExtSupported : v.linkSpeedExtEnabled;
  if (extSet !== 30 && extSet & ~cur.linkSpeedExtSupported) invalid();
  const ext2Set = !extendedSpeeds || v.linkSpeedExtEnabled2 === 0 ? 0 : v.linkSpeedExtEnabled2 === 7 ? cur.linkSpeedExtSupported2 : v.linkSpeedExtEnabled2;
  if (ext2Set & ~cur.linkSpeedExtSupported2) invalid();
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
      p.clientReregisters++;
      c.host.clientReregister?.(p);
    }
  }
  if (widthSet) cur.linkWidthEnabled = widthSet;
  if (speedSet) cur.linkSpeedEnabled = speedSet;
  if (extSet) cur.linkSpeedExtEnabled = extSet;
  if (ext2Set) cur.linkSpeedExtEnabled2 = ext2Set;
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
  // new enabled widths/speeds: the link runs at the best width and speed both ends now share (as
  // ibsim applies them: at once, both ends, the logical state kept)
  if (physical && !p.disabled && linkIsUp(p) && trainsDifferently(p)) renegotiate(p);
  if (v.portState === PortState.Down) {
    if (physical) retrain(p, changes);
    else setLogical(p, PortState.Init, changes);
  } else if ((v.portState === PortState.Armed || v.portState === PortState.Active) && !p.stuckInit) {
    setLogical(p, v.portState, changes);
  }
  if (changes.length) c.host.portsChanged(changes, c.node);
}
