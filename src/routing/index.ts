/** Public face of the routing layer. */
export * from './types.js';
export { routeWithFallback, getEngine, engineNames, registerEngine, enginesWithoutRouteOrder, DEFAULT_FALLBACK, DEADLOCK_FREE_FALLBACK, type FallbackResult, type BetweenSteps } from './registry.js';
export { verifyRoutes, type VerifyReport, type VerifyOptions, type RouteFailure, type CdgReport, type LoadStats, type FailureKind } from './verify.js';
export { routeMinhop, minhop } from './minhop.js';
export { parseRouteOrder, orderDestinations, type DestGroup, type DestOrder } from './route-order.js';
export { routeUpdn, updn, detectRoots } from './updn.js';
export { routeFtree, ftree } from './ftree.js';
export { routeDfsssp, dfsssp } from './dfsssp.js';
export { routeNue, nue } from './nue.js';
export { routeTorus, torus, torusShape, type TorusShape } from './torus.js';
