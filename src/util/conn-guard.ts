/** The connections of ibsm's local servers (the control socket, the web view, the metrics
 * endpoint), held under abuse: at most `max` open at once and `perPeer` from one peer address (a
 * unix socket's peers are one: they share the socket's owner), and a connection that is idle (no
 * request being answered: a half-sent request counts as idle) is closed after `idleMs`. A new
 * connection beyond a cap closes the oldest idle one of that peer (else of any peer) instead of
 * being refused, so connections left open, or requests sent a byte at a time, cannot lock out a
 * legitimate client; only when every connection is busy is the new one closed. The servers mark a
 * connection busy while they answer it (`busy`). */
import type { Server, Socket } from 'node:net';

export interface ConnectionGuardOptions {
  /** Connections open at once. */
  max: number;
  /** Connections open at once from one peer address. */
  perPeer: number;
  /** An idle connection is closed after this long, ms. */
  idleMs: number;
}

interface Conn {
  peer: string;
  busy: number;
}

export class ConnectionGuard {
  private readonly conns = new Map<Socket, Conn>();
  /** Connections closed to make room or for idling (tests, metrics). */
  evicted = 0;
  idleClosed = 0;
  refused = 0;

  constructor(
    server: Server,
    readonly o: ConnectionGuardOptions,
  ) {
    server.on('connection', (s: Socket) => this.admit(s));
  }

  get size(): number {
    return this.conns.size;
  }

  /** Mark a connection busy (+1: a request is being answered) or done with it (-1). */
  busy(s: Socket, d: 1 | -1): void {
    const c = this.conns.get(s);
    if (c) c.busy = Math.max(0, c.busy + d);
  }

  private admit(s: Socket): void {
    const peer = s.remoteAddress ?? 'local';
    let fromPeer = 0;
    for (const c of this.conns.values()) if (c.peer === peer) fromPeer++;
    if (fromPeer >= this.o.perPeer && !this.evictIdle(peer)) return this.refuse(s);
    if (this.conns.size >= this.o.max && !this.evictIdle(peer) && !this.evictIdle()) return this.refuse(s);
    const c: Conn = { peer, busy: 0 };
    this.conns.set(s, c);
    s.once('close', () => this.conns.delete(s));
    s.setTimeout(this.o.idleMs, () => {
      // Inactivity while a request is answered (a long resweep) is not idling.
      if (c.busy > 0) return;
      this.idleClosed++;
      s.destroy();
    });
  }

  /** Close the oldest idle connection (of `peer` if given); whether one was closed. */
  private evictIdle(peer?: string): boolean {
    for (const [s, c] of this.conns) {
      if (c.busy > 0 || (peer !== undefined && c.peer !== peer)) continue;
      this.conns.delete(s);
      this.evicted++;
      s.destroy();
      return true;
    }
    return false;
  }

  private refuse(s: Socket): void {
    this.refused++;
    s.destroy();
  }
}
