/** `ibsm/wire`: what travels on the wire and what sends it: the SA records (layouts with their
 * component masks), Notices, the MAD enums, `MadRpc` (with its errors; the one SA client, `SaClient`, is in the root),
 * and the GID/hex formatters. */
export {
  SaAttr,
  SaStatus,
  JoinState,
  NodeRecord,
  PortInfoRecord,
  PathRecord,
  MultiPathRecord,
  LinkRecord,
  SwitchInfoRecord,
  SMInfoRecord,
  MCMemberRecord,
  ServiceRecord,
  InformInfo,
  InformInfoRecord,
  PKeyTableRecord,
  GUIDInfoRecord,
  LinearForwardingTableRecord,
  MulticastForwardingTableRecord,
  SLtoVLMappingTableRecord,
  VLArbitrationTableRecord,
  TraceRecord,
} from '../wire/sa.js';
export { Notice, NoticeSmp, TrapNumber } from '../wire/notice.js';
export { formatGid, formatHex, type Layout, type DeepPartial } from '../wire/layout.js';
export { MgmtClass, Method, NODE_TYPE_NAMES, PORT_STATE_NAMES } from '../wire/mad.js';
export { MadRpc, type MadRpcOptions } from '../rpc/madrpc.js';
export { RpcError, MadStatusError, RmppAbortError, RmppTimeoutError, RpcClosedError } from '../rpc/errors.js';
export { ComponentMaskError } from '../wire/errors.js';
export { saGidOf } from '../sa/inter-subnet-client.js';
export { formatPrefix } from '../api/subnets.js';
