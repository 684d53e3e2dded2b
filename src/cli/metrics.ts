/** The metrics endpoint lives in api/metrics.ts (the API serves it too). */
export { renderMetrics, serveMetrics } from '../api/metrics.js';
