/** `ibsm vport create|destroy HOST[:PORT] [N]` over the control socket of an SM running on the
 * embedded simulated fabric (docs/vports.md): the hypervisor's act on the simulated HCA, the SM
 * taking the vports (ACTIVE, LIDs) at its next sweep, `ibsm dump vports` listing them; refused
 * without the embedded fabric and for bad arguments. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSm } from '../src/index.js';
import { controlTargetOf, controlMain } from '../src/cli/ops.js';
import { controlRequest, serveControl, vportRequestOf, ControlError } from '../src/cli/control.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { NodeType, PortState } from '../src/wire/mad.js';
import { formatGuid } from '../src/util/guid.js';

const SPEC = 'gen:fattree2:leaves=2,spines=1,hosts=3';

describe('ibsm vport over the control socket', () => {
  it('creates vports on a simulated HCA (enabling virtualization first), the SM activates them; destroy removes them', async () => {
    const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, routing: ['minhop'], log: new Logger(new MemorySink(), 'warn') });
    await sm.start();
    const sock = path.join(mkdtempSync(path.join(os.tmpdir(), 'ibsm-vport-')), 'ibsm.sock');
    const server = await serveControl(sock, controlTargetOf(sm), new Logger(new MemorySink()));
    const out: string[] = [];
    const io = { stdout: { write: (s: string) => out.push(s) } };
    try {
      const host = sm.sim!.nodes.filter((n) => n.type === NodeType.CA)[2]!;
      expect(host.ports[1]!.virt, 'no virtualization yet').toBeUndefined();
      // the CLI: three vports on the host's port 1
      expect(await controlMain('vport', ['create', `${host.desc}:1`, '3', '--socket', sock, '--json'], io)).toBe(0);
      const created = JSON.parse(out.pop()!) as { created: Array<{ index: number; guid: string; lidRequired: boolean }>; virtualizationEnabled?: boolean };
      expect(created.virtualizationEnabled).toBe(true);
      expect(created.created.map((v) => [v.index, v.lidRequired])).toEqual([[1, true], [2, false], [3, true]]);
      await sm.subnet.sm.sweep('heavy');
      const virt = sm.sim!.vports.virt(host.guid, 1);
      for (const i of [1, 2, 3]) expect(virt.vports.get(i)!.state, `vport ${i}`).toBe(PortState.Active);
      expect(virt.vports.get(1)!.lid).toBeGreaterThan(0);
      // two more by GUID, port 1 by default: a light sweep takes them
      const more = (await controlRequest(sock, { cmd: 'vport', action: 'create', node: formatGuid(host.guid), port: 1, count: 2 })) as { created: Array<{ index: number }> };
      expect(more.created.map((v) => v.index)).toEqual([4, 5]);
      await sm.subnet.sm.sweep('light');
      expect(virt.vports.get(5)!.state).toBe(PortState.Active);
      expect(virt.vports.get(4)!.lid, 'the first of the batch is LidRequired').toBeGreaterThan(0);
      // destroy the highest; the dump lists what is left
      expect(await controlMain('vport', ['destroy', host.desc, '--socket', sock, '--json'], io)).toBe(0);
      expect(JSON.parse(out.pop()!)).toMatchObject({ destroyed: [{ index: 5 }] });
      await sm.subnet.sm.sweep('light');
      expect(await controlMain('dump', ['vports', '--socket', sock], io)).toBe(0);
      const dump = out.pop()!;
      expect(dump).toContain(`HCA ${formatGuid(host.guid)} '${host.desc}' port 1`);
      expect(dump).toContain('4 vports on 1 ports');
      // bad requests: an error that says what to give, the SM carries on
      await expect(controlRequest(sock, { cmd: 'vport', action: 'create', node: 'no-such-host', port: 1, count: 1 })).rejects.toThrow(/no node no-such-host/);
      await expect(controlRequest(sock, { cmd: 'vport', action: 'create', node: host.desc, port: 1, count: 0 })).rejects.toThrow(/count 0 is not 1\.\.1024/);
      expect(() => vportRequestOf('resize', 'h', undefined)).toThrow(ControlError);
      expect(vportRequestOf('create', 'a:b:2', '7')).toEqual({ cmd: 'vport', action: 'create', node: 'a:b', port: 2, count: 7 });
    } finally {
      await new Promise((r) => server.close(r));
      await sm.stop();
    }
  });

  it('is refused without the embedded simulated fabric', async () => {
    const sock = path.join(mkdtempSync(path.join(os.tmpdir(), 'ibsm-vport-')), 'ibsm.sock');
    const server = await serveControl(sock, { status: () => ({}), resweep: async () => ({}), reroute: async () => ({}), dump: () => '', topo: () => '' }, new Logger(new MemorySink()));
    try {
      await expect(controlRequest(sock, { cmd: 'vport', action: 'create', node: 'h', port: 1, count: 1 })).rejects.toThrow(/needs the embedded simulated fabric/);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
