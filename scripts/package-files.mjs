// The files of the ibsm package, one description for both formats: scripts/build-deb.mjs (the .deb)
// and scripts/build-rpm.mjs (the RPM) stage them and differ only where the distributions do:
//   - the systemd units: /lib/systemd/system on Debian, /usr/lib/systemd/system on RPM distributions;
//   - the copyright: /usr/share/doc/ibsm/copyright on Debian, a %license file on RPM distributions;
//   - Debian only: the changelog.gz (RPM keeps its changelog in the header) and lintian's overrides.
// Also one text for what the maintainer scripts do (the .deb's postinst/prerm/postrm, the RPM's
// %post/%preun/%postun) and for the package's summary and description.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { buildLauncher } from './build-native.mjs';
import { SET_ENV, UNSET_ENV } from './launcher.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const PKG = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
export const MAINTAINER = 'ibsm maintainers <ibsm@users.noreply.github.com>';
export const HOMEPAGE = 'https://github.com/ibsm/ibsm';
export const SUMMARY = 'InfiniBand subnet manager and subnet administrator';
/** The long description, '' between paragraphs. */
export const DESCRIPTION = [
  'ibsm discovers an InfiniBand fabric, assigns LIDs, computes and writes the',
  'forwarding tables and answers SA queries, as OpenSM does. One executable',
  '(Node.js inside), started by the systemd unit ibsm.service (or ibsm@GUID',
  'for one SM per port). The service is never started on installation.',
  '',
  'It does not run beside OpenSM on one port: stop and disable opensm.service',
  'before enabling ibsm.service there.',
];
export const UNITS = ['ibsm.service', 'ibsm@.service'];
export const CACHE_DIR = '/var/cache/ibsm';

/** What the maintainer scripts run (never a service start: a subnet manager must not start by
 * surprise on a fabric; `systemctl enable --now ibsm` is the operator's). */
export const SCRIPT = {
  // the addon the executable wrote out (at an upgrade: the previous executable's, not this one's)
  dropNative: `rm -rf ${CACHE_DIR}/native`,
  // the cache directory itself when nothing else is left in it (the @-units' guid2lid stays)
  dropCacheIfEmpty: `rmdir ${CACHE_DIR} 2>/dev/null || true`,
  stop: "systemctl stop ibsm.service 'ibsm@*.service' >/dev/null 2>&1 || true",
  daemonReload: 'if [ -d /run/systemd/system ]; then systemctl daemon-reload >/dev/null 2>&1 || true; fi',
};

/**
 * The package's files for `format` ('deb' | 'rpm'), paths relative to /, in the order staged:
 *   { path, mode, data }   a file (data: Buffer or string)
 *   { path, mode, dir }    a directory the package owns
 * `config`: a configuration file the operator edits (dpkg conffile, RPM %config(noreplace));
 * `license`: the copyright (RPM %license). `exe` is the single executable (scripts/build-sea.mjs),
 * at /usr/lib/ibsm/ibsm: it also writes the commented /etc/ibsm/ibsm.conf. /usr/sbin/ibsm, the
 * command and the units' ExecStart, is the launcher (native/ibsm-launch.c) that runs it: the
 * process signals go to, handling them from its first instant (issue #28). `work`: a directory
 * for scratch files.
 */
export function packageFiles(format, exe, work) {
  if (format !== 'deb' && format !== 'rpm') throw new Error(`package-files: no format ${format}`);
  const deb = format === 'deb';
  const unitDir = deb ? 'lib/systemd/system' : 'usr/lib/systemd/system';
  mkdirSync(work, { recursive: true });
  const launch = path.join(work, `.ibsm-launch-${process.pid}`);
  // The single executable takes no node flags; the environment as the bin's shebang.
  buildLauncher({ out: launch, target: '../lib/ibsm/ibsm', unset: UNSET_ENV, set: SET_ENV });
  const files = [
    { path: 'usr/sbin/ibsm', mode: 0o755, data: readFileSync(launch) },
    { path: 'usr/lib/ibsm', mode: 0o755, dir: true },
    { path: 'usr/lib/ibsm/ibsm', mode: 0o755, data: readFileSync(exe) },
  ];
  rmSync(launch, { force: true });
  // The units as in packaging/, the command at /usr/sbin.
  for (const u of UNITS) files.push({ path: `${unitDir}/${u}`, mode: 0o644, data: readFileSync(path.join(ROOT, 'packaging', u), 'utf8').replaceAll('/usr/bin/ibsm', '/usr/sbin/ibsm') });
  files.push({ path: 'usr/share/man/man8/ibsm.8.gz', mode: 0o644, data: gzipSync(readFileSync(path.join(ROOT, 'docs/ibsm.8')), { level: 9 }) });
  files.push({ path: 'etc/ibsm', mode: 0o755, dir: true });
  files.push({ path: 'etc/ibsm/ibsm.conf', mode: 0o644, config: true, data: commentedConfig(exe, work) });
  files.push({ path: 'etc/logrotate.d/ibsm', mode: 0o644, config: true, data: readFileSync(path.join(ROOT, 'packaging/ibsm.logrotate')) });
  files.push({ path: CACHE_DIR.slice(1), mode: 0o755, dir: true });
  const docDir = deb ? 'usr/share/doc/ibsm' : 'usr/share/licenses/ibsm';
  files.push({ path: docDir, mode: 0o755, dir: true });
  files.push({ path: `${docDir}/copyright`, mode: 0o644, license: true, data: `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: ibsm\n\nFiles: *\nCopyright: 2026 the ibsm authors\nLicense: ${PKG.license}\n Permission is hereby granted, free of charge, to any person obtaining a copy of\n this software, to deal in it without restriction (the MIT license).\n` });
  if (deb) {
    files.push({ path: 'usr/share/doc/ibsm/changelog.gz', mode: 0o644, data: gzipSync(Buffer.from(`ibsm (${PKG.version}) unstable; urgency=medium\n\n  * Package built from the ibsm sources (scripts/build-deb.mjs).\n\n -- ${MAINTAINER}  ${new Date(0).toUTCString().replace('GMT', '+0000')}\n`), { level: 9 }) });
    // What lintian reports that the single executable is by design (a copy of node: zlib and the
    // rest linked in, not stripped because strip drops the injected blob and it then crashes at start).
    const exeOverrides = ['embedded-library zlib', 'unstripped-binary-or-object', 'hardening-no-pie'].map((t) => `ibsm: ${t} [usr/lib/ibsm/ibsm]\n`);
    files.push({ path: 'usr/share/lintian/overrides/ibsm', mode: 0o644, data: exeOverrides.join('') });
  }
  return files;
}

/** Writes `files` (packageFiles) under `stage`, with their modes. */
export function stageFiles(stage, files) {
  for (const f of files) {
    const p = path.join(stage, f.path);
    if (f.dir) {
      mkdirSync(p, { recursive: true });
    } else {
      mkdirSync(path.dirname(p), { recursive: true });
      writeFileSync(p, f.data);
    }
    chmodSync(p, f.mode);
  }
}

/** /etc/ibsm/ibsm.conf: every option with its default, commented out (what `ibsm config` prints,
 * its value lines made comments), so the file changes nothing until a line is uncommented. */
function commentedConfig(exe, work) {
  mkdirSync(work, { recursive: true });
  const empty = path.join(work, `.empty-${process.pid}.conf`);
  writeFileSync(empty, '{}\n');
  let conf;
  try {
    conf = execFileSync(exe, ['config', '--config', empty], { encoding: 'utf8' });
  } finally {
    rmSync(empty, { force: true });
  }
  conf = conf.replace(/^(\/\/ .*\n)+/, '').replace(/^(\s+)"/gm, '$1// "').replace(/^(\s+)\/\/ from: .*\n/gm, '');
  return `// /etc/ibsm/ibsm.conf: ibsm's configuration (ibsm run and ibsm config read it; the command line\n// wins). Every option is here with its default, commented out: uncomment and change a line to set it.\n// \`ibsm config\` prints the effective configuration, \`ibsm config --check\` checks it; man ibsm(8).\n${conf}`;
}
