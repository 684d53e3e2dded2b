/** SR-IOV vports for operators (docs/vports.md): the `vportsChanged` event as vports come and go,
 * the per-HCA metrics, and `ibsm dump vports`, on the SM+SA (src/subnet.ts) over the simulated
 * fabric, whose HCAs are the witness (the vports their hypervisor created). */
import { describe, expect, it } from 'vitest';
import { NodeType } from '../src/wire/mad.js';
import type { VPortChange } from '../src/events.js';
import { renderMetrics } from '../src/api/metrics.js';
import { dumpVports } from '../src/view/dumps.js';
import { vportRows } from '../src/sm/vport-ops.js';
import { formatGuid } from '../src/util/guid.js';
import { bringUp } from './helpers/subnet-rig.js';
import { WebFeed } from '../src/web/feed.js';
import { pageHtml } from '../src/web/page.js';
import { drive } from './helpers/drive.js';

const SPEC = 'gen:fattree2:leaves=2,spines=1,hosts=3';

describe('SR-IOV vports for operators', () => {
  it('vportsChanged on the sweep that finds them and the pass that sees them come and go; per-HCA metrics; ibsm dump vports', async () => {
    const events: VPortChange[] = [];
    const r = await bringUp(SPEC, { sim: { virtualization: { vportCap: 32, vports: 2 } } });
    // the first heavy sweep ran in bringUp: listen from now on, and look at what it left
    r.subnet.events.on('vportsChanged', (c) => events.push(c));
    const feed = new WebFeed({ subnet: r.subnet, clock: r.clock });
    const hosts = r.sim.nodes.filter((n) => n.type === NodeType.CA);
    const caPorts = hosts.reduce((k, n) => k + n.ports.filter((p) => p?.peer).length, 0);
    const rows = vportRows(r.subnet.sm.vports, r.subnet.sm.current!.fabric);
    expect(rows.length).toBe(caPorts * 2);
    // metrics: one series per HCA, each with its 2 vports, all ACTIVE, one with a LID of its own
    const text = renderMetrics(r.subnet, r.rpc);
    const h = hosts[1]!;
    expect(text).toContain(`ibsm_vports{node_guid="${formatGuid(h.guid)}",node_desc="${h.desc}"} 2`);
    expect(text).toContain(`ibsm_vports_active{node_guid="${formatGuid(h.guid)}",node_desc="${h.desc}"} 2`);
    expect(text).toContain(`ibsm_vports_with_lid{node_guid="${formatGuid(h.guid)}",node_desc="${h.desc}"} 1`);
    expect(text).toContain(`ibsm_vport_capable_ports ${caPorts}`);
    // the hypervisor creates 3 on one host and destroys one elsewhere: one event, on the light sweep
    const made = [0, 1, 2].map(() => r.sim.vports.create(h.guid, 1, { lidRequired: true }));
    const other = hosts[2]!;
    const gone = r.sim.vports.virt(other.guid, 1).vports.get(1)!;
    r.sim.vports.destroy(other.guid, 1, 1);
    await drive(r.clock, r.subnet.sm.sweep('light'));
    expect(events.length).toBe(1);
    expect(events[0]!.added.map((v) => v.guid).sort()).toEqual(made.map((v) => v.guid).sort());
    for (const a of events[0]!.added) {
      expect(a.port).toMatchObject({ nodeGuid: h.guid, portNum: 1 });
      expect(a.lid, 'with the LID the pass gave').toBe(made.find((v) => v.guid === a.guid)!.lid);
    }
    expect(events[0]!.removed.map((v) => [v.guid, v.port.nodeGuid, v.index])).toEqual([[gone.guid, other.guid, 1]]);
    // nothing changed: no event
    await drive(r.clock, r.subnet.sm.sweep('light'));
    expect(events.length).toBe(1);
    expect(renderMetrics(r.subnet, r.rpc)).toContain(`ibsm_vports_active{node_guid="${formatGuid(h.guid)}",node_desc="${h.desc}"} 5`);
    // the dump lists every vport under its HCA port, with its LID
    const dump = dumpVports(vportRows(r.subnet.sm.vports, r.subnet.sm.current!.fabric));
    for (const v of made) expect(dump).toMatch(new RegExp(`${String(v.index)}  ${formatGuid(v.guid)}  Active  0x${v.lid.toString(16).padStart(4, '0')}  yes`));
    expect(dump).not.toContain(formatGuid(gone.guid));
    expect(dump).toContain(`${caPorts * 2 + 2} vports on ${caPorts} ports`);
    // the web view: totals, one row per HCA, the event in its list
    const web = feed.state();
    expect(web.vports).toMatchObject({ ports: caPorts, vports: caPorts * 2 + 2, active: caPorts * 2 + 2 });
    expect(web.vports!.hcas.find((x) => x.guid === formatGuid(h.guid))).toMatchObject({ node: h.desc, vports: 5, active: 5, withLid: 4 });
    expect(web.events.some((e) => e.kind === 'vports' && e.text.startsWith('vports: 3 added, 1 removed'))).toBe(true);
    const html = pageHtml(web, feed.svg());
    expect(html).toContain('<h2>SR-IOV vports</h2>');
    expect(html).toContain(`<td>${h.desc}</td><td>${formatGuid(h.guid)}</td><td>5</td><td>5</td><td>4</td>`);
    feed.close();
  });
});
