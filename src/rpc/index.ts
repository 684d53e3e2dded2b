export { MadRpc, type MadRpcOptions, type RequestOptions, type SmpOptions, type MadRpcStats, type UnsolicitedFilter, type UnsolicitedHandler, type DestinationKey } from './madrpc.js';
export { MadTimeoutError, MadStatusError, RmppAbortError, RmppTimeoutError, RpcClosedError, RpcError, describeMad, type MadIdent } from './errors.js';
export { segmentRmpp, reassembleRmpp, classHeaderLength, rmppDataOffset, rmppSegmentDataSize, type RmppOptions, type RmppStats } from './rmpp.js';
