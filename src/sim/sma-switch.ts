/** SMA attributes of switches: SwitchInfo and the linear, random and multicast forwarding tables. */
import { SMP_DATA_OFFSET, SMP_DATA_SIZE, SmpAttr } from '../wire/mad.js';
import { byteArrayOf } from '../wire/layout.js';
import { LFT_BLOCK_SIZE, LinearForwardingTable, MulticastForwardingTable, RandomForwardingTable, SwitchInfo } from '../wire/sma.js';
import { decodeMftMod } from '../wire/modifiers.js';
import type { SimNode } from './node.js';
import { invalid, reqData, unsupported, writeData, type AttrHandlers } from './sma-attr.js';

const LFT_PORTS = byteArrayOf(LinearForwardingTable, 'ports');
/** The block's port bytes fill the whole data area (they do: 64 of 64): nothing else to clear. */
const LFT_FILLS_DATA = LFT_PORTS.offset === 0 && LFT_PORTS.count === SMP_DATA_SIZE;

export const SWITCH_HANDLERS: AttrHandlers = {
  [SmpAttr.SwitchInfo]: (c) => {
    const sw = c.node.sw ?? unsupported();
    if (c.set) {
      const v = reqData(c, SwitchInfo);
      if (v.linearFdbTop >= sw.fwd.caps.linearFdbCap && sw.fwd.caps.linearFdbCap > 0) invalid();
      sw.fwd.linearFdbTop = v.linearFdbTop;
      sw.fwd.reserveLft(Math.floor(v.linearFdbTop / LFT_BLOCK_SIZE));
      sw.fwd.defaultPort = v.defaultPort;
      sw.fwd.defaultMulticastPrimaryPort = v.defaultMulticastPrimaryPort;
      sw.fwd.defaultMulticastNotPrimaryPort = v.defaultMulticastNotPrimaryPort;
      sw.lifeTimeValue = v.lifeTimeValue;
      if (v.portStateChange) sw.portStateChange = 0; // write 1 to clear
      sw.fwd.multicastFdbTop = v.multicastFdbTop;
    }
    writeData(c.resp, SwitchInfo, switchInfoValue(c.node));
  },
  [SmpAttr.LinearForwardingTable]: (c) => {
    const sw = c.node.sw ?? unsupported();
    if (sw.fwd.caps.linearFdbCap === 0) unsupported();
    if (c.mod > 0xffff || c.mod * LFT_BLOCK_SIZE >= sw.fwd.caps.linearFdbCap) invalid();
    // the block's encoded form is its 64 port bytes: copied straight between the MAD and the table
    if (c.set) {
      sw.fwd.writeLftBlock(c.mod, c.req, SMP_DATA_OFFSET + LFT_PORTS.offset);
      // A block wholly below LinearFDBCap holds what was written: the answer (a copy of the
      // request) already carries it, nothing to read back.
      if (LFT_FILLS_DATA && (c.mod + 1) * LFT_BLOCK_SIZE <= sw.fwd.caps.linearFdbCap) return;
    }
    if (!LFT_FILLS_DATA) c.resp.fill(0, SMP_DATA_OFFSET, SMP_DATA_OFFSET + SMP_DATA_SIZE);
    if (!sw.fwd.readLftBlock(c.mod, c.resp, SMP_DATA_OFFSET + LFT_PORTS.offset)) invalid();
  },
  [SmpAttr.RandomForwardingTable]: (c) => {
    const sw = c.node.sw ?? unsupported();
    if (sw.fwd.caps.randomFdbCap === 0) unsupported();
    if (c.mod >= sw.fwd.rftBlockCount) invalid();
    if (c.set) sw.fwd.setRftBlock(c.mod, reqData(c, RandomForwardingTable).entries);
    writeData(c.resp, RandomForwardingTable, { entries: sw.fwd.getRftBlock(c.mod) ?? invalid() });
  },
  [SmpAttr.MulticastForwardingTable]: (c) => {
    const sw = c.node.sw ?? unsupported();
    if (sw.fwd.caps.multicastFdbCap === 0) unsupported();
    const { block, position } = decodeMftMod(c.mod);
    if ((c.mod & 0x0ffffe00) !== 0 || block >= sw.fwd.mftBlockCount || position >= sw.fwd.mftPositionCount) invalid();
    if (c.set) sw.fwd.setMftBlock(block, position, reqData(c, MulticastForwardingTable).portMasks);
    writeData(c.resp, MulticastForwardingTable, { portMasks: sw.fwd.getMftBlock(block, position) ?? invalid() });
  },
};

export function switchInfoValue(n: SimNode): SwitchInfo {
  const sw = n.sw!;
  return {
    linearFdbCap: sw.fwd.caps.linearFdbCap,
    randomFdbCap: sw.fwd.caps.randomFdbCap,
    multicastFdbCap: sw.fwd.caps.multicastFdbCap,
    linearFdbTop: sw.fwd.linearFdbTop,
    defaultPort: sw.fwd.defaultPort,
    defaultMulticastPrimaryPort: sw.fwd.defaultMulticastPrimaryPort,
    defaultMulticastNotPrimaryPort: sw.fwd.defaultMulticastNotPrimaryPort,
    lifeTimeValue: sw.lifeTimeValue,
    portStateChange: sw.portStateChange,
    optimizedSlToVlMappingProgramming: 0,
    lidsPerPort: sw.lidsPerPort,
    partitionEnforcementCap: sw.partitionEnforcementCap,
    inboundEnforcementCap: 1,
    outboundEnforcementCap: 1,
    filterRawInboundCap: 0,
    filterRawOutboundCap: 0,
    enhancedPort0: sw.enhancedPort0 ? 1 : 0,
    multicastFdbTop: sw.fwd.multicastFdbTop,
  };
}
