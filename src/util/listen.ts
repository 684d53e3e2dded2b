/** A listen address as an option gives it: `ADDR:PORT`, with ADDR an IPv4 address, a host name or a
 * bracketed IPv6 address (`[::1]:8080`), PORT 0 (any free port) to 65535. */

export interface ListenAddress {
  host: string;
  port: number;
}

export class ListenAddressError extends Error {
  override readonly name = 'ListenAddressError';
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
