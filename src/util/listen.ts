/** A listen address as an option gives it: `ADDR:PORT`, with ADDR an IPv4 address, a host name or a
 * bracketed IPv6 address (`[::1]:8080`), PORT 0 (any free port) to 65535. */

import { IbsmError } from './errors.js';
export interface ListenAddress {
  host: string;
  port: number;
}

export class ListenAddressError extends IbsmError {
  override readonly name = 'ListenAddressError';
}

/** The web view cannot listen where `--web` told it (address in use, not local, ...); `cause` is why. */
export class WebListenError extends IbsmError {
  override readonly name = 'WebListenError';
}

export function parseListenAddress(text: string): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(text.trim());
  if (!m) throw new ListenAddressError(`"${text}" is not ADDR:PORT (e.g. 127.0.0.1:8080, 0.0.0.0:8080 or [::1]:8080)`);
  const port = Number(m[3]);
  if (port > 65535) throw new ListenAddressError(`"${text}": port ${port} is out of range (0 to 65535)`);
  return { host: m[1] ?? m[2]!, port };
}

/** The address as a URL's host part (IPv6 in brackets). */
export function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** A Host header (or an address) naming this machine's loopback. */
const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\]|\[::ffff:127(\.\d{1,3}){3}\])(:\d+)?$/i;

/** Whether a listen address is a loopback one. */
export function isLoopback(host: string): boolean {
  return LOOPBACK_HOST.test(host.includes(':') ? `[${host}]` : host);
}

/** Whether an HTTP server listening on `listenHost` answers a request for `hostHeader`: bound to
 * loopback, only a loopback name may be asked for, so a web page elsewhere cannot read the server
 * through a DNS name rebound to 127.0.0.1 (DNS rebinding); bound elsewhere, any. */
export function hostAllowed(listenHost: string, hostHeader: string | undefined): boolean {
  return !isLoopback(listenHost) || LOOPBACK_HOST.test(hostHeader ?? '');
}

/** The HTTP servers' limits under abuse (the web view and the metrics endpoint): the whole request
 * head within headersTimeoutMs, the request within requestTimeoutMs, an idle keep-alive connection
 * closed after keepAliveMs; connections capped in all and per peer (util/conn-guard.ts). */
export const HTTP_LIMITS = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveMs: 5_000, idleMs: 30_000, maxHeaderSize: 16 * 1024 } as const;
