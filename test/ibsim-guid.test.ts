/** `ibsm run --umad --guid GUID` picks the SM's port by port GUID (as `opensm -g`), on ibsim through
 * the real libibumad, with ibnetdiscover as the witness of which port became the SM's. umad2sim
 * shows a client one port of its SIM_HOST (port 1), so the other port of a two-port HCA is the GUID
 * no local port has. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { startIbsim, runPreloaded, IBSIM_EXAMPLES } from './helpers/ibsim.js';
import { parseIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { loadFabricSpec } from '../src/model/load.js';
import { logRe } from './helpers/log-lines.js';

const CLI = path.resolve('dist/cli/main.js');
const TIMEOUT = 60_000;
const hex = (g: bigint): string => `0x${g.toString(16).padStart(16, '0')}`;

describe('ibsm run --guid on ibsim', () => {
  it(
    'runs on the port with that GUID, and refuses a GUID no local port has (naming the ports there are)',
    async () => {
      const file = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca2port');
      const topo = loadFabricSpec(file);
      const hca = topo.nodes.find((n) => n.desc === 'Hca1')!;
      const port1 = hca.ports[1]!;
      const port2 = hca.ports[2]!;
      const ib = await startIbsim(file);
      try {
        const r = await runPreloaded(process.execPath, [CLI, 'run', '--umad', '--once', '--guid', hex(port1.guid), '--guid2lid', 'none'], { ibsim: ib, simHost: 'Hca1', timeoutMs: TIMEOUT });
        expect(r.stderr).toMatch(logRe('IBSM-1001'));
        expect(r.code).toBe(0);
        expect(r.stderr).toMatch(logRe('IBSM-8001', `backend=umad port=\\S+/1 portGuid=${hex(port1.guid)}`));
        // under umad2sim the MADs on the wire are capped by the socket send buffer, the RPC's 64
        // outstanding wait in the addon's queue (src/api/backend.ts umadWindow)
        const sndbuf = Number(readFileSync('/proc/sys/net/core/wmem_default', 'utf8'));
        expect(r.stderr).toMatch(new RegExp(`MADs in flight capped by the socket send buffer window=${Math.min(64, Math.max(1, Math.floor(sndbuf / 1280 / 8)))} sndbuf=${sndbuf} outstanding=64`));
        // The witness: the SM's port gets the first LID (ibsm gives its own port LID 1).
        const seen = parseIbnetdiscover((await runPreloaded('ibnetdiscover', [], { ibsim: ib, timeoutMs: 30_000 })).stdout);
        expect(seen.nodes.find((n) => n.guid === hca.guid)!.ports[1]!.lid).toBe(1);

        const bad = await runPreloaded(process.execPath, [CLI, 'run', '--umad', '--once', '--guid', hex(port2.guid), '--guid2lid', 'none'], { ibsim: ib, simHost: 'Hca1', timeoutMs: TIMEOUT });
        expect(bad.code).toBe(1);
        // the fatal line: its code, the error's type and the ports there are
        expect(bad.stderr).toMatch(logRe('IBSM-9103'));
        expect(bad.stderr).toContain('errorType=PortNotFoundError');
        expect(bad.stderr).toContain(`no local port has GUID ${hex(port2.guid)} (ports: `);
        expect(bad.stderr).toContain(`/1 ${hex(port1.guid)})`);
        expect(bad.stderr).not.toMatch(logRe('IBSM-1001'));
      } finally {
        await ib.stop();
      }
    },
    TIMEOUT * 3,
  );
});
