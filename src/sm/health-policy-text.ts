/** The text every unhealthy-port policy option shares (`--health-flap`, `--health-unresponsive`,
 * `--health-errors`): `WHAT:ACTION[:QUIET_S]`, WHAT the policy's own part (no colon in it), ACTION
 * warn or isolate, QUIET_S the seconds without a sign after which an isolation is released. With no
 * other import: the option table checks the options at start. */
export interface PolicyText {
  /** The policy's own part, trimmed. */
  what: string;
  action: 'warn' | 'isolate';
  /** QUIET_S in seconds, when given. */
  quietS?: number;
}

/** Split `WHAT:ACTION[:QUIET_S]`; undefined when the text is not of that form. */
export function splitPolicy(text: string): PolicyText | undefined {
  const m = /^\s*([^:]+?)\s*:\s*(warn|isolate)\s*(?::\s*(\d+(?:\.\d+)?)\s*)?$/.exec(text);
  if (!m) return undefined;
  return { what: m[1]!, action: m[2] as 'warn' | 'isolate', ...(m[3] === undefined ? {} : { quietS: Number(m[3]) }) };
}
