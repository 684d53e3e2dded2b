/** `ibsm check --topology FILE [--sim SPEC | --umad]` (issue #33): discover the fabric once,
 * compare it with the expected topology (model/topology-compare.ts) and print the mismatches, as
 * text (one line each) or JSON. Exit 0: none; 1: a mismatch (or the fabric could not be
 * discovered); 2: usage, or the file cannot be read or parsed. For CI of a cluster's cabling. */
import { parseCommandLine, UsageError } from '../config/parse.js';
import { resolveConfig, setting } from '../config/file.js';
import { readNamedFile } from '../config/files.js';
import { processHost } from '../util/host.js';
import { formatGuid } from '../util/guid.js';
import type { Io } from './main.js';

export async function checkMain(argv: string[], io: Io, help: () => number): Promise<number> {
  const args = parseCommandLine('check', argv);
  if (args.help) return help();
  if (args.positionals.length) throw new UsageError(`unexpected argument "${args.positionals[0]}"`, 'check');
  const c = resolveConfig('check', args, undefined, processHost());
  if (setting(c, 'sim') !== undefined && setting(c, 'umad') === true) throw new UsageError('give either --sim or --umad, not both', 'check');
  const file = setting<string>(c, 'topology');
  if (file === undefined) throw new UsageError('--topology FILE is needed: the expected topology to compare the fabric with', 'check');
  const text = readNamedFile(file, 'topology');
  if (typeof text !== 'string') {
    io.stderr.write(`ibsm check: ${text.message}\n`);
    return 2;
  }
  const [{ parseExpectedTopology }, { compareTopology, mismatchText }, { TopologyError }] = await Promise.all([import('../model/topology-file.js'), import('../model/topology-compare.js'), import('../model/errors.js')]);
  let expected: ReturnType<typeof parseExpectedTopology>;
  try {
    expected = parseExpectedTopology(text, file);
  } catch (e) {
    if (!(e instanceof TopologyError)) throw e;
    io.stderr.write(`ibsm check: --topology ${e.message}\n`);
    return 2;
  }
  const [{ discover }, { smpClientOf }, { openBackend }, { optionsFor, smOptionsOf }] = await Promise.all([import('../sm/discovery.js'), import('../sm/smp-client.js'), import('../api/backend.js'), import('../api/sm-config.js')]);
  const be = await openBackend(optionsFor('backend', smOptionsOf(c)));
  try {
    const res = await discover(smpClientOf(be.rpc));
    const found = compareTopology(expected, res.fabric);
    if (setting(c, 'json')) {
      const end = (e: { guid: bigint; desc: string; port: number }) => ({ guid: formatGuid(e.guid), description: e.desc, port: e.port });
      io.stdout.write(JSON.stringify({ nodes: res.fabric.nodes.length, expectedNodes: expected.nodes.length, mismatches: found.map((m) => ({ class: m.cls, a: end(m.a), ...(m.b ? { b: end(m.b) } : {}), expected: m.expected, found: m.found })) }) + '\n');
    } else {
      for (const m of found) io.stdout.write(`${mismatchText(m)}\n`);
      io.stdout.write(found.length ? `${found.length} mismatch${found.length > 1 ? 'es' : ''} with ${file}\n` : `the fabric matches ${file} (${res.fabric.nodes.length} nodes)\n`);
    }
    return found.length ? 1 : 0;
  } finally {
    await be.close();
  }
}
