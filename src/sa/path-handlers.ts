/** The SA's path handlers: PathRecord (sa/path.ts), MultiPathRecord (sa/multipath.ts), TraceRecord (sa/trace.ts). */
import type { SaHandler } from './types.js';
import { pathRecordHandler } from './path.js';
import { multiPathRecordHandler } from './multipath.js';
import { traceRecordHandler } from './trace.js';

/** The PathRecord, MultiPathRecord and TraceRecord handlers. */
export function pathHandlers(): SaHandler[] {
  return [pathRecordHandler, multiPathRecordHandler, traceRecordHandler];
}
