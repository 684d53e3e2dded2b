/** The systemd units in packaging/: every option their ExecStart gives `ibsm run` is one the
 * command takes (parsed by the one parser, %i replaced by a port GUID), reload is SIGHUP, and the
 * package ships them. */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseCommandLine } from '../src/config/parse.js';
import { SET_ENV } from '../scripts/launcher.mjs';

const unit = (name: string): Map<string, string> => new Map(readFileSync(`packaging/${name}`, 'utf8').split('\n').filter((l) => /^\w+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));

describe('systemd units', () => {
  for (const name of ['ibsm.service', 'ibsm@.service']) {
    it(`${name}: ibsm run with options it takes; reload is a heavy sweep`, () => {
      const u = unit(name);
      const argv = u.get('ExecStart')!.replace(/%i/g, '0x0002c90300a1b2c3').split(/\s+/);
      expect(argv.slice(0, 2)).toEqual(['/usr/bin/ibsm', 'run']);
      const args = parseCommandLine('run', argv.slice(2));
      expect(args.positionals).toEqual([]);
      expect(args.values.get('umad')).toBe(true);
      if (name.includes('@')) expect(args.values.get('guid')).toBe(0x0002c90300a1b2c3n);
      expect(u.get('ExecReload')).toBe('/bin/kill -HUP $MAINPID');
      expect(u.get('KillSignal')).toBe('SIGTERM');
      // the environment the bin's shebang sets (one malloc arena): the single executable has no shebang
      expect(u.get('Environment')).toBe((SET_ENV as string[]).join(' '));
    });
  }
  it('the package ships them and the man page', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { files: string[] };
    expect(pkg.files).toContain('packaging');
    expect(pkg.files.some((f) => f.startsWith('docs'))).toBe(true);
  });
});
