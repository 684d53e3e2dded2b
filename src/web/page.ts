/** The one page of the live web view: HTML, CSS and the script inline (no external assets). The
 * script only reads: it loads /api/state (and /api/topology.svg when the snapshot changed), again
 * on every `update` the server pushes on /api/events (Server-Sent Events), or every few seconds
 * while that stream is down. It builds every table with textContent (a node description is never markup). The page
 * has no form, no button and no input: nothing on it acts on the SM. */

export const PAGE_SCRIPT = `
'use strict';
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; };
const fmt = (n) => n === undefined || n === null ? '' : Number(n).toLocaleString('en-US', { maximumFractionDigits: 1 });
const bytes = (n) => { if (n === undefined) return ''; const u = ['B', 'kB', 'MB', 'GB', 'TB']; let i = 0; while (n >= 1000 && i < u.length - 1) { n /= 1000; i++; } return n.toFixed(i ? 1 : 0) + ' ' + u[i]; };
function table(id, head, rows, empty) {
  const t = $(id); t.replaceChildren();
  if (!rows.length) { const tr = el('tr'); const td = el('td', empty, 'empty'); td.colSpan = head.length; tr.append(td); t.append(tr); return; }
  const hr = el('tr'); for (const h of head) hr.append(el('th', h)); t.append(hr);
  for (const r of rows) { const tr = el('tr'); if (r.cls) tr.className = r.cls; for (const c of r.cells) tr.append(el('td', c)); t.append(tr); }
}
function kv(id, pairs) {
  const d = $(id); d.replaceChildren();
  for (const [k, v] of pairs) { if (v === undefined || v === '') continue; const s = el('span', '', 'kv'); s.append(el('b', k), el('span', v)); d.append(s); }
}
const end = (e) => e.node + ' ' + e.guid + ' p' + e.port;
function render(s) {
  document.body.dataset.version = s.version;
  const sm = s.sm, f = s.fabric;
  $('smstate').textContent = sm.state.toUpperCase();
  $('smstate').className = 'state ' + sm.state;
  kv('summary', [
    ['SM GUID', sm.guid], ['SM LID', sm.lid], ['priority', sm.priority], ['routing', sm.engine],
    ['sweeps', sm.sweeps.heavy + ' heavy, ' + sm.sweeps.light + ' light'],
    ['last sweep', sm.lastSweep ? sm.lastSweep.kind + ' ' + fmt(sm.lastSweep.ms) + ' ms, ' + fmt(sm.lastSweep.smps) + ' SMPs' + (sm.lastSweep.at ? ' at ' + sm.lastSweep.at.slice(11, 19) : '') : ''],
    ['nodes', f && fmt(f.nodes)], ['switches', f && fmt(f.switches)], ['end ports', f && fmt(f.endPorts)], ['max LID', f && f.maxLid],
    ['links', f && fmt(f.links)], ['links down', f && fmt(f.linksDown)], ['SA requests', fmt(sm.saRequests)],
  ]);
  const p = s.ports;
  $('portcounts').replaceChildren(...(p ? Object.entries(p.byState).map(([k, n]) => el('span', k + ' ' + fmt(n), 'pill ' + k.toLowerCase())) : []));
  if (p && p.unlinked) $('portcounts').append(el('span', p.unlinked + ' never cabled', 'note'));
  table('ports', ['node', 'GUID', 'port', 'LID', 'state', 'physical', 'peer'], p ? p.notActive.map((x) => ({ cls: 'bad', cells: [x.node, x.guid, x.port, x.lid, x.state, x.phys, x.peer || ''] })) : [], 'every cabled port is Active');
  const l = s.links;
  $('linkload').textContent = l ? 'routes per link: max ' + l.maxRoutes + ', mean ' + l.meanRoutes : '';
  table('linksdown', ['end A', 'end B'], l ? l.down.map((x) => ({ cls: 'bad', cells: [end(x.a), end(x.b)] })) : [], 'no link down');
  table('links', ['end A', 'end B', 'width', 'speed', 'routes', 'A→B', 'B→A'], l ? l.busiest.map((x) => ({ cells: [end(x.a), end(x.b), x.width || '', x.speed || '', x.routes, x.bytesPerSecond ? bytes(x.bytesPerSecond.ab) + '/s' : '', x.bytesPerSecond ? bytes(x.bytesPerSecond.ba) + '/s' : ''] })) : [], 'no links');
  const pf = s.perf;
  $('perfsection').hidden = !pf;
  if (pf) {
    kv('perfsummary', [['sweeps', fmt(pf.sweeps)], ['PMA queries', fmt(pf.mads)], ['failed readings', fmt(pf.failures)], ['ports', fmt(pf.monitored)], ['ports with errors', fmt(pf.portsWithErrors)], ['rates over', pf.rateSeconds ? fmt(pf.rateSeconds) + ' s' : 'after two sweeps']]);
    table('perf', ['node', 'GUID', 'port', 'LID', 'xmit', 'rcv', 'xmit/s', 'rcv/s', 'pkts/s', 'errors'], pf.ports.map((x) => ({ cls: Object.keys(x.errors).length ? 'bad' : '', cells: [x.node, x.guid, x.port, x.lid, bytes(x.xmitBytes), bytes(x.rcvBytes), x.rates ? bytes(x.rates.xmitBytesPerSecond) : '', x.rates ? bytes(x.rates.rcvBytesPerSecond) : '', x.rates ? fmt(x.rates.xmitPktsPerSecond + x.rates.rcvPktsPerSecond) : '', Object.entries(x.errors).map(([k, n]) => k + ' ' + n).join(', ')] })), 'no port read yet');
  }
  table('events', ['time', 'kind', 'event'], s.events.map((e) => ({ cls: /Down|Removed|trap/.test(e.kind) ? 'warn' : '', cells: [e.at.slice(11, 23), e.kind, e.text] })), 'no events yet');
}
function picture(svgText) {
  const box = $('picture');
  if (!svgText) { box.replaceChildren(el('p', 'the subnet is not up yet', 'empty')); return; }
  const doc = new DOMParser().parseFromString(svgText, 'image/svg+xml');
  const svg = doc.documentElement;
  if (svg.nodeName !== 'svg') return;
  box.replaceChildren(document.importNode(svg, true));
}
let busy = false, again = false, shown = -1, pictured = '';
async function refresh() {
  if (busy) { again = true; return; }
  busy = true;
  try {
    const s = await (await fetch('api/state', { cache: 'no-store' })).json();
    if (s.version !== shown) {
      // the picture changes with the snapshot only (a heavy sweep): not fetched again for a light one
      const snap = s.fabric ? s.fabric.sweep + '/' + s.fabric.linksDown : '';
      if (snap !== pictured || !snap) {
        const r = await fetch('api/topology.svg', { cache: 'no-store' });
        picture(r.ok ? await r.text() : '');
        pictured = snap;
      }
      render(s);
      shown = s.version;
    }
    $('conn').textContent = live ? 'live' : 'polling';
  } catch (e) {
    $('conn').textContent = 'no answer from the SM';
  } finally {
    busy = false;
    if (again) { again = false; refresh(); }
  }
}
let live = false;
function connect() {
  if (!window.EventSource) return;
  const es = new EventSource('api/events');
  es.addEventListener('open', () => { live = true; $('conn').textContent = 'live'; });
  es.addEventListener('update', () => refresh());
  es.addEventListener('error', () => { live = false; $('conn').textContent = 'reconnecting'; });
}
setInterval(() => { if (!live) refresh(); }, 5000);
connect();
refresh();
`;

const CSS = `
*{box-sizing:border-box}body{margin:0;font:13px/1.4 system-ui,sans-serif;color:#1d2733;background:#f4f6f9}
header{display:flex;align-items:center;gap:14px;padding:10px 16px;background:#1f3247;color:#fff}
header h1{font-size:16px;margin:0;font-weight:600}#conn{margin-left:auto;font-size:12px;opacity:.8}
.state{padding:2px 10px;border-radius:10px;font-weight:700;background:#777}.state.master{background:#2e8540}.state.standby{background:#2a6fb0}.state.discovering{background:#c77c02}
main{padding:12px 16px;display:grid;gap:12px}section{background:#fff;border:1px solid #d5dbe3;border-radius:6px;padding:10px 12px;min-width:0}
h2{font-size:14px;margin:0 0 8px}.kv{display:inline-block;margin:0 16px 4px 0}.kv b{font-weight:600;margin-right:5px;color:#4a5a6a}
#picture{overflow:auto;max-height:70vh;border:1px solid #e3e7ec;background:#fcfcfd}#picture svg{display:block}
.link.down{stroke-width:2.5}table{border-collapse:collapse;width:100%;font-size:12px}th,td{text-align:left;padding:3px 6px;border-bottom:1px solid #eef1f4;white-space:nowrap}
th{background:#f0f3f6;font-weight:600}tr.bad td{background:#fdecec}tr.warn td{color:#8a4b00}td.empty{color:#6b7886;font-style:italic}
.note{color:#6b7886;font-size:11px}.pill{display:inline-block;margin:0 6px 6px 0;padding:1px 8px;border-radius:9px;background:#e3e7ec}.pill.active{background:#d6efd9}.pill.down{background:#f7d4d4}.pill.initialize,.pill.armed{background:#fbe6c2}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:12px}.scroll{max-height:360px;overflow:auto}
.legend{font-size:11px;color:#4a5a6a;margin:4px 0 0}.legend i{display:inline-block;width:18px;height:3px;vertical-align:middle;margin:0 4px 0 10px}
`;

/** The page (the script's hash goes in the Content-Security-Policy). */
export function pageHtml(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>ibsm: live view</title><style>${CSS}</style></head>
<body data-version="-1">
<header><h1>ibsm</h1><span id="smstate" class="state">…</span><span>read-only live view of the subnet manager</span><span id="conn">connecting</span></header>
<main>
<section><h2>Subnet manager</h2><div id="summary"></div></section>
<section><h2>Fabric</h2><div id="picture"></div>
<p class="legend">switches by tier, hosts under their switch; links by routes carried:<i style="background:#9e9e9e"></i>none<i style="background:#28aa30"></i>few<i style="background:#f02830"></i>most<i style="background:#d00000;height:2px;border-top:2px dashed #d00000"></i>down</p></section>
<div class="cols">
<section><h2>Port states</h2><div id="portcounts"></div><div class="scroll"><table id="ports"></table></div></section>
<section><h2>Links down</h2><div class="scroll"><table id="linksdown"></table></div></section>
</div>
<section><h2>Per-link load</h2><div id="linkload"></div><div class="scroll"><table id="links"></table></div></section>
<section id="perfsection" hidden><h2>Port counters (PerfMgr)</h2><div id="perfsummary"></div><div class="scroll"><table id="perf"></table></div></section>
<section><h2>Last events</h2><div class="scroll"><table id="events"></table></div></section>
</main>
<script>${PAGE_SCRIPT}</script>
</body></html>
`;
}
