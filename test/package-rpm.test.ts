/** The RPM (#36): scripts/build-rpm.mjs makes it from the single executable (scripts/build-sea.mjs)
 * and the files the .deb holds (scripts/package-files.mjs). Checked with rpm's and dpkg's own tools,
 * never with the build script's code: rpm -qp's metadata and requirements (only libraries the
 * executable and its addon link), its files (names, modes, owners, sizes and digests) against
 * dpkg-deb's listing of the .deb built from the same executable in this test, the config files
 * against the .deb's conffiles, the scriptlets (no service start), rpmlint; then it is installed
 * with its scriptlets into a private root (a chroot with sh, rm, rmdir and a systemctl that logs
 * its arguments: rpm --root runs scriptlets there), runs from there, and is erased to nothing but
 * the edited config saved as .rpmsave. No RHEL machine here: the RPM is never installed on /.
 * Root (for chroot and mknod; CI runs as root), its own bundle, tmp dirs and rpm database: it runs
 * beside test/package-deb (which installs the .deb on /) without touching what that one checks. */
import { afterAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { logRe } from './helpers/log-lines.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const PKG = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; license: string };
const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-rpm-'));
// Out of dist/ (what npm packs, while test/package packs it), and not test/package-deb's.
const BUNDLE = path.join(ROOT, '.tmp', `bundle-rpm-${process.pid}`);
const run = promisify(execFile);
const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, timeout: 120_000 });
const sha256 = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');
// Where the .deb's files are in the RPM: RPM distributions' unit directory, the copyright as a
// %license; Debian's changelog.gz (the RPM's is in its header) and lintian overrides stay Debian's.
const rpmPath = (debPath: string): string | undefined =>
  debPath === '/usr/share/doc/ibsm/changelog.gz' || debPath.startsWith('/usr/share/lintian/')
    ? undefined
    : debPath.replace(/^\/lib\/systemd\//, '/usr/lib/systemd/').replace(/^\/usr\/share\/doc\/ibsm(?=\/|$)/, '/usr/share/licenses/ibsm');
// The directories the package owns (all others on the way belong to the system).
const OWN_DIRS = ['/etc/ibsm', '/usr/lib/ibsm', '/usr/share/licenses/ibsm', '/var/cache/ibsm'];
// rpmlint's errors that stay, with why: unsigned (signing is the distributor's, rpmsign --addsign);
// no Requires: logrotate (the .deb has none either: the snippet is inert without logrotate, which
// every RHEL install has); the logs are /var/log/ibsm*.log, in /var/log itself (the filesystem's);
// /usr/sbin/ibsm, the launcher (native/ibsm-launch.c), is static on purpose: no dynamic loader runs
// before its first instruction blocks the signals (#28), and it uses nothing of libc a security
// update would change the behaviour of (sigprocmask, signalfd, fork, exec, poll, kill).
const RPMLINT_ACCEPTED = ['no-signature', 'missing-dependency-to-logrotate', 'logrotate-log-dir-not-packaged', 'statically-linked-binary'];

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(BUNDLE, { recursive: true, force: true });
});

/** A root rpm can run scriptlets in (chroot): /bin/sh, rm, rmdir and their libraries from this
 * host, /dev/null, /run/systemd/system (the scriptlets' "systemd runs" test) and a systemctl that
 * appends its arguments to /systemctl.log. Returns the files it made (not the package's). */
function scriptletRoot(r: string): Set<string> {
  const made = new Set<string>();
  const copy = (from: string, to: string) => {
    mkdirSync(path.dirname(path.join(r, to)), { recursive: true });
    copyFileSync(realpathSync(from), path.join(r, to));
    chmodSync(path.join(r, to), 0o755);
    made.add(to);
  };
  const tools = ['/bin/sh', '/bin/rm', '/bin/rmdir'];
  for (const t of tools) copy(t, `/usr/bin/${path.basename(t)}`);
  symlinkSync('usr/bin', path.join(r, 'bin'));
  made.add('/bin');
  for (const lib of new Set(sh('ldd', tools).match(/\/\S+\.so[\w.]*/g))) copy(lib, lib);
  mkdirSync(path.join(r, 'dev'));
  execFileSync('mknod', ['-m', '666', path.join(r, 'dev/null'), 'c', '1', '3']);
  made.add('/dev/null');
  mkdirSync(path.join(r, 'run/systemd/system'), { recursive: true });
  writeFileSync(path.join(r, 'usr/bin/systemctl'), '#!/bin/sh\necho "$*" >> /systemctl.log\n', { mode: 0o755 });
  made.add('/usr/bin/systemctl');
  made.add('/systemctl.log');
  return made;
}

/** Every file (not directory) under r, as /paths. */
function filesUnder(r: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(r, rel), { withFileTypes: true })) {
    const p = `${rel}/${e.name}`;
    if (e.isDirectory()) out.push(...filesUnder(r, p));
    else out.push(p);
  }
  return out;
}

describe('the RPM', () => {
  it('holds the .deb\'s files, installs into a private root with its scriptlets, runs there and erases to its edited config', async () => {
    expect(process.getuid?.(), 'the private root needs chroot and mknod: root (CI runs as root)').toBe(0);
    for (const tool of ['rpmbuild', 'rpm', 'rpmlint', 'dpkg-deb']) expect(spawnSync(tool, ['--version']).status, `${tool} is missing: .ci/run installs it (Debian: rpm, rpmlint, dpkg-dev)`).toBe(0);
    const exe = path.join(dir, 'ibsm');
    // Its own bundle, not dist/bundle, which test/bundle rebuilds meanwhile.
    // (asynchronous: a worker blocked for a minute misses vitest's RPC deadline)
    await run(process.execPath, [path.join(ROOT, 'scripts/build-bundle.mjs'), '--out', BUNDLE], { cwd: ROOT, timeout: 180_000 });
    await run(process.execPath, [path.join(ROOT, 'scripts/build-sea.mjs'), '--out', exe, '--bundle', BUNDLE], { cwd: ROOT, timeout: 120_000 });
    // Both packages from the one executable (each compresses it with xz: side by side).
    const debDir = path.join(dir, 'deb');
    const rpmDir = path.join(dir, 'rpm');
    await Promise.all([
      run(process.execPath, [path.join(ROOT, 'scripts/build-deb.mjs'), '--exe', exe, '--out', debDir], { cwd: ROOT, timeout: 400_000 }),
      run(process.execPath, [path.join(ROOT, 'scripts/build-rpm.mjs'), '--exe', exe, '--out', rpmDir], { cwd: ROOT, timeout: 400_000 }),
    ]);
    const deb = path.join(debDir, readdirSync(debDir).find((f) => f.endsWith('.deb'))!);
    const arch = os.machine();
    expect(readdirSync(rpmDir)).toEqual([`ibsm-${PKG.version}-1.${arch}.rpm`]);
    const rpm = path.join(rpmDir, `ibsm-${PKG.version}-1.${arch}.rpm`);
    const q = (...args: string[]) => sh('rpm', ['-qp', ...args, rpm]);

    // metadata
    expect(q('--queryformat', '%{NAME}|%{VERSION}|%{RELEASE}|%{ARCH}|%{LICENSE}|%{SUMMARY}')).toBe(`ibsm|${PKG.version}|1|${arch}|${PKG.license}|${sh('dpkg-deb', ['-f', deb, 'Description']).split('\n')[0]}`);
    // Requires: the libraries the executable links (ldd) and its addon's libibumad (the .deb's
    // libibumad3), by soname; /bin/sh for the scriptlets; rpm's own features. Nothing else (no systemd).
    const requires = q('--requires').trim().split('\n');
    expect(requires).toContain('libibumad.so.3()(64bit)');
    expect(sh('dpkg-deb', ['-f', deb, 'Depends'])).toMatch(/libibumad3/);
    const linked = new Set([...sh('ldd', [exe, path.join(ROOT, 'build/Release/ibsm_umad.node')]).matchAll(/^\s*(\S+\.so\.\d+)/gm)].map((m) => path.basename(m[1])));
    for (const r of requires) {
      const soname = /^([\w.+-]+\.so\.\d+)\(/.exec(r)?.[1];
      if (soname) expect(linked.has(soname), `${r}: a library the executable or its addon links`).toBe(true);
      else expect(r, 'a requirement that is not a library').toMatch(/^(\/bin\/sh|rpmlib\(.*\) <= [\d.-]+|config\(ibsm\) = .*|rtld\(GNU_HASH\))$/);
    }

    // The files: the .deb's, at their RPM paths, same mode, owner, size and bytes.
    const debRoot = path.join(dir, 'debroot');
    sh('dpkg-deb', ['-x', deb, debRoot]);
    const debEntries = sh('dpkg-deb', ['-c', deb])
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/))
      .map(([perms, owner, size, , , name]) => ({ perms, owner, size, name: name.replace(/^\.(.*?)\/?$/, '$1') }));
    const expected = debEntries
      .filter((e) => !e.perms.startsWith('d') && rpmPath(e.name))
      .map((e) => `${e.perms} ${e.owner} ${e.size} ${sha256(path.join(debRoot, e.name))} ${rpmPath(e.name)}`)
      .concat(debEntries.filter((e) => e.perms.startsWith('d') && OWN_DIRS.includes(rpmPath(e.name)!)).map((e) => `${e.perms} ${e.owner} 0  ${rpmPath(e.name)}`));
    const inRpm = q('--queryformat', '[%{FILEMODES:perms} %{FILEUSERNAME}/%{FILEGROUPNAME} %{FILESIZES} %{FILEDIGESTS} %{FILENAMES}\n]').trim().split('\n');
    expect(inRpm.sort()).toEqual(expected.sort());
    expect(q('-l').trim().split('\n').sort()).toEqual(expected.map((e) => e.split(' ').at(-1)).sort());
    expect(sha256(path.join(debRoot, 'usr/lib/ibsm/ibsm'))).toBe(sha256(exe));
    // config files: the .deb's conffiles, kept when edited
    expect(q('-c').trim().split('\n').sort()).toEqual(sh('dpkg-deb', ['-I', deb, 'conffiles']).trim().split('\n').sort());
    expect(q('--queryformat', '[%{FILEFLAGS:fflags} %{FILENAMES}\n]')).toMatch(/^cn \/etc\/ibsm\/ibsm\.conf$/m);

    // Scriptlets: no start, enable or preset; the stop in %preun, only at an erase.
    const scripts = q('--scripts');
    expect(scripts).not.toMatch(/systemctl\s+(\S+\s+)*(start|restart|try-restart|enable|preset|reload-or-restart)\b/);
    expect(scripts).toMatch(/preuninstall scriptlet[^\n]*\nif \[ "\$1" -eq 0 \][^\n]*\n\s*systemctl stop ibsm\.service 'ibsm@\*\.service'/);
    // ... the commands of the .deb's maintainer scripts (dpkg-deb -e), nothing else
    const ctrl = path.join(dir, 'debctrl');
    sh('dpkg-deb', ['-e', deb, ctrl]);
    const commands = (text: string) => new Set(text.split('\n').map((l) => l.trim()).filter((l) => /^(rm|rmdir|systemctl|if \[ -d \/run\/systemd\/system \]; then systemctl)\b/.test(l)));
    const debCommands = commands(['postinst', 'prerm', 'postrm'].map((s) => readFileSync(path.join(ctrl, s), 'utf8')).join('\n'));
    const rpmCommands = commands(scripts);
    expect([...rpmCommands].filter((c) => !debCommands.has(c)), 'RPM scriptlet commands the .deb does not run').toEqual([]);
    expect([...debCommands].filter((c) => !rpmCommands.has(c) && !c.includes('/etc/ibsm')), 'the .deb\'s commands (but purge) the RPM does not run').toEqual([]);

    // rpmlint: its errors are the accepted ones (its whole output in the failure message)
    const lint = await run('rpmlint', [rpm], { encoding: 'utf8', timeout: 180_000 }).catch((e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? '', stderr: e.stderr ?? String(e) }));
    const errors = [...lint.stdout.matchAll(/^ibsm\.\S+: E: (\S+)/gm)].map((m) => m[1]);
    expect(lint.stdout, lint.stderr).toMatch(/1 packages and 0 specfiles checked/);
    expect(errors.filter((e) => !RPMLINT_ACCEPTED.includes(e)), lint.stdout).toEqual([]);

    // Installed into a private root, scriptlets run there (chroot).
    const r = path.join(dir, 'root');
    mkdirSync(r);
    const scaffold = scriptletRoot(r);
    // an earlier executable's addon: %post drops it (as the .deb's postinst at an upgrade)
    mkdirSync(path.join(r, 'var/cache/ibsm/native'), { recursive: true });
    writeFileSync(path.join(r, 'var/cache/ibsm/native/ibsm_umad-0.0.0-old.node'), 'old');
    const rpmR = (...args: string[]) => spawnSync('rpm', ['--root', r, '--dbpath', '/var/lib/rpm', ...args], { encoding: 'utf8', timeout: 120_000 });
    const inst = rpmR('-i', '--nodeps', rpm);
    expect(inst.status, inst.stderr).toBe(0);
    const verify = rpmR('-V', '--nodeps', 'ibsm');
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    expect(verify.stdout, 'rpm -V: every file as the header says').toBe('');
    expect(existsSync(path.join(r, 'var/cache/ibsm/native')), '%post dropped the old addon').toBe(false);
    expect(statSync(path.join(r, 'var/cache/ibsm')).isDirectory()).toBe(true);
    expect(readFileSync(path.join(r, 'systemctl.log'), 'utf8'), 'installing never starts the SM').toBe('daemon-reload\n');
    // the single executable at /usr/lib/ibsm, run by the launcher at /usr/sbin (native/ibsm-launch.c)
    expect(sha256(path.join(r, 'usr/lib/ibsm/ibsm'))).toBe(sha256(exe));
    const installed = path.join(r, 'usr/sbin/ibsm');

    // It runs from there (no node on PATH), with the config the package installed.
    const env = { PATH: path.join(r, 'usr/sbin'), HOME: dir };
    const v = spawnSync(installed, ['--version'], { env, encoding: 'utf8' });
    expect(v.stdout.trim(), v.stderr).toMatch(new RegExp(`^ibsm ${PKG.version.replaceAll('.', '\\.')}\\b`));
    const conf = path.join(r, 'etc/ibsm/ibsm.conf');
    const check = spawnSync(installed, ['config', '--check', '--config', conf], { env, encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    const once = spawnSync(installed, ['run', '--config', conf, '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2', '--once'], { env, encoding: 'utf8', cwd: dir, timeout: 60_000 });
    expect(once.status, once.stderr).toBe(0);
    expect(once.stdout + once.stderr).toMatch(logRe('IBSM-1001', 'nodes=7 '));

    // Erased: the service stopped first, the addon the executable wrote out and the cache dropped,
    // the edited config kept as .rpmsave, the unedited logrotate snippet gone with the rest.
    mkdirSync(path.join(r, 'var/cache/ibsm/native'), { mode: 0o700 });
    writeFileSync(path.join(r, 'var/cache/ibsm/native/ibsm_umad-x.node'), 'addon');
    appendFileSync(conf, '// edited by the operator\n');
    const erase = rpmR('-e', 'ibsm');
    expect(erase.status, erase.stderr).toBe(0);
    expect(readFileSync(path.join(r, 'systemctl.log'), 'utf8').split('\n'), '%preun stops, nothing starts').toEqual(['daemon-reload', "stop ibsm.service ibsm@*.service", 'daemon-reload', '']);
    expect(rpmR('-q', 'ibsm').status, 'no longer installed').not.toBe(0);
    const left = filesUnder(r).filter((f) => !scaffold.has(f) && !f.startsWith('/var/lib/rpm/') && !f.startsWith('/var/tmp/rpm-tmp.'));
    expect(left).toEqual(['/etc/ibsm/ibsm.conf.rpmsave']);
    expect(readFileSync(path.join(r, 'etc/ibsm/ibsm.conf.rpmsave'), 'utf8')).toMatch(/edited by the operator\n$/);
    expect(existsSync(path.join(r, 'var/cache/ibsm')), '%postun dropped the cache').toBe(false);
  }, 600_000);
});
