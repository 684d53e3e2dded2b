/** The one page of the live web view: HTML, CSS and the script inline (no external assets).
 *
 * The server renders the page whole (pageHtml): the picture and every table are in the HTML it
 * sends, so the first paint has the fabric, with or without script. The script only reads and
 * only refreshes: on every `update` the server pushes on /api/events (Server-Sent Events), or
 * every few seconds while that stream is down, it fetches the page again (`?have=` the snapshot
 * it shows: the picture is sent again only when the snapshot changed) and swaps in the parts
 * marked data-panel. Every text from the fabric (a node description) is escaped here, never
 * markup. Nodes with a port not Active or with errors are outlined by a style rule of their own
 * (#marks: the picture is made once per snapshot, they change with any sweep). Besides, the
 * script shows what a node is on hover (#tip, with why it is outlined) and finds nodes by name,
 * GUID or LID (#find, a search box of the page itself: no form, nothing sent). Nothing on the
 * page acts on the SM. */
import { VIEW_COLOURS, xmlEscape as esc } from '../view/topology.js';
import type { WebLink, WebState } from './feed.js';

export const PAGE_SCRIPT = `
'use strict';
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; };
let busy = false, again = false, live = false;
async function refresh() {
  if (busy) { again = true; return; }
  busy = true;
  try {
    const r = await fetch('./?have=' + encodeURIComponent($('picture').dataset.snap || ''), { cache: 'no-store' });
    if (!r.ok) throw new Error(String(r.status));
    const doc = new DOMParser().parseFromString(await r.text(), 'text/html');
    if (doc.body.dataset.version !== document.body.dataset.version) {
      for (const fresh of doc.querySelectorAll('[data-panel]')) {
        const old = $(fresh.id);
        if (old && !fresh.hasAttribute('data-same')) old.replaceWith(document.importNode(fresh, true));
      }
      document.body.dataset.version = doc.body.dataset.version;
      find(false);
    }
    $('conn').textContent = live ? 'live' : 'polling';
  } catch (e) {
    $('conn').textContent = 'no answer from the SM';
  } finally {
    busy = false;
    if (again) { again = false; refresh(); }
  }
}
function connect() {
  if (!window.EventSource) return;
  const es = new EventSource('api/events');
  es.addEventListener('open', () => { live = true; $('conn').textContent = 'live'; });
  es.addEventListener('update', (e) => { if (JSON.parse(e.data).version !== Number(document.body.dataset.version)) refresh(); });
  es.addEventListener('error', () => { live = false; $('conn').textContent = 'reconnecting'; });
}
// what a node is, on hover: its name, GUIDs and LIDs (a link: its ends and routes)
const tip = $('tip');
function tipFor(t) {
  const g = t.closest && t.closest('#picture g.node');
  if (g) {
    const d = g.dataset, rows = [el('b', d.desc), el('div', 'node GUID ' + d.guid)];
    if (d.ports) rows.push(el('div', 'port GUID ' + d.ports.split(' ').join(', ')));
    if (d.lid) rows.push(el('div', 'LID ' + d.lid.split(' ').join(', ')));
    if (g.classList.contains('gone')) rows.push(el('div', 'gone: not found by the last sweep', 'gone'));
    const sick = [...document.querySelectorAll('#sick li')].find((li) => li.dataset.guid === d.guid);
    if (sick) rows.push(el('div', sick.textContent, 'gone'));
    return rows;
  }
  const l = t.closest && t.closest('#picture .link');
  return l ? [el('div', l.querySelector('title').textContent)] : undefined;
}
document.addEventListener('mouseover', (e) => {
  const rows = tipFor(e.target);
  tip.hidden = !rows;
  if (rows) tip.replaceChildren(...rows);
});
document.addEventListener('mousemove', (e) => {
  if (tip.hidden) return;
  tip.style.left = Math.min(e.pageX + 14, document.documentElement.scrollWidth - tip.offsetWidth - 4) + 'px';
  tip.style.top = e.pageY + 14 + 'px';
});
// find nodes: by LID (decimal or 0x), node or port GUID, or name; what matches whole wins over
// what matches in part (name or GUID, 4 hex digits or more)
function matches(d, q, whole) {
  const h = q.replace(/^0x/, '');
  const guids = [d.guid].concat((d.ports || '').split(' ')).filter(Boolean).map((g) => g.slice(2));
  const lid = /^[0-9]+$/.test(q) ? Number(q) : /^0x[0-9a-f]+$/.test(q) ? parseInt(q, 16) : NaN;
  if (whole) return (d.desc || '').toLowerCase() === q || (d.lid || '').split(' ').some((x) => x !== '' && Number(x) === lid) || (/^[0-9a-f]+$/.test(h) && guids.some((g) => BigInt('0x' + g) === BigInt('0x' + h)));
  return (d.desc || '').toLowerCase().includes(q) || (/^[0-9a-f]+$/.test(h) && (h.length >= 4 || q.startsWith('0x')) && guids.some((g) => g.includes(h)));
}
let hitAt = 0;
function find(jump) {
  const q = $('find').value.trim().toLowerCase();
  const nodes = [...document.querySelectorAll('#picture g.node')];
  let hits = q ? nodes.filter((g) => matches(g.dataset, q, true)) : [];
  if (q && !hits.length) hits = nodes.filter((g) => matches(g.dataset, q, false));
  $('picture').classList.toggle('searching', q !== '');
  for (const g of nodes) g.classList.toggle('hit', hits.includes(g));
  const one = (g) => g.dataset.desc + ' ' + g.dataset.guid + (g.dataset.lid ? ' LID ' + g.dataset.lid.split(' ').join(', ') : '') + (g.classList.contains('gone') ? ' (gone)' : '');
  $('found').textContent = !q ? '' : !hits.length ? 'nothing found' : hits.length === 1 ? one(hits[0]) : hits.length + ' found: ' + hits.slice(0, 4).map((g) => g.dataset.desc).join(', ') + (hits.length > 4 ? ', …' : '');
  if (jump && hits.length) {
    hitAt = jump === 'next' ? (hitAt + 1) % hits.length : 0;
    hits[hitAt].scrollIntoView({ block: 'nearest', inline: 'center' });
  }
}
$('find').addEventListener('input', () => find(true));
$('find').addEventListener('keydown', (e) => { if (e.key === 'Enter') find('next'); });
setInterval(() => { if (!live) refresh(); }, 5000);
connect();
`;

const C = VIEW_COLOURS;
const CSS = `
*{box-sizing:border-box}body{margin:0;font:13px/1.4 system-ui,sans-serif;color:#1d2733;background:#f4f6f9}
header{display:flex;align-items:center;gap:14px;padding:10px 16px;background:#1f3247;color:#fff}
header h1{font-size:16px;margin:0;font-weight:600}#conn{margin-left:auto;font-size:12px;opacity:.8}
.state{padding:2px 10px;border-radius:10px;font-weight:700;background:#777}.state.master{background:#2e8540}.state.standby{background:#2a6fb0}.state.discovering{background:#c77c02}
main{padding:12px 16px;display:grid;gap:12px}section{background:#fff;border:1px solid #d5dbe3;border-radius:6px;padding:10px 12px;min-width:0}
h2{font-size:14px;margin:0 0 8px}.kv{display:inline-block;margin:0 16px 4px 0}.kv b{font-weight:600;margin-right:5px;color:#4a5a6a}
.head{display:flex;align-items:baseline;gap:12px;flex-wrap:wrap}.head h2{margin-right:8px}
#find{font:inherit;padding:3px 8px;width:300px;border:1px solid #b8c2cc;border-radius:4px}#found{color:#4a5a6a;font-size:12px}
#picture{overflow:auto;max-height:75vh;border:1px solid #e3e7ec;background:#fcfcfd;margin-top:6px}#picture svg{display:block}
#picture.searching g.node:not(.hit),#picture.searching .link{opacity:.25}
#picture g.node.hit rect{stroke:#000;stroke-width:3;filter:drop-shadow(0 0 3px #e69f00)}#picture g.node.hit text{font-weight:700}
#tip{position:absolute;z-index:10;max-width:420px;padding:5px 8px;background:#1f3247;color:#fff;border-radius:4px;font-size:12px;pointer-events:none;box-shadow:0 2px 6px rgba(0,0,0,.3)}#tip .gone{color:#ffb27a}
table{border-collapse:collapse;width:100%;font-size:12px}th,td{text-align:left;padding:3px 6px;border-bottom:1px solid #eef1f4;white-space:nowrap}
th{background:#f0f3f6;font-weight:600}tr.bad td{background:#fdecec}tr.warn td{color:#8a4b00}td.empty{color:#6b7886;font-style:italic}
.note{color:#6b7886;font-size:11px}.pill{display:inline-block;margin:0 6px 6px 0;padding:1px 8px;border-radius:9px;background:#e3e7ec}.pill.active{background:#d6efd9}.pill.down,.pill.gone{background:#f7d4d4}.pill.initialize,.pill.armed{background:#fbe6c2}
.pill.uncabled{background:none;border:1px dashed #b8c2cc;color:#6b7886}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:12px}.scroll{max-height:360px;overflow:auto}
.legend{font-size:11px;color:#4a5a6a;margin:4px 0 0}.legend i{display:inline-block;width:18px;height:0;vertical-align:middle;margin:0 4px 0 10px;border-top:3px solid}
.legend i.box{width:9px;height:9px;border:1px solid}
`;

// ---- the server's rendering of the state (every text escaped) ----

type Cell = string | number | undefined;
const fmt = (n: number | undefined): string => (n === undefined ? '' : n.toLocaleString('en-US', { maximumFractionDigits: 1 }));
const bytes = (n: number | undefined): string => {
  if (n === undefined) return '';
  const u = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < u.length - 1) {
    n /= 1000;
    i++;
  }
  return `${n.toFixed(i ? 1 : 0)} ${u[i]}`;
};

function table(id: string, head: string[], rows: Array<{ cls?: string; cells: Cell[] }>, empty: string): string {
  const body = rows.length
    ? `<tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>${rows.map((r) => `<tr${r.cls ? ` class="${r.cls}"` : ''}>${r.cells.map((c) => `<td>${esc(String(c ?? ''))}</td>`).join('')}</tr>`).join('')}`
    : `<tr><td class="empty" colspan="${head.length}">${esc(empty)}</td></tr>`;
  return `<table id="${id}" data-panel>${body}</table>`;
}

function kv(id: string, pairs: Array<[string, Cell]>): string {
  return `<div id="${id}" data-panel>${pairs
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `<span class="kv"><b>${esc(k)}</b><span>${esc(String(v))}</span></span>`)
    .join('')}</div>`;
}

/** A small picture grows to the page's width (up to twice its size: a wall screen reads it from
 * afar); one wider than the page keeps its size and scrolls. */
function fitted(svg: string): string {
  const w = /^<svg [^>]*?width="(\d+)"/.exec(svg)?.[1];
  return w ? svg.replace('<svg ', `<svg style="width:max(${w}px,min(100%,${2 * Number(w)}px));height:auto" `) : svg;
}

const end = (e: WebLink['a']): string => `${e.node} ${e.guid} p${e.port}${e.gone ? ' (gone)' : ''}`;

/** The parts the script swaps in on a refresh (data-panel), by id. */
function panels(s: WebState, svg: string | undefined, have: string | undefined): Record<string, string> {
  const sm = s.sm;
  const f = s.fabric;
  const p = s.ports;
  const l = s.links;
  const pf = s.perf;
  const last = sm.lastSweep;
  const snap = f ? String(f.sweep) : '';
  const pills = p
    ? [
        ...Object.entries(p.byState).map(([k, n]) => `<span class="pill ${esc(k.toLowerCase())}">${esc(k)} ${fmt(n)}</span>`),
        ...(p.gone ? [`<span class="pill gone">Gone ${fmt(p.gone)}</span>`] : []),
        ...(p.unlinked ? [`<span class="pill uncabled" title="ports that never had a cable (unused switch ports): not counted above">never cabled ${fmt(p.unlinked)}</span>`] : []),
      ]
    : [];
  // nodes with a cabled port not Active or a port with errors (the tables' rows): outlined in the
  // picture by a rule of their own (the picture is made once per snapshot, these change with a
  // light sweep or a PerfMgr sweep)
  const sick = new Map<string, string[]>();
  const mark = (guid: string, why: string): void => void sick.set(guid, [...(sick.get(guid) ?? []), why]);
  for (const x of p?.notActive ?? []) if (x.state !== 'Gone') mark(x.guid, `port ${x.port} ${x.state}`);
  for (const x of pf?.ports ?? []) if (Object.keys(x.errors).length) mark(x.guid, `port ${x.port} ${Object.entries(x.errors).map(([k, n]) => `${k} ${n}`).join(', ')}`);
  const ids = [...sick.keys()].filter((g) => /^0x[0-9a-f]{16}$/.test(g)).map((g) => `#n${g.slice(2)}>rect`);
  return {
    marks: `<style id="marks" data-panel>${ids.length ? `${ids.join(',')}{stroke:${C.sick};stroke-width:3px;stroke-dasharray:none}` : ''}</style>`,
    sick: `<ul id="sick" data-panel hidden>${[...sick].map(([g, why]) => `<li data-guid="${esc(g)}">${esc(why.join('; '))}</li>`).join('')}</ul>`,
    smstate: `<span id="smstate" class="state ${esc(sm.state)}" data-panel>${esc(sm.state.toUpperCase())}</span>`,
    summary: kv('summary', [
      ['SM GUID', sm.guid],
      ['SM LID', sm.lid],
      ['priority', sm.priority],
      ['routing', sm.engine],
      ['sweeps', `${sm.sweeps.heavy} heavy, ${sm.sweeps.light} light`],
      ['last sweep', last ? `${last.kind} ${fmt(last.ms)} ms, ${fmt(last.smps)} SMPs${last.at ? ` at ${last.at.slice(11, 19)}` : ''}` : ''],
      ['nodes', f && fmt(f.nodes)],
      ['nodes gone', f?.nodesGone ? fmt(f.nodesGone) : undefined],
      ['switches', f && fmt(f.switches)],
      ['end ports', f && fmt(f.endPorts)],
      ['max LID', f?.maxLid],
      ['links', f && fmt(f.links)],
      ['links down', f && fmt(f.linksDown)],
      ['SA requests', fmt(sm.saRequests)],
    ]),
    picture:
      have !== undefined && have !== '' && have === snap
        ? `<div id="picture" data-panel data-same data-snap="${snap}"></div>`
        : `<div id="picture" data-panel data-snap="${snap}">${svg ? fitted(svg) : '<p class="empty">the subnet is not up yet</p>'}</div>`,
    portcounts: `<div id="portcounts" data-panel>${pills.join('')}</div>`,
    ports: table('ports', ['node', 'GUID', 'port', 'LID', 'state', 'physical', 'peer'], p ? p.notActive.map((x) => ({ cls: 'bad', cells: [x.node, x.guid, x.port, x.lid, x.state, x.phys, x.peer] })) : [], 'every cabled port is Active'),
    linkload: `<div id="linkload" data-panel>${l ? `routes per link: max ${l.maxRoutes}, mean ${l.meanRoutes}` : ''}</div>`,
    linksdown: table('linksdown', ['end A', 'end B'], l ? l.down.map((x) => ({ cls: 'bad', cells: [end(x.a), end(x.b)] })) : [], 'no link down'),
    links: table(
      'links',
      ['end A', 'end B', 'width', 'speed', 'routes', 'A→B', 'B→A'],
      l ? l.busiest.map((x) => ({ cells: [end(x.a), end(x.b), x.width, x.speed, x.routes, x.bytesPerSecond ? `${bytes(x.bytesPerSecond.ab)}/s` : '', x.bytesPerSecond ? `${bytes(x.bytesPerSecond.ba)}/s` : ''] })) : [],
      'no links',
    ),
    perfsection: `<section id="perfsection" data-panel${pf ? '' : ' hidden'}><h2>Port counters (PerfMgr)</h2>${
      pf
        ? `${kv('perfsummary', [
            ['sweeps', fmt(pf.sweeps)],
            ['PMA queries', fmt(pf.mads)],
            ['failed readings', fmt(pf.failures)],
            ['ports', fmt(pf.monitored)],
            ['ports with errors', fmt(pf.portsWithErrors)],
            ['rates over', pf.rateSeconds ? `${fmt(pf.rateSeconds)} s` : 'after two sweeps'],
          ])}<div class="scroll">${table(
            'perf',
            ['node', 'GUID', 'port', 'LID', 'xmit', 'rcv', 'xmit/s', 'rcv/s', 'pkts/s', 'errors'],
            pf.ports.map((x) => ({
              cls: Object.keys(x.errors).length ? 'bad' : '',
              cells: [x.node, x.guid, x.port, x.lid, bytes(x.xmitBytes), bytes(x.rcvBytes), x.rates ? bytes(x.rates.xmitBytesPerSecond) : '', x.rates ? bytes(x.rates.rcvBytesPerSecond) : '', x.rates ? fmt(x.rates.xmitPktsPerSecond + x.rates.rcvPktsPerSecond) : '', Object.entries(x.errors).map(([k, n]) => `${k} ${n}`).join(', ')],
            })),
            'no port read yet',
          )}</div>`
        : ''
    }</section>`,
    vportsection: vportSection(s.vports),
    events: table('events', ['time', 'kind', 'event'], s.events.map((e) => ({ cls: /Down|Removed|trap/.test(e.kind) ? 'warn' : '', cells: [e.at.slice(11, 23), e.kind, e.text] })), 'no events yet'),
  };
}

/** SR-IOV vports per HCA (docs/vports.md); hidden on a fabric without virtualization. */
function vportSection(v: WebState['vports']): string {
  const body = v
    ? `${kv('vportsummary', [
        ['capable ports', fmt(v.ports)],
        ['vports', fmt(v.vports)],
        ['active', fmt(v.active)],
        ['with their own LID', fmt(v.withLid)],
      ])}<div class="scroll">${table('vports', ['HCA', 'GUID', 'vports', 'active', 'own LID'], v.hcas.map((h) => ({ cls: h.active < h.vports ? 'bad' : '', cells: [h.node, h.guid, h.vports, h.active, h.withLid] })), 'no vports')}</div>`
    : '';
  return `<section id="vportsection" data-panel${v ? '' : ' hidden'}><h2>SR-IOV vports</h2>${body}</section>`;
}

/** The page with the state it shows (the script's hash goes in the Content-Security-Policy).
 * `have`: the snapshot the asking page already pictures (its picture is not sent again). */
export function pageHtml(s: WebState, svg: string | undefined, have?: string): string {
  const p = panels(s, svg, have);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>ibsm: live view</title><style>${CSS}</style>${p.marks}</head>
<body data-version="${s.version}">
<header><h1>ibsm</h1>${p.smstate}<span>read-only live view of the subnet manager</span><span id="conn">connecting</span></header>
<main>
<section><h2>Subnet manager</h2>${p.summary}</section>
<section><div class="head"><h2>Fabric</h2><input id="find" type="search" placeholder="find a node: name, GUID or LID" aria-label="find a node by name, GUID or LID" autocomplete="off" spellcheck="false"><span id="found"></span></div>${p.picture}
<p class="legend">switches by tier, hosts under their switch (hover for names); links by routes carried:<i style="border-color:${C.none}"></i>none<i style="border-color:${C.few}"></i>few<i style="border-color:${C.most}"></i>most<i style="border-top:3px dashed ${C.down}"></i>down<i class="box" style="background:${C.gone};border:1px dashed ${C.down}"></i>gone (not found by the last sweep)<i class="box" style="border:3px solid ${C.sick}"></i>a port not Active or with errors</p></section>
<div class="cols">
<section><h2>Port states</h2>${p.portcounts}<div class="scroll">${p.ports}</div></section>
<section><h2>Links down</h2><div class="scroll">${p.linksdown}</div></section>
</div>
<section><h2>Per-link load</h2>${p.linkload}<div class="scroll">${p.links}</div></section>
${p.perfsection}
${p.vportsection}
<section><h2>Last events</h2><div class="scroll">${p.events}</div></section>
</main>
<div id="tip" hidden></div>
${p.sick}
<script>${PAGE_SCRIPT}</script>
</body></html>
`;
}
