/** What the SM needs from the RPC layer to talk to SMAs: directed-route and LID-routed SMP
 * Get/Set returning the 64-byte SMP data of the response. Implemented over MadRpc. */
export interface SmpClient {
  /** `path`: egress port at each hop from the SM's node (empty: the SM's own node). */
  getDr(path: readonly number[], attrId: number, attrMod?: number): Promise<Uint8Array>;
  setDr(path: readonly number[], attrId: number, attrMod: number, data: Uint8Array): Promise<Uint8Array>;
  getLid(lid: number, attrId: number, attrMod?: number): Promise<Uint8Array>;
  setLid(lid: number, attrId: number, attrMod: number, data: Uint8Array): Promise<Uint8Array>;
  /** SMPs sent so far (including retries). */
  readonly sent: number;
}
