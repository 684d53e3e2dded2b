#!/usr/bin/env node
// Writes what is generated from the tables: the README's option tables (between the
// <!-- options:CMD --> markers) and its table of hardware models, the man page docs/ibsm.8, docs/log-codes.md,
// docs/configuration.md's opensm.conf keys and docs/api.md's table of openSm's options (SmConfig). Run `npm run build` first.
import { readFileSync, writeFileSync } from 'node:fs';
import { markdownOptionTable, manPage } from '../dist/config/parse.js';
import { COMMANDS } from '../dist/config/options.js';

const root = new URL('..', import.meta.url);
const version = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).version;
let readme = readFileSync(new URL('README.md', root), 'utf8');
for (const cmd of COMMANDS.filter((c) => c !== 'config')) {
  readme = readme.replace(new RegExp(`(<!-- options:${cmd} -->\\n)[\\s\\S]*?(\\n<!-- /options -->)`), (_m, a, b) => a + markdownOptionTable(cmd) + b);
}
// the hardware models generators take (model=), from src/model/generators.ts
const { hardwareModelsMarkdown } = await import('../dist/model/generators.js');
readme = readme.replace(/(<!-- hardware-models -->\n)[\s\S]*?(<!-- \/hardware-models -->)/, (_m, a, b) => a + hardwareModelsMarkdown() + '\n' + b);
writeFileSync(new URL('README.md', root), readme);
writeFileSync(new URL('docs/ibsm.8', root), manPage(version));
// docs/log-codes.md from the table of stable log codes (src/util/log-codes.ts).
const { logCodesMarkdown } = await import('../dist/util/log-codes.js');
writeFileSync(new URL('docs/log-codes.md', root), logCodesMarkdown());
// docs/configuration.md's table of every opensm.conf key, in the order `opensm -c` writes them
// (test/fixtures/opensm-3.3.23.conf, OpenSM 3.3.23's default file).
const { opensmKeysMarkdown } = await import('../dist/config/opensm-keys.js');
const { opensmConfKeys } = await import('../dist/config/opensm-conf.js');
const order = opensmConfKeys(readFileSync(new URL('test/fixtures/opensm-3.3.23.conf', root), 'utf8'));
let conf = readFileSync(new URL('docs/configuration.md', root), 'utf8');
conf = conf.replace(/(<!-- opensm-keys[^\n]*-->\n)[\s\S]*?(<!-- \/opensm-keys -->)/, (_m, a, b) => a + opensmKeysMarkdown(order) + '\n' + b);
writeFileSync(new URL('docs/configuration.md', root), conf);
// docs/api.md's table of openSm's options (SmConfig), from the option table.
const { smConfigMarkdown } = await import('../dist/api/sm-config.js');
let api = readFileSync(new URL('docs/api.md', root), 'utf8');
api = api.replace(/(<!-- sm-config -->\n)[\s\S]*?(<!-- \/sm-config -->)/, (_m, a, b) => a + smConfigMarkdown() + '\n' + b);
writeFileSync(new URL('docs/api.md', root), api);
