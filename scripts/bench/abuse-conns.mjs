// Issue #29's abusive connections to ibsm's local servers, one place for the two that make them:
// scripts/bench/abuse.mjs (the long run) and test/fixtures/conn-abuse-promotion.mjs (what they
// leave in V8's old space). Eight kinds: on the control socket an idle connection, half a line and
// a 70 KB line; on the web view and metrics a slowloris head each (the held ones kept 300 at a
// time), a bad Host, a POST and a bad path. Every kind resolves once made (errors included).
import { request } from 'node:http';
import { connect } from 'node:net';

/** `at`: `{ socket, web, metrics }` (the control socket's path, the two TCP ports). `release()`
 * closes the connections still held. */
export function connectionAbuse(at) {
  const held = [];
  const hold = (s) => {
    held.push(s);
    if (held.length > 300) held.shift().destroy();
  };
  const open = (to, send) =>
    new Promise((resolve) => {
      const s = connect(to);
      s.on('error', () => resolve(s));
      s.once('connect', () => {
        if (send) s.write(send);
        resolve(s);
      });
    });
  const get = (port, urlPath, { host = `127.0.0.1:${port}`, method = 'GET' } = {}) =>
    new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: urlPath, method, headers: { host }, agent: false, timeout: 10_000 }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', resolve);
      req.end();
    });
  const kinds = [
    async () => hold(await open({ path: at.socket })), // idle
    async () => hold(await open({ path: at.socket }, '{"cmd":"sta')), // half a line
    async () => (await open({ path: at.socket }, 'x'.repeat(70_000))).destroy(), // over-long
    async () => hold(await open({ port: at.web, host: '127.0.0.1' }, 'GET / HTTP/1.1\r\nHost: localhost\r\nX-a: ')), // slowloris
    async () => hold(await open({ port: at.metrics, host: '127.0.0.1' }, 'GET /metrics HTTP/1.1\r\nHost: localhost\r\n')),
    async () => get(at.metrics, '/metrics', { host: 'evil.example' }),
    async () => get(at.web, '/api/state', { method: 'POST' }),
    async () => get(at.web, '/../../etc/passwd'),
  ];
  return { kinds, release: () => held.splice(0).forEach((s) => s.destroy()) };
}
