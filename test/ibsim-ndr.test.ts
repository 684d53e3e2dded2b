/** AttributeModifier bit 31 (SMSupportExtendedSpeeds) on ibsim (issue #30): ibsim's CA ports
 * advertise IsExtendedSpeedsSupported, so ibsm reads them again with bit 31 and sets them with
 * it; ibsim masks the bit off (`portnum &= 0x7fffffff`) and answers as without it. The real tools
 * are the witness: `smpquery -x` (which sets bit 31) and `smpquery` answer alike, and the Sets
 * ibsm sent with the bit took effect. */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { startIbsim, runPreloaded, IBSIM_EXAMPLES, type Ibsim } from './helpers/ibsim.js';

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
        expect(r.stderr).toMatch(/SUBNET UP/);
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
