/** The live web view (`--web`, src/web): ibsm opened through the API on the in-process fabric,
 * the page loaded in headless Chromium (Debian's /usr/bin/chromium through playwright-core): a
 * screenshot, every switch of the simulated fabric in the picture (by data-guid), nothing on the
 * page that acts; a cable pulled on the simulated fabric shows on the page after the sweep it
 * causes (the link drawn down, the down ports listed, the events); an error injected into a
 * port's PMA shows in the counters. And over plain HTTP: only GET, anything else 405; bounded
 * event streams; a port in use refused with a message. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { openSm, Logger, type IbsmSm } from '../src/index.js';
import { MemorySink } from '../src/util/log.js';
import { parseCommandLine } from '../src/config/parse.js';
import { parseIbsmConfig } from '../src/config/file.js';
import { parseListenAddress } from '../src/util/listen.js';
import { WebFeed } from '../src/web/feed.js';
import { serveWeb } from '../src/web/server.js';

const SPEC = 'gen:fattree2:leaves=4,spines=2,hosts=3';
const hex = (g: bigint): string => `0x${g.toString(16).padStart(16, '0')}`;

async function open(extra: Parameters<typeof openSm>[0] = {}): Promise<{ sm: IbsmSm; sink: MemorySink }> {
  const sink = new MemorySink();
  const sm = await openSm({ sim: SPEC, seed: 1, sweepInterval: 0, web: '127.0.0.1:0', log: new Logger(sink, 'info'), ...extra });
  await sm.start();
  return { sm, sink };
}

describe('live web view', () => {
  it('in headless Chromium: a screenshot, every switch in the picture, nothing that acts; a pulled cable and an injected error show after the next sweep', async () => {
    const { sm, sink } = await open({ perfmgr: true, perfmgrInterval: 2 });
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
    try {
      expect(sink.lines.some((l) => l.includes('web view served') && l.includes(sm.webUrl!))).toBe(true);
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      await page.goto(sm.webUrl!);
      await page.waitForSelector('#picture svg g.node');
      await page.waitForFunction(() => document.getElementById('smstate')!.textContent === 'MASTER');

      // every switch of the simulated fabric (the independent witness), by GUID, and every node
      const sim = sm.sim!;
      const switches = sim.nodes.filter((n) => n.isSwitch).map((n) => hex(n.guid));
      const shown = await page.$$eval('#picture svg g.node.switch[data-guid]', (els) => els.map((e) => e.getAttribute('data-guid')));
      expect(new Set(shown)).toEqual(new Set(switches));
      expect(await page.$$eval('#picture svg g.node[data-guid]', (els) => els.length)).toBe(sim.nodes.length);
      expect(await page.locator('#picture svg line.link.down').count()).toBe(0);

      // a screenshot: a PNG, not empty
      const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-web-'));
      const shot = path.join(dir, 'web-view.png');
      await page.screenshot({ path: shot, fullPage: true });
      const png = readFileSync(shot);
      expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
      expect(png.length).toBeGreaterThan(10_000);

      // read-only: no form, button, input, link or handler on the page
      expect(await page.$$eval('form, button, input, select, textarea, a[href], [onclick], [contenteditable]', (els) => els.length)).toBe(0);
      expect(errors).toEqual([]);

      // the PerfMgr's counters: every linked port of the fabric, with rates after two sweeps
      const cabled = sim.nodes.reduce((a, n) => a + n.ports.filter((p) => p && p.num > 0 && p.peer).length, 0);
      await page.waitForFunction(() => /ratesover\d/.test(document.getElementById('perfsummary')!.textContent!.replace(/\s/g, '')), undefined, { timeout: 30_000 });
      expect(await page.locator('#perfsummary').textContent()).toContain(`ports${cabled}`);

      // pull a leaf's cable to a spine on the simulated fabric: the next sweep (the trap it
      // raises) redraws the picture with that link down and lists both ports as down
      const leaf = sim.nodes.find((n) => n.isSwitch && n.ports.some((p) => p?.peer && !p.peer.node.isSwitch))!;
      const up = leaf.ports.find((p) => p && p.num > 0 && p.peer?.node.isSwitch)!;
      const spine = up.peer!.node;
      const heavyBefore = sm.sweeps.filter((s) => s.kind === 'heavy').length;
      sim.linkDown(leaf.idx, up.num);
      await page.waitForSelector('#picture svg line.link.down', { timeout: 30_000 });
      expect(sm.sweeps.filter((s) => s.kind === 'heavy').length).toBeGreaterThan(heavyBefore);
      expect(await page.locator('#picture svg line.link.down').count()).toBe(1);
      const downTable = await page.locator('#linksdown').textContent();
      expect(downTable).toContain(`${leaf.desc} ${hex(leaf.guid)} p${up.num}`);
      expect(downTable).toContain(`${spine.desc} ${hex(spine.guid)} p${up.peer!.num}`);
      const ports = await page.locator('#ports').textContent();
      expect(ports).toContain(leaf.desc);
      expect(ports).toContain('Down');
      await page.waitForFunction(() => /linksdown1/.test(document.getElementById('summary')!.textContent!.replace(/\s/g, '')));
      expect(await page.locator('#events').textContent()).toContain(`link down: ${leaf.desc}`);

      // an error counter injected into a host port's PMA: its row shows the error after a PerfMgr sweep
      const host = sim.nodes.find((n) => !n.isSwitch && n.ports.some((p) => p?.peer) && n.guid !== sm.snapshot!.fabric.nodes[sm.snapshot!.discovery.smNode]!.guid)!;
      const hp = host.ports.find((p) => p?.peer)!;
      sim.addPortCounts(host.idx, hp.num, { symbolErrors: 7 });
      await page.waitForFunction((g) => [...document.querySelectorAll('#perf tr.bad')].some((r) => r.textContent!.includes(g) && r.textContent!.includes('symbolErrors 7')), hex(host.guid), { timeout: 30_000 });
      await page.screenshot({ path: path.join(dir, 'web-view-link-down.png'), fullPage: true });
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
      await sm.stop();
    }
  });

  it('read-only over HTTP: GET and HEAD only, anything else 405 with Allow; JSON state and picture; unknown paths 404', async () => {
    const { sm } = await open();
    try {
      const url = sm.webUrl!;
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
        const r = await fetch(url, { method, ...(method === 'POST' || method === 'PUT' ? { body: 'resweep' } : {}) });
        expect(r.status, method).toBe(405);
        expect(r.headers.get('allow')).toBe('GET, HEAD');
        expect(await r.text()).toMatch(/read-only/);
      }
      for (const p of ['api/state', 'api/events', 'resweep']) expect((await fetch(url + p, { method: 'POST' })).status).toBe(405);
      const html = await fetch(url);
      expect(html.status).toBe(200);
      expect(html.headers.get('content-security-policy')).toMatch(/script-src 'sha256-/);
      const body = await html.text();
      expect(body).not.toMatch(/<(form|button|input|select|textarea)\b/i);
      expect(body).not.toMatch(/<(script|link|img)[^>]+(src|href)=/i); // no external assets
      expect((await fetch(url, { method: 'HEAD' })).status).toBe(200);
      const state = (await (await fetch(url + 'api/state')).json()) as { sm: { state: string }; fabric: { switches: number; nodes: number }; ports: { byState: Record<string, number> } };
      const snap = sm.snapshot!;
      expect(state.sm.state).toBe('master');
      expect(state.fabric.nodes).toBe(snap.fabric.nodes.length);
      expect(state.fabric.switches).toBe(sm.sim!.nodes.filter((n) => n.isSwitch).length);
      const svg = await fetch(url + 'api/topology.svg');
      expect(svg.headers.get('content-type')).toBe('image/svg+xml');
      expect((await svg.text()).match(/data-guid=/g)).toHaveLength(sm.sim!.nodes.length);
      const json = (await (await fetch(url + 'api/topology.json')).json()) as { nodes: unknown[] };
      expect(json.nodes).toHaveLength(sm.sim!.nodes.length);
      expect((await fetch(url + 'nope')).status).toBe(404);
      // bound to 127.0.0.1: a request for another name (a DNS name rebound to it) is refused
      const port = new URL(url).port;
      const asked = (host: string): Promise<number> =>
        new Promise((resolve, reject) => request({ host: '127.0.0.1', port, path: '/api/state', headers: { host } }, (r) => (r.resume(), resolve(r.statusCode!))).on('error', reject).end());
      expect(await asked('evil.example:' + port)).toBe(403);
      expect(await asked('localhost:' + port)).toBe(200);
      expect(await asked('127.0.0.1:' + port)).toBe(200);
    } finally {
      await sm.stop();
    }
  });

  it('event streams: an update after each sweep; beyond the bound 503; closed with the SM', async () => {
    const { sm } = await open({ web: undefined });
    const feed = new WebFeed({ subnet: sm.subnet, clock: sm.backend.clock });
    const web = await serveWeb(feed, parseListenAddress('127.0.0.1:0'), { maxClients: 2, pushIntervalMs: 10 });
    try {
      const a = await fetch(web.url + 'api/events');
      expect(a.headers.get('content-type')).toBe('text/event-stream');
      const b = await fetch(web.url + 'api/events');
      expect((await fetch(web.url + 'api/events')).status).toBe(503);
      expect(web.streams()).toBe(2);
      const reader = a.body!.getReader();
      const dec = new TextDecoder();
      let text = '';
      const read = async (until: RegExp): Promise<void> => {
        while (!until.test(text)) text += dec.decode((await reader.read()).value);
      };
      const v0 = feed.version;
      await read(new RegExp(`data: \\{"version":${v0}\\}`));
      await sm.subnet.sm.sweep('light');
      await read(/data: \{"version":(\d+)\}[\s\S]*data: \{"version":(\d+)\}/);
      const versions = [...text.matchAll(/"version":(\d+)/g)].map((m) => Number(m[1]));
      expect(versions.at(-1)!).toBeGreaterThan(v0);
      await b.body!.cancel();
      await reader.cancel();
    } finally {
      await web.close();
      feed.close();
      await sm.stop();
    }
  });

  it('the events kept are bounded: the newest, in order, the oldest dropped', async () => {
    const { sm } = await open({ web: undefined });
    const feed = new WebFeed({ subnet: sm.subnet, clock: sm.backend.clock }, { ringSize: 10 });
    try {
      const v0 = feed.version;
      for (let i = 0; i < 1000; i++) sm.subnet.events.emit('multicastGroupCreated', { mgid: BigInt(i), mlid: 0xc000 + i });
      const ev = feed.events();
      expect(ev).toHaveLength(10);
      expect(feed.eventsSeen).toBe(1000);
      expect(ev[0]!.text).toContain(`MLID 0x${(0xc000 + 999).toString(16)}`);
      expect(ev[9]!.text).toContain(`MLID 0x${(0xc000 + 990).toString(16)}`);
      expect(feed.version).toBe(v0 + 1000);
      expect((feed.state() as { events: unknown[] }).events).toHaveLength(10);
    } finally {
      feed.close();
      await sm.stop();
    }
  });

  it('--web takes ADDR:PORT; a port in use stops openSm with a message naming the address', async () => {
    expect(parseCommandLine('run', ['--web', '0.0.0.0:8080']).values.get('web')).toBe('0.0.0.0:8080');
    expect(parseListenAddress('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(() => parseCommandLine('run', ['--web', '8080'])).toThrow(/"8080" is not ADDR:PORT/);
    expect(() => parseCommandLine('run', ['--web', 'localhost:70000'])).toThrow(/out of range/);
    expect(parseIbsmConfig('{ "web": "[::]:8080" }', 'ibsm.json').get('web')).toBe('[::]:8080');
    expect(() => parseIbsmConfig('{ "web": "everywhere" }', 'ibsm.json')).toThrow(/"everywhere" is not ADDR:PORT/);
    const busy: Server = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as AddressInfo).port;
    try {
      await expect(openSm({ sim: SPEC, sweepInterval: 0, web: `127.0.0.1:${port}`, log: new Logger(new MemorySink()) })).rejects.toThrow(new RegExp(`--web 127.0.0.1:${port}: cannot serve the web view: .*EADDRINUSE`));
    } finally {
      busy.close();
    }
  });
});
