#!/usr/bin/env node
// Builds the Debian package of ibsm with dpkg-deb from the single executable (scripts/build-sea.mjs,
// run first) and the files scripts/package-files.mjs describes (packaging/ and docs/, the ones the
// RPM holds too): no network.
//
//   node scripts/build-deb.mjs [--exe FILE] [--out DIR]   (default dist/sea/ibsm, dist/deb) -> DIR/ibsm_VERSION_ARCH.deb
//
// The maintainer scripts never start the service (a subnet manager must not start by surprise on a
// fabric: `systemctl enable --now ibsm` is the operator's), stop it before removal, and drop the
// addon the executable wrote out (/var/cache/ibsm/native); purge removes /etc/ibsm and the cache.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { CACHE_DIR, DESCRIPTION, HOMEPAGE, MAINTAINER, PKG, ROOT, SCRIPT, SUMMARY, packageFiles, stageFiles } from './package-files.mjs';

const outIdx = process.argv.indexOf('--out');
const outDir = outIdx > 0 ? path.resolve(process.argv[outIdx + 1]) : path.join(ROOT, 'dist/deb');
const exeIdx = process.argv.indexOf('--exe');
const exe = exeIdx > 0 ? path.resolve(process.argv[exeIdx + 1]) : path.join(ROOT, 'dist/sea/ibsm');
if (!existsSync(exe)) {
  console.error('build-deb: dist/sea/ibsm is missing: run node scripts/build-sea.mjs first');
  process.exit(1);
}
const arch = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
const stage = path.join(outDir, `.stage-${process.pid}`);
rmSync(stage, { recursive: true, force: true });
const files = packageFiles('deb', exe, outDir);
stageFiles(stage, files);
const installedKb = Math.ceil(Number(execFileSync('du', ['-sk', '--apparent-size', stage], { encoding: 'utf8' }).split('\t')[0]));
const put = (rel, data, mode = 0o644) => stageFiles(stage, [{ path: rel, mode, data }]);
put(
  'DEBIAN/control',
  `Package: ibsm
Version: ${PKG.version}
Architecture: ${arch}
Maintainer: ${MAINTAINER}
Installed-Size: ${installedKb}
Depends: libibumad3, libc6, libstdc++6, libgcc-s1
Suggests: infiniband-diags
Section: net
Priority: optional
Homepage: ${HOMEPAGE}
Description: ${SUMMARY}
${DESCRIPTION.map((l) => (l ? ` ${l}` : ' .')).join('\n')}
`,
);
put('DEBIAN/conffiles', files.filter((f) => f.config).map((f) => `/${f.path}\n`).join(''));
put(
  'DEBIAN/postinst',
  `#!/bin/sh
set -e
# Never started here: a subnet manager must not start by surprise on a fabric.
if [ "$1" = configure ]; then
  # An upgrade: the addon the previous executable wrote out is not this one's.
  ${SCRIPT.dropNative}
  ${SCRIPT.daemonReload}
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
  ${SCRIPT.stop}
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
    ${SCRIPT.dropNative}
    ${SCRIPT.dropCacheIfEmpty}
    ;;
  purge)
    rm -rf ${CACHE_DIR} /etc/ibsm
    ;;
esac
${SCRIPT.daemonReload}
exit 0
`,
  0o755,
);

mkdirSync(outDir, { recursive: true });
const deb = path.join(outDir, `ibsm_${PKG.version}_${arch}.deb`);
const b = spawnSync('dpkg-deb', ['--root-owner-group', '-Zxz', '-z6', '--build', stage, deb], { encoding: 'utf8' });
rmSync(stage, { recursive: true, force: true });
if (b.status !== 0) {
  console.error(`build-deb: dpkg-deb: ${b.stderr.trim()}`);
  process.exit(1);
}
console.log(`build-deb: ${deb}`);
