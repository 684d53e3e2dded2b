/** AttributeModifier bit 31 (SMSupportExtendedSpeeds) on ibsim (issue #30): ibsim's CA ports
 * advertise IsExtendedSpeedsSupported, so ibsm reads them again with bit 31 and sets them with
 * it; ibsim masks the bit off (`portnum &= 0x7fffffff`) and answers as without it. The real tools
 * are the witness: `smpquery -x` (which sets bit 31) and `smpquery` answer alike, and the Sets
 * ibsm sent with the bit took effect. */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { startIbsim, runPreloaded, IBSIM_EXAMPLES, type Ibsim } from './helpers/ibsim.js';
import { FabricBuilder } from '../src/model/generators.js';
import { fabricToJson } from '../src/model/json.js';
import { NodeType } from '../src/wire/mad.js';
import { logRe } from './helpers/log-lines.js';

const CLI = path.resolve('dist/cli/main.js');
const TIMEOUT = 60_000;

async function tool(ib: Ibsim, args: string[], host?: string): Promise<string> {
  const r = await runPreloaded('smpquery', args, { ibsim: ib, timeoutMs: 30_000, ...(host ? { simHost: host } : {}) });
  if (r.code !== 0) throw new Error(`smpquery ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

describe('bit 31 on ibsim', () => {
  it(
    'smpquery -x answers as smpquery does on a port with IsExtendedSpeedsSupported; ibsm sets such ports with bit 31 and they go ACTIVE with its SM LID',
    async () => {
      const ib = await startIbsim(path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca'));
      try {
        const plain = await tool(ib, ['-D', 'portinfo', '0', '1'], 'Hca1');
        const ext = await tool(ib, ['-x', '-D', 'portinfo', '0', '1'], 'Hca1');
        expect(plain).toMatch(/IsExtendedSpeedsSupported/);
        expect(ext).toBe(plain);
        const r = await runPreloaded(process.execPath, [CLI, 'run', '--umad', '--once', '--verbose'], { ibsim: ib, timeoutMs: TIMEOUT });
        expect(r.stderr).toMatch(logRe('IBSM-1001'));
        expect(r.code).toBe(0);
        const after = await tool(ib, ['-x', '-D', 'portinfo', '0', '1'], 'Hca1');
        expect(after).toMatch(/^LinkState:\.+Active$/m);
        expect(after).toMatch(/^SMLid:\.+1$/m);
        expect(after).toMatch(/^Lid:\.+[1-9]\d*$/m);
      } finally {
        await ib.stop();
      }
    },
    TIMEOUT * 2,
  );
});

describe('bit 31 on the wire, as ibsim logs it', () => {
  it(
    'ibsim -d logs every PortInfo SMP\'s AttributeModifier before it masks bit 31: to each HCA port one Get and both Sets (ARMED, ACTIVE), all with the bit (a port never seen is read with it from the start: ibsim answers in full); every switch port, port 0 first, with it',
    async () => {
      const ib = await startIbsim(path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca'), { args: ['-d'] });
      try {
        const r = await runPreloaded(process.execPath, [CLI, 'run', '--umad', '--once'], { ibsim: ib, timeoutMs: TIMEOUT });
        expect(r.code, r.stderr).toBe(0);
        const log = ib.log();
        // "process_packet: packet (attr 0x15 mod 0x80000001) reached host Hca1 port 1"
        const mods = (host: string): string[] => [...log.matchAll(new RegExp(`attr 0x15 mod (0x[0-9a-f]+)[)] reached host ${host} port`, 'g'))].map((m) => m[1]!);
        for (const h of ['Hca1', 'Hca2', 'Hca3', 'Hca4']) expect([h, mods(h)]).toEqual([h, ['0x80000001', '0x80000001', '0x80000001']]);
        for (const sw of ['Switch1', 'Switch2']) {
          const m = mods(sw);
          expect(m[0]).toBe('0x80000000');
          expect(m.length).toBeGreaterThan(10);
          for (const x of m) expect(Number(x) >>> 31, `${sw} ${x}`).toBe(1);
        }
      } finally {
        await ib.stop();
      }
    },
    TIMEOUT * 2,
  );
});

describe('ibsm discover output on ibsim', () => {
  it(
    'a fabric of HDR leaves with 2x hosts under an HDR spine loads into ibsim with the same widths and speeds (ibsim 0.10 knows speeds up to HDR; NDR/XDR it reads as SDR)',
    async () => {
      const out = execFileSync(process.execPath, [CLI, 'discover', '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2,speed=HDR,hostwidth=2x'], { encoding: 'utf8' });
      const rates = (text: string): string[] => [...text.matchAll(/lid \d+ (\d+x[A-Z]+)/g)].map((m) => m[1]!).sort();
      expect(new Set(rates(out))).toEqual(new Set(['2xHDR', '4xHDR']));
      const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'ibsm-hdr-')), 'hdr.net');
      writeFileSync(file, out);
      const ib = await startIbsim(file);
      try {
        const r = await runPreloaded('ibnetdiscover', [], { ibsim: ib, timeoutMs: 30_000 });
        expect(r.code).toBe(0);
        expect(rates(r.stdout)).toEqual(rates(out));
      } finally {
        await ib.stop();
      }
    },
    TIMEOUT,
  );
});

describe('ibsm discover output of a mixed NDR/XDR fabric on ibsim', () => {
  it(
    'Quantum-X800 and Quantum-2 switches, a 2x XDR, a 1x NDR and an HDR host: ibsim reads back every width and the HDR speed, the NDR/XDR links as SDR (ibsim 0.10 has no NDR or XDR), and every node\'s devid',
    async () => {
      // S0 (NDR switch) 4x to S1 (XDR switch); H0 2x XDR and H1 4x XDR on S1; H2 1x NDR and H3 4x HDR on S0
      const b = new FabricBuilder();
      const s0 = b.addNode(NodeType.Switch, 'S0', 8, { vendorId: 0x2c9, deviceId: 0xd2f2 });
      const s1 = b.addNode(NodeType.Switch, 'S1', 8, { vendorId: 0x2c9, deviceId: 0xd2f4 });
      const h = [0x1023, 0x1023, 0x1021, 0x101b].map((dev, i) => b.addNode(NodeType.CA, `H${i} HCA-1`, 1, { vendorId: 0x2c9, deviceId: dev }));
      b.link(s0, 1, s1, 1, '4x', 'NDR', { speed: 'XDR' });
      b.link(h[0]!, 1, s1, 2, '2x', 'XDR', { width: '4x' });
      b.link(h[1]!, 1, s1, 3, '4x', 'XDR');
      b.link(h[2]!, 1, s0, 2, '1x', 'NDR');
      b.link(h[3]!, 1, s0, 3, '4x', 'HDR', { speed: 'NDR' });
      const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-mixed-'));
      const json = path.join(dir, 'mixed.json');
      writeFileSync(json, fabricToJson(b.build()));
      const out = execFileSync(process.execPath, [CLI, 'discover', '--sim', json], { encoding: 'utf8' });
      const rates = (text: string): string[] => [...text.matchAll(/lid \d+ (\d+x[A-Z]+)/g)].map((m) => m[1]!).sort();
      const devids = (text: string): string[] => [...text.matchAll(/devid=(0x[0-9a-f]+)/g)].map((m) => m[1]!).sort();
      expect(new Set(rates(out))).toEqual(new Set(['2xXDR', '4xXDR', '1xNDR', '4xNDR', '4xHDR']));
      const file = path.join(dir, 'mixed.net');
      writeFileSync(file, out);
      const ib = await startIbsim(file);
      try {
        const r = await runPreloaded('ibnetdiscover', [], { ibsim: ib, timeoutMs: 30_000 });
        expect(r.code).toBe(0);
        // what ibsim 0.10 knows: SDR..HDR (and FDR10); a speed it does not know it runs at SDR
        const asIbsim = (x: string): string => x.replace(/(NDR|XDR)$/, 'SDR');
        expect(rates(r.stdout)).toEqual(rates(out).map(asIbsim).sort());
        expect(devids(r.stdout)).toEqual(devids(out));
        expect(devids(out)).toEqual(['0x1021', '0x101b', '0x1023', '0x1023', '0xd2f2', '0xd2f4'].sort());
      } finally {
        await ib.stop();
      }
    },
    TIMEOUT,
  );
});
