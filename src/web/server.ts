/**
 * The live web view's HTTP server (`ibsm run --web ADDR:PORT`): node:http, read-only. GET (and
 * HEAD) only, anything else 405; no endpoint acts on the SM. Bound to a loopback address it answers
 * only requests for a loopback name (403 otherwise: no DNS rebinding from a browser).
 *
 *   /                   the page (page.ts), rendered with the current state and picture in it;
 *                       ?have=SWEEP (the page's refresh): without the picture of that snapshot
 *   /api/state          the SM, fabric, port states, link load, PerfMgr counters, last events (JSON)
 *   /api/topology.svg   the fabric picture of the current snapshot (view/topology.ts)
 *   /api/topology.json  the same picture as data
 *   /api/events         Server-Sent Events: `update` with the feed's version after every change
 *                       (coalesced to one per pushIntervalMs); at most maxClients streams at once,
 *                       each closed when it stops reading (64 KiB unread)
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../util/log.js';
import { HTTP_LIMITS, hostAllowed, urlHost, type ListenAddress } from '../util/listen.js';
import { ConnectionGuard } from '../util/conn-guard.js';
import type { WebFeed } from './feed.js';
import { PAGE_SCRIPT, pageHtml } from './page.js';
import { formatGuid } from '../util/guid.js';
import { RealClock, type Clock, type TimerHandle } from '../util/clock.js';

export interface WebServerOptions {
  log?: Logger;
  /** Event streams open at once (beyond: 503); default 32. */
  maxClients?: number;
  /** Least wall time between two pushes, ms; default 250. */
  pushIntervalMs?: number;
  /** A comment line on idle streams every so often (proxies close silent ones), ms; default 15 s. */
  heartbeatMs?: number;
  /** The clock of the pushes and heartbeats: the SM's (api/sm.ts); default real time. */
  clock?: Clock;
}

export interface WebServer {
  readonly server: Server;
  /** Where it listens, with the port the system chose for port 0. */
  readonly address: ListenAddress;
  readonly url: string;
  /** Event streams open now. */
  streams(): number;
  close(): Promise<void>;
}

const CSP = `default-src 'none'; script-src 'sha256-${createHash('sha256').update(PAGE_SCRIPT).digest('base64')}'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
/** A response's headers: a literal, not `{ ...COMMON_HEADERS, ... }` (V8 11, Node 20, promotes
 * every object a spread that adds properties makes: issue #29's abusive requests filled the old
 * space with them; docs of test/conn-promotion.test.ts). */
const headers = (type: string): Record<string, string> => ({ 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer', 'content-type': type });

/** Serve the feed on `listen`. Resolves once listening; rejects (EADDRINUSE, EACCES...) if it cannot. */
export function serveWeb(feed: WebFeed, listen: ListenAddress, o: WebServerOptions = {}): Promise<WebServer> {
  const maxClients = o.maxClients ?? 32;
  const pushInterval = o.pushIntervalMs ?? 250;
  const clock = o.clock ?? new RealClock();
  const streams = new Set<ServerResponse>();
  let pushTimer: TimerHandle | undefined;
  let lastPush = -Infinity;

  const push = (): void => {
    pushTimer = undefined;
    lastPush = clock.now();
    const msg = `event: update\ndata: ${JSON.stringify({ version: feed.version })}\n\n`;
    for (const s of streams) write(s, msg);
  };
  /** A stream that does not read what it is sent is closed before its buffer grows past 64 KiB. */
  const write = (s: ServerResponse, msg: string): void => {
    if (s.writableLength > 65_536) {
      streams.delete(s);
      s.destroy();
      return;
    }
    s.write(msg);
  };
  const offChange = feed.onChange(() => {
    if (pushTimer || streams.size === 0) return;
    pushTimer = clock.setTimeout(push, Math.max(0, lastPush + pushInterval - clock.now()));
  });
  const heartbeatMs = o.heartbeatMs ?? 15_000;
  const beat = (): void => {
    for (const s of streams) write(s, ': alive\n\n');
    heartbeat = clock.setTimeout(beat, heartbeatMs);
  };
  let heartbeat = clock.setTimeout(beat, heartbeatMs);

  const send = (res: ServerResponse, status: number, type: string, body: string, head: boolean, extra?: Record<string, string>): void => {
    const h = headers(type);
    h['content-length'] = String(Buffer.byteLength(body));
    res.writeHead(status, extra ? Object.assign(h, extra) : h);
    res.end(head ? undefined : body);
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) {
      send(res, 405, 'text/plain; charset=utf-8', `method ${req.method} not allowed: the web view is read-only (GET only)\n`, false, { allow: 'GET, HEAD' });
      return;
    }
    // bound to loopback, only a loopback name may be asked for: a web page elsewhere cannot read
    // the fabric through a DNS name rebound to 127.0.0.1
    if (!hostAllowed(listen.host, req.headers.host)) {
      send(res, 403, 'text/plain; charset=utf-8', `the web view listens on ${listen.host}: ask for it as localhost, 127.0.0.1 or [::1], not "${req.headers.host ?? ''}"\n`, head);
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    switch (path) {
      case '/':
      case '/index.html': {
        // the page is served with the state in it: the first paint shows the fabric
        const have = new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('have') ?? undefined;
        send(res, 200, 'text/html; charset=utf-8', pageHtml(feed.state(), feed.svg(), have), head, { 'content-security-policy': CSP });
        return;
      }
      case '/favicon.ico': {
        const h = headers('');
        delete h['content-type'];
        res.writeHead(204, h).end();
        return;
      }
      case '/api/state':
        send(res, 200, 'application/json', JSON.stringify(feed.state()), head);
        return;
      case '/api/topology.svg': {
        const svg = feed.svg();
        if (svg === undefined) send(res, 503, 'text/plain; charset=utf-8', 'the subnet is not up yet\n', head);
        else send(res, 200, 'image/svg+xml', svg, head);
        return;
      }
      case '/api/topology.json': {
        const v = feed.topologyJson();
        if (v === undefined) send(res, 503, 'text/plain; charset=utf-8', 'the subnet is not up yet\n', head);
        else send(res, 200, 'application/json', JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${formatGuid(x)}` : x)), head);
        return;
      }
      case '/api/events': {
        if (streams.size >= maxClients) {
          send(res, 503, 'text/plain; charset=utf-8', `too many event streams (${maxClients}); the page polls instead\n`, head, { 'retry-after': '10' });
          return;
        }
        res.writeHead(200, Object.assign(headers('text/event-stream'), { connection: 'keep-alive' }));
        if (head) {
          res.end();
          return;
        }
        res.write(`retry: 3000\nevent: update\ndata: ${JSON.stringify({ version: feed.version })}\n\n`);
        streams.add(res);
        req.socket.setTimeout(0);
        res.on('close', () => streams.delete(res));
        return;
      }
      default:
        send(res, 404, 'text/plain; charset=utf-8', 'not found: GET /, /api/state, /api/topology.svg, /api/topology.json, /api/events\n', head);
    }
  };

  const server = createServer({ headersTimeout: HTTP_LIMITS.headersTimeoutMs, requestTimeout: HTTP_LIMITS.requestTimeoutMs, keepAliveTimeout: HTTP_LIMITS.keepAliveMs, maxHeaderSize: HTTP_LIMITS.maxHeaderSize, connectionsCheckingInterval: 1_000 }, (req, res) => {
    // Busy while answered (an event stream until it closes): a busy connection is never evicted.
    guard.busy(req.socket, 1);
    res.once('close', () => guard.busy(req.socket, -1));
    try {
      handle(req, res);
    } catch (e) {
      o.log?.from(req.socket.remoteAddress ?? '?').warn('web view request failed', { url: req.url, peer: req.socket.remoteAddress, error: (e as Error).message });
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', `the web view failed: ${(e as Error).message}\n`, false);
      else res.destroy();
    }
  });
  // Connections: maxClients × 4 in all, half of that from one peer; a new one beyond closes the
  // oldest idle one (a half-sent request is idle), so a slowloris cannot lock the view.
  const guard = new ConnectionGuard(server, { max: maxClients * 4, perPeer: maxClients * 2, idleMs: HTTP_LIMITS.idleMs });
  server.on('clientError', (_e, socket) => socket.destroy());

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      server.on('error', (e) => o.log?.warn('web view server error', { error: e.message }));
      const a = server.address() as AddressInfo;
      const address = { host: listen.host, port: a.port };
      resolve({
        server,
        address,
        url: `http://${urlHost(listen.host)}:${a.port}/`,
        streams: () => streams.size,
        close: () =>
          new Promise<void>((done) => {
            offChange();
            clock.clearTimeout(heartbeat);
            if (pushTimer) clock.clearTimeout(pushTimer);
            for (const s of streams) s.end();
            streams.clear();
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
