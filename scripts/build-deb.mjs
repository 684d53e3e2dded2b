#!/usr/bin/env node
// Builds the Debian package of ibsm with dpkg-deb from the single executable (scripts/build-sea.mjs,
// run first) and the files of packaging/ and docs/: no network.
//
//   node scripts/build-deb.mjs [--exe FILE] [--out DIR]   (default dist/sea/ibsm, dist/deb) -> DIR/ibsm_VERSION_ARCH.deb
//
// The maintainer scripts never start the service (a subnet manager must not start by surprise on a
// fabric: `systemctl enable --now ibsm` is the operator's), stop it before removal, and drop the
// addon the executable wrote out (/var/cache/ibsm/native); purge removes /etc/ibsm and the cache.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outIdx = process.argv.indexOf('--out');
const outDir = outIdx > 0 ? path.resolve(process.argv[outIdx + 1]) : path.join(root, 'dist/deb');
const exeIdx = process.argv.indexOf('--exe');
const exe = exeIdx > 0 ? path.resolve(process.argv[exeIdx + 1]) : path.join(root, 'dist/sea/ibsm');
if (!existsSync(exe)) {
  console.error('build-deb: dist/sea/ibsm is missing: run node scripts/build-sea.mjs first');
  process.exit(1);
}
const MAINTAINER = 'ibsm maintainers <ibsm@users.noreply.github.com>';
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const arch = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
const stage = path.join(outDir, `.stage-${process.pid}`);
rmSync(stage, { recursive: true, force: true });
const put = (rel, text, mode = 0o644) => {
  const f = path.join(stage, rel);
  mkdirSync(path.dirname(f), { recursive: true });
  writeFileSync(f, text);
  chmodSync(f, mode);
};

put('usr/sbin/ibsm', readFileSync(exe), 0o755);
// The units as in packaging/, the executable at /usr/sbin.
for (const u of ['ibsm.service', 'ibsm@.service']) put(`lib/systemd/system/${u}`, readFileSync(path.join(root, 'packaging', u), 'utf8').replaceAll('/usr/bin/ibsm', '/usr/sbin/ibsm'));
put('usr/share/man/man8/ibsm.8.gz', gzipSync(readFileSync(path.join(root, 'docs/ibsm.8')), { level: 9 }));
// /etc/ibsm/ibsm.conf: every option with its default, commented out (what `ibsm config` prints,
// its value lines made comments), so the file changes nothing until a line is uncommented.
const empty = path.join(outDir, `.empty-${process.pid}.conf`);
mkdirSync(outDir, { recursive: true });
writeFileSync(empty, '{}\n');
const conf = execFileSync(exe, ['config', '--config', empty], { encoding: 'utf8' }).replace(/^(\/\/ .*\n)+/, '').replace(/^(\s+)"/gm, '$1// "').replace(/^(\s+)\/\/ from: .*\n/gm, '');
rmSync(empty, { force: true });
put('etc/ibsm/ibsm.conf', `// /etc/ibsm/ibsm.conf: ibsm's configuration (ibsm run and ibsm config read it; the command line\n// wins). Every option is here with its default, commented out: uncomment and change a line to set it.\n// \`ibsm config\` prints the effective configuration, \`ibsm config --check\` checks it; man ibsm(8).\n${conf}`);
put('etc/logrotate.d/ibsm', readFileSync(path.join(root, 'packaging/ibsm.logrotate')));
mkdirSync(path.join(stage, 'var/cache/ibsm'), { recursive: true });
put('usr/share/doc/ibsm/copyright', `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: ibsm\n\nFiles: *\nCopyright: 2026 the ibsm authors\nLicense: ${pkg.license}\n Permission is hereby granted, free of charge, to any person obtaining a copy of\n this software, to deal in it without restriction (the MIT license).\n`);
put('usr/share/doc/ibsm/changelog.gz', gzipSync(Buffer.from(`ibsm (${pkg.version}) unstable; urgency=medium\n\n  * Package built from the ibsm sources (scripts/build-deb.mjs).\n\n -- ${MAINTAINER}  ${new Date(0).toUTCString().replace('GMT', '+0000')}\n`), { level: 9 }));

const installedKb = Math.ceil(Number(execFileSync('du', ['-sk', '--apparent-size', stage], { encoding: 'utf8' }).split('\t')[0]));
put(
  'DEBIAN/control',
  `Package: ibsm
Version: ${pkg.version}
Architecture: ${arch}
Maintainer: ${MAINTAINER}
Installed-Size: ${installedKb}
Depends: libibumad3, libc6, libstdc++6, libgcc-s1
Suggests: infiniband-diags
Section: net
Priority: optional
Homepage: https://github.com/ibsm/ibsm
Description: InfiniBand subnet manager and subnet administrator
 ibsm discovers an InfiniBand fabric, assigns LIDs, computes and writes the
 forwarding tables and answers SA queries, as OpenSM does. One executable
 (Node.js inside), started by the systemd unit ibsm.service (or ibsm@GUID
 for one SM per port). The service is never started on installation.
 .
 It does not run beside OpenSM on one port: stop and disable opensm.service
 before enabling ibsm.service there.
`,
);
// What lintian reports that the single executable is by design (a copy of node: zlib and the rest
// linked in, not stripped because strip drops the injected blob and it then crashes at start).
put('usr/share/lintian/overrides/ibsm', 'ibsm: embedded-library zlib [usr/sbin/ibsm]\nibsm: unstripped-binary-or-object [usr/sbin/ibsm]\nibsm: hardening-no-pie [usr/sbin/ibsm]\n');
put('DEBIAN/conffiles', '/etc/ibsm/ibsm.conf\n/etc/logrotate.d/ibsm\n');
put(
  'DEBIAN/postinst',
  `#!/bin/sh
set -e
# Never started here: a subnet manager must not start by surprise on a fabric.
if [ "$1" = configure ]; then
  # An upgrade: the addon the previous executable wrote out is not this one's.
  rm -rf /var/cache/ibsm/native
  if [ -d /run/systemd/system ]; then systemctl daemon-reload >/dev/null 2>&1 || true; fi
fi
exit 0
`,
  0o755,
);
put(
  'DEBIAN/prerm',
  `#!/bin/sh
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
  systemctl stop ibsm.service 'ibsm@*.service' >/dev/null 2>&1 || true
fi
exit 0
`,
  0o755,
);
put(
  'DEBIAN/postrm',
  `#!/bin/sh
set -e
case "$1" in
  remove)
    rm -rf /var/cache/ibsm/native
    rmdir /var/cache/ibsm 2>/dev/null || true
    ;;
  purge)
    rm -rf /var/cache/ibsm /etc/ibsm
    ;;
esac
if [ -d /run/systemd/system ]; then systemctl daemon-reload >/dev/null 2>&1 || true; fi
exit 0
`,
  0o755,
);

mkdirSync(outDir, { recursive: true });
const deb = path.join(outDir, `ibsm_${pkg.version}_${arch}.deb`);
const b = spawnSync('dpkg-deb', ['--root-owner-group', '-Zxz', '-z6', '--build', stage, deb], { encoding: 'utf8' });
rmSync(stage, { recursive: true, force: true });
if (b.status !== 0) {
  console.error(`build-deb: dpkg-deb: ${b.stderr.trim()}`);
  process.exit(1);
}
console.log(`build-deb: ${deb}`);
