/**
 * The vendor-specific SMP attributes of ibsm's simulated IB router (docs/routers.md). IBA leaves
 * router configuration open; these three attributes are how each subnet's SM fills its part of a
 * router's tables and reads what the router reaches. Attribute IDs are in the vendor range
 * (0xFF00-0xFFFF) of SubnGet/SubnSet; the modifier selects a port or a block.
 *
 * - RouterPortInfo (Get, modifier = port number, 0 = the arrival port): a port's GUID, subnet
 *   prefix (its PortInfo.GidPrefix), LID and state, and the size of its GID→LID table.
 * - RouterLidTable (Get/Set, modifier bits 0-15 = block, bit 31 = last block: the table ends after
 *   it): 4 {GUID, LID, SL} entries per block of the arrival port's table (the subnet that port is in).
 * - RouterPrefixTable (Get, modifier = block): 4 {prefix, hops, egress port} entries per block,
 *   the subnet prefixes the router reaches from the arrival port (its other ports and beyond).
 */
import { array, defineLayout, reserved, struct, u64, uint, type LayoutValue } from './layout.js';

export const RouterAttr = {
  RouterPortInfo: 0xff40,
  RouterLidTable: 0xff41,
  RouterPrefixTable: 0xff42,
} as const;

/** Entries per RouterLidTable / RouterPrefixTable block. */
export const ROUTER_BLOCK_ENTRIES = 4;
/** RouterLidTable modifier bit: this block is the table's last. */
export const ROUTER_LAST_BLOCK = 0x8000_0000;

/** The SA's well-known GUID suffix: `<prefix>:0x0200000000000002` reaches a subnet's SA. */
export const SA_WELL_KNOWN_GUID = 0x0200000000000002n;

export const RouterPortInfo = defineLayout('RouterPortInfo', 64, {
  portGuid: u64(0, 64, { label: 'PortGuid' }),
  gidPrefix: u64(64, 64, { label: 'GidPrefix' }),
  lid: uint(128, 16, { label: 'Lid' }),
  portNum: uint(144, 8, { label: 'PortNum' }),
  portState: uint(152, 4, { label: 'PortState' }),
  reserved1: reserved(156, 4),
  lidTableEntries: uint(160, 16, { label: 'LidTableEntries' }),
  prefixEntries: uint(176, 16, { label: 'PrefixEntries' }),
  reserved2: reserved(192, 320),
});
export type RouterPortInfo = LayoutValue<typeof RouterPortInfo>;

export const RouterLidEntry = defineLayout('RouterLidEntry', 16, {
  guid: u64(0, 64, { label: 'Guid' }),
  lid: uint(64, 16, { label: 'Lid' }),
  sl: uint(80, 4, { label: 'SL' }),
  reserved1: reserved(84, 3),
  valid: uint(87, 1, { label: 'Valid' }),
  reserved2: reserved(88, 40),
});
export type RouterLidEntry = LayoutValue<typeof RouterLidEntry>;

export const RouterLidTable = defineLayout('RouterLidTable', 64, {
  entries: array(struct(0, RouterLidEntry), ROUTER_BLOCK_ENTRIES, 128, { label: 'Entries' }),
});
export type RouterLidTable = LayoutValue<typeof RouterLidTable>;

export const RouterPrefixEntry = defineLayout('RouterPrefixEntry', 16, {
  prefix: u64(0, 64, { label: 'Prefix' }),
  hops: uint(64, 8, { label: 'Hops' }),
  egressPort: uint(72, 8, { label: 'EgressPort' }),
  reserved1: reserved(80, 47),
  valid: uint(127, 1, { label: 'Valid' }),
});
export type RouterPrefixEntry = LayoutValue<typeof RouterPrefixEntry>;

export const RouterPrefixTable = defineLayout('RouterPrefixTable', 64, {
  entries: array(struct(0, RouterPrefixEntry), ROUTER_BLOCK_ENTRIES, 128, { label: 'Entries' }),
});
export type RouterPrefixTable = LayoutValue<typeof RouterPrefixTable>;
