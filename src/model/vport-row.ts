/** One SR-IOV virtual port as operators see it (events, metrics, `ibsm dump vports`, the web view):
 * its HCA port, index, GUID, state and LID. sm/vport-ops.ts fills it, view/dumps.ts prints it. */
export interface VportRow {
  nodeGuid: bigint;
  nodeDesc: string;
  port: number;
  portGuid: bigint;
  index: number;
  guid: bigint;
  active: boolean;
  lidRequired: boolean;
  /** The LID the rule gives it (its own when LidRequired); 0 before the SM gave one. */
  lid: number;
}
