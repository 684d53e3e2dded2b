/** The live web view (`--web`, src/web): ibsm opened through the API on the in-process fabric,
 * the page loaded in headless Chromium (Debian's /usr/bin/chromium through playwright-core): a
 * screenshot, every switch of the simulated fabric in the picture (by data-guid), nothing on the
 * page that acts; a cable pulled on the simulated fabric shows on the page after the sweep it
 * causes (the link drawn down, the down ports listed, the events); an error injected into a
 * port's PMA shows in the counters. The first paint, with script off, has the fabric and the
 * tables (the screenshot's pixels). As a wall screen: hosts named on hover, found by name, port
 * GUID or LID; of two parallel cables, the one pulled drawn apart from its working twin; a host
 * unplugged drawn gone and listed with its link down; a switch with a port down outlined in a
 * colour apart from the down link's for colour-blind eyes too; ports never cabled counted apart
 * from ports down. And over plain HTTP: only GET, anything else 405; bounded event streams; a port in use
 * refused with a message. */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { openSm, Logger, type IbsmSm } from '../src/index.js';
import { MemorySink } from '../src/util/log.js';
import { parseCommandLine } from '../src/config/parse.js';
import { parseIbsmConfig } from '../src/config/file.js';
import { parseListenAddress } from '../src/util/listen.js';
import { WebFeed } from '../src/web/feed.js';
import { serveWeb } from '../src/web/server.js';
import { countNotBackground, decodePng } from './helpers/png.js';
import { CVD, deltaE, hexOfCss } from './helpers/colour.js';
import { hasCode, lit } from './helpers/log-lines.js';

const SPEC = 'gen:fattree2:leaves=4,spines=2,hosts=3';
/** Two cables between each leaf and spine. */
const PARALLEL = 'gen:fattree2:leaves=4,spines=2,hosts=3,links=2';
const hex = (g: bigint): string => `0x${g.toString(16).padStart(16, '0')}`;

async function open(extra: Parameters<typeof openSm>[0] = {}): Promise<{ sm: IbsmSm; sink: MemorySink }> {
  const sink = new MemorySink();
  const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, web: '127.0.0.1:0', log: new Logger(sink, 'info'), ...extra });
  await sm.start();
  return { sm, sink };
}

/** An SM with the web view and a headless Chromium for `fn`; both stopped after. */
async function inBrowser(extra: Parameters<typeof openSm>[0], fn: (sm: IbsmSm, browser: Browser) => Promise<void>): Promise<void> {
  const { sm } = await open(extra);
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  try {
    await fn(sm, browser);
  } finally {
    await browser.close();
    await sm.stop();
  }
}

describe('live web view', () => {
  it('in headless Chromium: a screenshot, every switch in the picture, nothing that acts; a pulled cable and an injected error show after the next sweep', async () => {
    const { sm, sink } = await open({ perfmgr: true, perfmgrIntervalS: 2 });
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
    try {
      expect(hasCode(sink.lines, 'IBSM-8030', lit(sm.webUrl!))).toBe(true);
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      const methods = new Set<string>();
      page.on('request', (r) => methods.add(r.method()));
      await page.goto(sm.webUrl!);
      await page.waitForSelector('#picture svg g.node');
      await page.waitForFunction(() => document.getElementById('smstate')!.textContent === 'MASTER');

      // every switch of the simulated fabric (the independent witness), by GUID, and every node
      const sim = sm.sim!;
      const switches = sim.nodes.filter((n) => n.isSwitch).map((n) => hex(n.guid));
      const shown = await page.$$eval('#picture svg g.node.switch[data-guid]', (els) => els.map((e) => e.getAttribute('data-guid')));
      expect(new Set(shown)).toEqual(new Set(switches));
      expect(await page.$$eval('#picture svg g.node[data-guid]', (els) => els.length)).toBe(sim.nodes.length);
      expect(await page.locator('#picture svg .link.down').count()).toBe(0);

      // a screenshot: a PNG, not empty
      const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-web-'));
      const shot = path.join(dir, 'web-view.png');
      await page.screenshot({ path: shot, fullPage: true });
      const png = readFileSync(shot);
      expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
      expect(png.length).toBeGreaterThan(10_000);

      // read-only: no form, button, link or handler on the page; its one input is the search box,
      // in no form; a search sends nothing
      expect(await page.$$eval('form, button, select, textarea, a[href], [onclick], [contenteditable]', (els) => els.length)).toBe(0);
      expect(await page.$$eval('input', (els) => els.map((e) => `${e.id} ${(e as HTMLInputElement).type} ${(e as HTMLInputElement).form === null} ${e.hasAttribute('name')}`))).toEqual(['find search true false']);
      const requests = methods.size;
      await page.fill('#find', 'sw');
      await page.press('#find', 'Enter');
      expect(methods.size).toBe(requests);
      await page.fill('#find', '');
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
      await page.waitForSelector('#picture svg .link.down', { timeout: 30_000 });
      expect(sm.sweeps.filter((s) => s.kind === 'heavy').length).toBeGreaterThan(heavyBefore);
      expect(await page.locator('#picture svg .link.down').count()).toBe(1);
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
      expect([...methods]).toEqual(['GET']);
    } finally {
      await browser.close();
      await sm.stop();
    }
  });

  it('the first paint has the fabric and the tables: with script off, a screenshot at load shows the picture and every table filled', () =>
    inBrowser({ sim: PARALLEL }, async (sm, browser) => {
      // no script: what the page shows is what the server sent, i.e. the first frame
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 }, javaScriptEnabled: false });
      await page.goto(sm.webUrl!, { waitUntil: 'load' });
      const sim = sm.sim!;
      expect(await page.$$eval('#picture svg g.node[data-guid]', (els) => els.map((e) => e.getAttribute('data-guid')).sort())).toEqual(sim.nodes.map((n) => hex(n.guid)).sort());
      const cables = sim.nodes.reduce((a, n) => a + n.ports.filter((p) => p && p.num > 0 && p.peer).length, 0) / 2;
      expect(await page.locator('#picture svg .link').count()).toBe(cables);
      expect((await page.locator('#smstate').textContent())!.trim()).toBe('MASTER');
      const summary = (await page.locator('#summary').textContent())!.replace(/\s/g, '');
      expect(summary).toContain(`nodes${sim.nodes.length}`);
      expect(summary).toContain(`switches${sim.nodes.filter((n) => n.isSwitch).length}`);
      expect(await page.locator('#links tr').count()).toBeGreaterThan(10);
      expect(await page.locator('#events tr').count()).toBeGreaterThan(2);
      expect(await page.locator('#portcounts .pill.active').textContent()).toMatch(/^Active \d+$/);

      // the screenshot at load: the picture's box is drawn on (switches, hosts, links), the tables written
      const png = decodePng(await page.screenshot({ fullPage: true }));
      const box = (await page.locator('#picture').boundingBox())!;
      const drawn = countNotBackground(png, box, [0xfc, 0xfc, 0xfd]);
      expect(drawn / (box.width * box.height), `${drawn} of ${box.width}x${box.height} pixels drawn`).toBeGreaterThan(0.03);
      const links = (await page.locator('#links').boundingBox())!;
      expect(countNotBackground(png, links, [0xff, 0xff, 0xff])).toBeGreaterThan(2000);

      // Chromium's own headless screenshot at load (script on, as a kiosk or a probe takes it): the
      // same box drawn on (the event loop stays free: the SM answers while it loads)
      const shot = path.join(mkdtempSync(path.join(os.tmpdir(), 'ibsm-web-')), 'load.png');
      await promisify(execFile)('/usr/bin/chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--window-size=1400,1000', `--screenshot=${shot}`, sm.webUrl!]);
      const cli = decodePng(readFileSync(shot));
      expect(cli.width).toBe(1400);
      expect(countNotBackground(cli, box, [0xfc, 0xfc, 0xfd]) / (box.width * box.height)).toBeGreaterThan(0.03);
    }));

  it('as a wall screen: hosts named on hover and found by name, port GUID or LID; a pulled parallel cable apart from its twin; an unplugged host drawn gone; a switch with a port down outlined apart from the down link; never-cabled ports apart', () =>
    inBrowser({ sim: PARALLEL }, async (sm, browser) => {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(sm.webUrl!);
      await page.waitForFunction(() => document.getElementById('conn')!.textContent === 'live');
      const sim = sm.sim!;
      const smGuid = sm.snapshot!.fabric.nodes[sm.snapshot!.discovery.smNode]!.guid;
      const hosts = sim.nodes.filter((n) => !n.isSwitch && n.guid !== smGuid);
      const [named, gone] = [hosts[4]!, hosts[1]!];
      const port = named.ports.find((p) => p?.peer)!;

      // hover: the host's name, node GUID, port GUID and LID
      await page.hover(`#picture g.node[data-guid="${hex(named.guid)}"] rect`);
      await expect.poll(() => page.locator('#tip').isVisible()).toBe(true);
      const tip = (await page.locator('#tip').textContent())!;
      expect(tip).toContain(named.desc);
      expect(tip).toContain(hex(named.guid));
      expect(tip).toContain(hex(port.guid));
      expect(tip).toContain(`LID ${port.info.lid}`);

      // the search box: by name, by port GUID, by LID (decimal and hex): that host highlighted
      const hits = (): Promise<Array<string | null>> => page.$$eval('#picture g.node.hit', (els) => els.map((e) => e.getAttribute('data-guid')));
      for (const q of [named.desc, hex(port.guid), port.guid.toString(16).slice(-6), String(port.info.lid), `0x${port.info.lid.toString(16)}`]) {
        await page.fill('#find', q);
        expect(await hits(), q).toEqual([hex(named.guid)]);
        expect(await page.locator('#found').textContent(), q).toContain(named.desc);
      }
      await page.fill('#find', 'no such node');
      expect(await hits()).toEqual([]);
      expect(await page.locator('#found').textContent()).toBe('nothing found');
      await page.fill('#find', '');

      // ports never cabled counted apart: Down counts none of them (the simulated fabric's ports are the witness)
      const portsOf = (ns: typeof sim.nodes) => ns.flatMap((n) => n.ports.filter((p) => p !== undefined && p.num > 0));
      const unused = portsOf(sim.nodes).filter((p) => !p.peer).length;
      expect(unused).toBeGreaterThan(0);
      const pill = async (cls: string): Promise<string | null> => ((await page.locator(`#portcounts .pill.${cls}`).count()) ? page.locator(`#portcounts .pill.${cls}`).textContent() : null);
      expect(await pill('down')).toBeNull();
      expect(await pill('uncabled')).toBe(`never cabled ${unused}`);

      // pull one of the two cables between a leaf and a spine, and unplug a host
      const leaf = sim.nodes.find((n) => n.isSwitch && n.ports.some((p) => p?.peer && !p.peer.node.isSwitch))!;
      const pulled = leaf.ports.find((p) => p && p.num > 0 && p.peer?.node.isSwitch)!;
      const twin = leaf.ports.find((p) => p && p !== pulled && p.peer?.node === pulled.peer!.node)!;
      const hostPort = gone.ports.find((p) => p?.peer)!;
      // (a search stays on across the refresh of the picture)
      await page.fill('#find', named.desc);
      sim.linkDown(leaf.idx, pulled.num);
      sim.linkDown(gone.idx, hostPort.num);
      await sm.subnet.sm.sweep('heavy');
      await page.waitForFunction(() => document.querySelectorAll('#picture svg .link.down').length === 2, undefined, { timeout: 30_000 });
      expect(await hits()).toEqual([hex(named.guid)]);
      await page.fill('#find', '');

      // the pulled cable and its twin: both drawn, apart (their middles on the page's own geometry)
      const mid = (a: string, b: string) =>
        page.$eval(`#picture svg .link[data-a="${a}"][data-b="${b}"], #picture svg .link[data-a="${b}"][data-b="${a}"]`, (e) => {
          const p = e as SVGPathElement;
          const m = p.getPointAtLength(p.getTotalLength() / 2);
          return { x: m.x, y: m.y, down: p.classList.contains('down') };
        });
      const spine = pulled.peer!.node;
      const d = await mid(`${hex(leaf.guid)}:${pulled.num}`, `${hex(spine.guid)}:${pulled.peer!.num}`);
      const t = await mid(`${hex(leaf.guid)}:${twin.num}`, `${hex(spine.guid)}:${twin.peer!.num}`);
      expect([d.down, t.down]).toEqual([true, false]);
      expect(Math.hypot(d.x - t.x, d.y - t.y)).toBeGreaterThanOrEqual(5);

      // the leaf with a port down: outlined in its own colour, thicker, and told apart from the down
      // link's colour in simulated deuteranopia, protanopia and tritanopia (CIELAB ΔE >= 30); on
      // hover, why; a switch with every port Active is not outlined
      const outline = (g: bigint) => page.$eval(`#picture g.node[data-guid="${hex(g)}"] rect`, (r) => ({ stroke: getComputedStyle(r).stroke, width: parseFloat(getComputedStyle(r).strokeWidth) }));
      const sick = await outline(leaf.guid);
      const calm = await outline(sim.nodes.find((n) => n.isSwitch && n !== leaf && n !== spine && n.ports.every((p) => !p?.peer || p.cableUp))!.guid);
      expect(sick.width).toBeGreaterThanOrEqual(2 * calm.width);
      const downStroke = await page.$eval('#picture svg .link.down', (e) => getComputedStyle(e).stroke);
      for (const [vision, m] of Object.entries(CVD)) expect(deltaE(hexOfCss(sick.stroke), hexOfCss(downStroke), m), vision).toBeGreaterThanOrEqual(30);
      expect(deltaE(hexOfCss(sick.stroke), hexOfCss(calm.stroke))).toBeGreaterThanOrEqual(30);
      await page.hover(`#picture g.node[data-guid="${hex(leaf.guid)}"]`);
      expect(await page.locator('#tip').textContent()).toContain(`port ${pulled.num} Down`);

      // the host unplugged: drawn gone (greyed) with its link down, listed in Links down and in the summary
      expect(await page.locator(`#picture g.node.gone[data-guid="${hex(gone.guid)}"]`).count()).toBe(1);
      expect(await page.locator(`#picture svg .link.down[data-a^="${hex(gone.guid)}:"], #picture svg .link.down[data-b^="${hex(gone.guid)}:"]`).count()).toBe(1);
      const down = (await page.locator('#linksdown').textContent())!;
      expect(down).toContain(`${gone.desc} ${hex(gone.guid)} p${hostPort.num} (gone)`);
      expect(down).toContain(`${hostPort.peer!.node.desc} ${hex(hostPort.peer!.node.guid)} p${hostPort.peer!.num}`);
      expect(down).toContain(`${leaf.desc} ${hex(leaf.guid)} p${pulled.num}`);
      expect((await page.locator('#summary').textContent())!.replace(/\s/g, '')).toContain('nodesgone1');
      // found by a search while gone
      await page.fill('#find', gone.desc);
      expect(await hits()).toEqual([hex(gone.guid)]);
      expect(await page.locator('#found').textContent()).toContain('(gone)');
      await page.fill('#find', '');

      // Down: the cabled ports down on the nodes found (both ends of the pulled cable, the switch end
      // of the host's); never cabled: as before; the host's own port as Gone
      const found = sim.nodes.filter((n) => n !== gone);
      expect(await pill('down')).toBe(`Down ${portsOf(found).filter((p) => p.peer && !p.cableUp).length}`);
      expect(await pill('uncabled')).toBe(`never cabled ${unused}`);
      expect(await pill('gone')).toBe('Gone 1');
      const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-web-'));
      await page.screenshot({ path: path.join(dir, 'web-view-wall.png'), fullPage: true });
      expect(errors).toEqual([]);
    }));

  it('a node description is text, never markup: in the picture, its label, the tooltip and the search, with script off and on', async () => {
    const evil = `<img src=x onerror="document.title='owned'">&amp;"'</svg><script>document.title='owned'</script>`;
    const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, web: '127.0.0.1:0', log: new Logger(new MemorySink(), 'info') });
    const host = sm.sim!.nodes.find((n) => !n.isSwitch && n.idx > 1)!;
    host.desc = evil; // what NodeDescription answers: 64 bytes of it
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
    try {
      await sm.start();
      const desc = sm.snapshot!.fabric.nodes.find((n) => n.guid === host.guid)!.desc;
      expect(desc.length).toBeGreaterThan(40);
      for (const javaScriptEnabled of [false, true]) {
        const page = await browser.newPage({ javaScriptEnabled });
        await page.goto(sm.webUrl!);
        expect(await page.$$eval('img, #picture script, main script', (els) => els.length)).toBe(0);
        expect(await page.$eval(`#picture g.node[data-guid="${hex(host.guid)}"]`, (g) => g.getAttribute('data-desc'))).toBe(desc);
        expect(await page.$eval(`#picture g.node[data-guid="${hex(host.guid)}"] text`, (t) => t.textContent)).toBe(`${desc.slice(0, 11)}…`);
        expect(await page.locator('#picture svg').count()).toBe(1);
        expect(await page.title()).toBe('ibsm: live view');
        if (javaScriptEnabled) {
          await page.fill('#find', desc.slice(0, 30));
          expect(await page.locator('#found').textContent()).toContain(desc);
          await page.hover(`#picture g.node[data-guid="${hex(host.guid)}"] rect`);
          expect(await page.locator('#tip b').textContent()).toBe(desc);
          expect(await page.title()).toBe('ibsm: live view');
        }
        await page.close();
      }
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
      expect(body).not.toMatch(/<(form|button|select|textarea)\b/i);
      expect(body.match(/<input\b[^>]*>/gi)!.map((i) => /id="([^"]*)" type="([^"]*)"/.exec(i)!.slice(1).join(' '))).toEqual(['find search']); // the search box only
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
      const e = (await openSm({ sim: SPEC, sweepIntervalS: 0, web: `127.0.0.1:${port}`, log: new Logger(new MemorySink()) }).then(() => new Error('opened'), (x: unknown) => x)) as Error & { code?: string };
      expect(e.message).toMatch(new RegExp(`--web 127.0.0.1:${port}: cannot serve the web view: .*EADDRINUSE`));
      expect(e.code).toBe('WebListenError');
    } finally {
      busy.close();
    }
  });
});
