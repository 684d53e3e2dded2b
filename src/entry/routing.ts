/** `ibsm/routing`: the offline router and verifier (every engine, `routeWithFallback`,
 * `verifyRoutes`), LID assignment, and the topology loaders, generators and writers: all without
 * an SM (docs/api.md "Offline"). */
export * from '../routing/index.js';
export { assignLids, LidSpaceExhausted, type LidRange } from '../sm/lids.js';
export { loadFabricSpec, parseTopologyText, describeGenerators } from '../model/load.js';
export { generateFabric, GENERATORS } from '../model/generators.js';
export { formatIbnetdiscover, parseIbnetdiscover } from '../model/ibnetdiscover.js';
export { fabricToJson, parseFabricJson, diffFabrics } from '../model/json.js';
export { cloneFabric, links, checkFabric } from '../model/fabric.js';
export { subnetsOf, isMultiSubnet, subnetPrefixOf, routerHash, type SubnetPart, type RouterPortView } from '../model/subnets.js';
