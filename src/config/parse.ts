/** The one command-line parser of every `ibsm` command, and `--help` per command, both from the
 * option table (config/options.ts). */
import { defaultText, optionsOf, OPTIONS, suggest, type Command, type OptionSpec, type OptionValue } from './options.js';
import { HARDWARE_GENERATIONS } from '../model/generators.js';
import { IbsmError } from '../util/errors.js';
import { parseU64, parseUintText } from '../util/guid.js';

/** Bad usage: a wrong option, value or config file. The command exits 2 with the message. */
export class UsageError extends IbsmError {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    /** The command whose usage to print after the message. */
    readonly command?: Command,
  ) {
    super(message);
  }
}

/** A value given as text (command line, opensm.conf) → typed, checked against the spec. `what`
 * names it in errors (`--lmc`, `opensm.conf line 12: lmc`). */
export function parseValue(o: OptionSpec, text: string, what = `--${o.name}`): OptionValue {
  switch (o.type) {
    case 'boolean':
      if (/^(true|yes|on|1)$/i.test(text)) return true;
      if (/^(false|no|off|0)$/i.test(text)) return false;
      throw new UsageError(`${what} must be true or false, got "${text}"`);
    case 'string':
      if (text === '') throw new UsageError(`${what} needs a value`);
      return checked(o, text, what);
    case 'int': {
      return checkInt(o, parseUintText(text), what, `"${text}"`);
    }
    case 'key64': {
      const v = parseU64(text);
      if (v === undefined) throw new UsageError(`${what} must be a 64-bit number (e.g. 0x1234), got "${text}"`);
      return v;
    }
    case 'enum':
      if (!o.choices!.includes(text)) throw new UsageError(`${what} must be one of ${o.choices!.join(', ')}, got "${text}"${suggest(text, o.choices!)}`);
      return text;
    case 'list': {
      const list = text.split(',').map((s) => s.trim()).filter(Boolean);
      return checked(o, list, what);
    }
  }
}

export function checkInt(o: OptionSpec, n: number, what: string, shown: string): number {
  if (!Number.isInteger(n) || n < (o.min ?? 0) || n > (o.max ?? Number.MAX_SAFE_INTEGER)) throw new UsageError(`${what} must be an integer from ${o.min ?? 0} to ${o.max}, got ${shown}`);
  return n;
}

export function checked(o: OptionSpec, v: OptionValue, what: string): OptionValue {
  const why = o.check?.(v);
  if (why) throw new UsageError(`${what}: ${why}`);
  return v;
}

export interface ParsedArgs {
  /** Options given, by long name (repeatable ones as string[]). */
  values: Map<string, OptionValue>;
  positionals: string[];
  help: boolean;
  version: boolean;
}

/** Parse a command's arguments. `extra` adds command-specific options (ibsm query's filters). */
export function parseCommandLine(cmd: Command, argv: readonly string[], extra: readonly OptionSpec[] = []): ParsedArgs {
  const specs = [...optionsOf(cmd), ...extra];
  const byLong = new Map(specs.flatMap((o) => [o.name, ...(o.aliases ?? [])].map((n) => [n, o] as const)));
  const byShort = new Map(specs.filter((o) => o.short).map((o) => [o.short!, o]));
  const out: ParsedArgs = { values: new Map(), positionals: [], help: false, version: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') {
      out.help = true;
      continue;
    }
    if (arg === '-V' || arg === '--version') {
      out.version = true;
      continue;
    }
    if (arg === '--') {
      out.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      out.positionals.push(arg);
      continue;
    }
    let o: OptionSpec | undefined;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = arg.slice(2, eq > 0 ? eq : undefined);
      if (eq > 0) inline = arg.slice(eq + 1);
      o = byLong.get(name);
      if (!o) throw unknownOption(cmd, `--${name}`, specs);
    } else {
      o = byShort.get(arg.slice(1));
      if (!o) throw unknownOption(cmd, arg, specs);
    }
    let v: OptionValue;
    if (o.type === 'boolean') v = inline === undefined ? true : parseValue(o, inline);
    else {
      const text = inline ?? argv[++i];
      if (text === undefined) throw new UsageError(`--${o.name} needs a value (${o.arg ?? 'VALUE'})`, cmd);
      v = parseValue(o, text);
    }
    if (o.repeat) out.values.set(o.name, [...((out.values.get(o.name) as string[] | undefined) ?? []), String(v)]);
    else out.values.set(o.name, v);
  }
  return out;
}

function unknownOption(cmd: Command, given: string, specs: readonly OptionSpec[]): UsageError {
  const names = specs.map((o) => `--${o.name}`);
  const elsewhere = OPTIONS.find((o) => `--${o.name}` === given);
  const where = elsewhere ? ` (it is an option of ibsm ${elsewhere.commands.join(', ibsm ')})` : suggest(given, names);
  return new UsageError(`unknown option ${given} for ibsm ${cmd}${where}`, cmd);
}

const HEADS: Record<Command, string> = {
  discover: 'usage: ibsm discover [options]\n  directed-route sweep; prints the topology in ibnetdiscover\'s format (or JSON)',
  route: 'usage: ibsm route <topology file | gen:<kind>:<params>> [options]\n  run a routing engine offline and print the verifier\'s figures',
  run: 'usage: ibsm run [options]\n  the subnet manager and SA; logs "SUBNET UP" when the subnet is up\n  (SMPs lost or refused are retried; what still fails is logged, counted and left for the next sweep:\n  nothing the fabric does ends it; when no engine of --routing applies: nue, and an ERROR)\n  a --sim fabric of several subnets joined by routers (gen:subnets:...): one SM+SA per subnet, one SUBNET UP each (docs/routers.md)',
  query: 'usage: ibsm query <record> [filters] [options]\n  SA client (like saquery); on --sim the subnet is brought up in-process first\n  path --sgid <local> --dgid <remote>: a path between subnets (P1, P2, the validation); --send: a test packet each way',
  config: 'usage: ibsm config [--check] [options]\n  print the effective configuration (each value with where it came from) in the form --config reads; --check: check it and every file it names, without running',
  status: 'usage: ibsm status [options]\n  the running SM: role, sweeps, fabric size, last change, routing and its figures, SA request rate, PerfMgr errors',
  resweep: 'usage: ibsm resweep [--heavy] [options]\n  ask the running SM for a light (or heavy) sweep now; prints its figures',
  reroute: 'usage: ibsm reroute [options]\n  ask the running SM to route the whole fabric again (a full heavy sweep) and program what changed',
  reload: 'usage: ibsm reload [options]\n  ask the running SM to read its configuration again, as SIGHUP: the files checked whole first (an error keeps\n  the running configuration), what can change live applied (partitions, QoS, routing), what needs a restart named',
  dump: 'usage: ibsm dump lfts|mfts|topology|lids|traffic|health|vports [options]\n  the running SM\'s tables as text: LFTs and MFTs as ibroute prints them, the topology as ibnetdiscover, LIDs as guid2lid; health: the isolated links and nodes and the mismatches with --topology; traffic: the bandwidth random bisections and all-to-all get through its LFTs (docs/traffic.md), computed on request; vports: the SR-IOV vports by HCA port (docs/vports.md)',
  'what-if': 'usage: ibsm what-if links|switches|LIST [--what-if-verify full|fast] [options]\n  the running SM\'s fabric and tables: each case failed in turn and re-routed as the SM would (incrementally where its\n  local sweep does, else its engine chain in full), off its hot path; per case and the worst cases, as ibsm route --what-if',
  check: 'usage: ibsm check --topology FILE [--sim <file|gen:spec> | --umad] [--json]\n  discover the fabric once and compare it with the expected topology (ibnetdiscover format or a cabling plan):\n  each mismatch on a line (missing/extra node or link, wrong port, GUID changed, width, speed), naming both ends;\n  exit 0 when none, 1 on a mismatch, 2 on a usage or file error',
  vport: 'usage: ibsm vport create|destroy HOST[:PORT] [N] [options]\n  only with the embedded simulated fabric (ibsm run --sim): as a hypervisor would, create N vports (SR-IOV VFs; the 1st, 3rd, ... LidRequired)\n  on HOST\'s port (a node description, GUID or index; port 1 by default), or destroy its N highest; the SM takes them at its next light sweep (docs/vports.md)',
  topo: 'usage: ibsm topo [--format dot|svg|json] [--sim <file|gen:spec> | --umad | --socket PATH]\n  a picture of the fabric: switches by tier, hosts grouped, links coloured by routes per link, down links marked; with --topology on the running SM: missing, extra and degraded links and isolated links and nodes marked',
  isolate: 'usage: ibsm isolate NODE[:PORT] [options]\n  hold a node (every link of it) or the link at a port isolated on the running SM (source manual): in INIT, not routed,\n  until ibsm release; NODE is a node GUID, a port GUID or a description; a heavy sweep applies it before the answer',
  release: 'usage: ibsm release NODE[:PORT] [options]\n  release what is isolated at a node or port on the running SM (by hand, or a flapping link before its quiet time);\n  the expected topology\'s isolations stay until the fabric matches; a heavy sweep applies it before the answer',
};

/** One line per option: `  --name ARG   help (default: x)`. */
export function optionLines(specs: readonly OptionSpec[]): string {
  const left = specs.map((o) => `  ${o.short ? `-${o.short}, ` : ''}--${o.name}${o.arg ? ` ${o.arg}` : ''}`);
  const w = Math.min(34, Math.max(...left.map((l) => l.length)) + 2);
  return specs
    .map((o, i) => {
      const d = o.type === 'boolean' && o.default === false ? '' : ` (default: ${defaultText(o)})`;
      const l = left[i]!;
      return l.length >= w ? `${l}\n${' '.repeat(w)}${o.help}${d}` : `${l.padEnd(w)}${o.help}${d}`;
    })
    .join('\n');
}

/** `ibsm <cmd> --help`: the command's own options from the table. */
export function commandHelp(cmd: Command, extra = ''): string {
  const always: OptionSpec[] = [
    { name: 'help', short: 'h', type: 'boolean', default: false, help: 'this help', commands: [] },
    { name: 'version', short: 'V', type: 'boolean', default: false, help: 'print the version', commands: [] },
  ];
  return `${HEADS[cmd]}\n\noptions:\n${optionLines([...optionsOf(cmd), ...always])}\n${extra}`;
}

/** The files ibsm reads and writes where an operator finds them: the man page's FILES section and
 * the end of `ibsm --help`. */
export const FILES: ReadonlyArray<readonly [path: string, what: string]> = [
  ['/etc/ibsm/ibsm.conf', 'read by ibsm run and ibsm config without --config, if it exists (ibsm\'s JSON or an opensm.conf)'],
  ['/var/cache/opensm/guid2lid', 'the guid2lid file as root on a device (--guid2lid; OpenSM\'s own, so either SM keeps the other\'s LIDs)'],
  ['/run/ibsm/ibsm.sock', 'the control socket as root (--control-socket), mode 0600'],
  ['/run/ibsm/ibsm-port-GUID.lock', 'the claim of an SM port (one SM per port)'],
  ['/var/log/ibsm.log, /var/log/ibsm-GUID.log', 'the log of ibsm.service and of ibsm@GUID.service (--log-file; SIGUSR1 reopens it)'],
  ['/lib/systemd/system/ibsm.service, ibsm@.service', 'the Debian package\'s units: an SM on the first active port, or one per port GUID'],
  ['/etc/logrotate.d/ibsm', 'the Debian package\'s logrotate snippet for those logs'],
  ['/var/cache/ibsm/', 'the package\'s cache: the native addon the single executable /usr/lib/ibsm/ibsm (run by the launcher /usr/sbin/ibsm) writes out (native/, checked owner and mode before it is loaded), ibsm@GUID\'s guid2lid files'],
];

export const GLOBAL_USAGE = `usage: ibsm <command> [options]

commands:
${(Object.keys(HEADS) as Command[]).map((c) => `  ${HEADS[c].replace(/^usage: ibsm /, '').replace('\n  ', '\n      ')}`).join('\n')}

ibsm <command> --help lists the command's options; ibsm -V prints the version.

files:
${FILES.map(([f, what]) => `  ${f}\n      ${what}`).join('\n')}
`;

/** The README's option table of a command (test/config.test.ts checks the README holds it). */
export function markdownOptionTable(cmd: Command): string {
  const esc = (s: string): string => s.replace(/\|/g, '\\|');
  const conf = cmd === 'run';
  const rows = optionsOf(cmd).map((o) => {
    const cells = [`\`--${o.name}${o.arg ? ` ${esc(o.arg)}` : ''}\`${o.short ? ` (\`-${o.short}\`)` : ''}`, esc(o.help), esc(defaultText(o))];
    if (conf) cells.push(o.key ? `\`${o.key}\`` : '', o.opensm ? `\`${o.opensm}\`` : '');
    return `| ${cells.join(' | ')} |`;
  });
  const head = conf ? ['| option | meaning | default | config key | opensm.conf |', '|---|---|---|---|---|'] : ['| option | meaning | default |', '|---|---|---|'];
  return [...head, ...rows].join('\n');
}

/** The man page (docs/ibsm.8, checked by test/config.test.ts; `npm run docs` writes it). */
export function manPage(version: string): string {
  const roff = (s: string): string => s.replace(/\\/g, '\\\\').replace(/-/g, '\\-').replace(/^\./gm, '\\&.');
  const out = [
    `.TH IBSM 8 "" "ibsm ${version}" "System Administration"`,
    '.SH NAME',
    'ibsm \\- InfiniBand subnet manager and subnet administrator',
    '.SH SYNOPSIS',
    ...(Object.keys(HEADS) as Command[]).map((c) => `.B ibsm ${c}\n${roff(HEADS[c].split('\n')[0]!.replace(`usage: ibsm ${c} `, ''))}\n.br`),
    '.SH DESCRIPTION',
    'Every command takes \\fB\\-h\\fR/\\fB\\-\\-help\\fR and \\fB\\-V\\fR/\\fB\\-\\-version\\fR. Exit status: 0 success, 1 a runtime failure, 2 bad usage.',
  ];
  for (const c of Object.keys(HEADS) as Command[]) {
    out.push(`.SH ${c.toUpperCase()}`, roff(HEADS[c].split('\n')[1]!.trim()));
    for (const o of optionsOf(c)) {
      out.push('.TP', `\\fB${o.short ? `\\-${o.short}\\fR, \\fB` : ''}\\-\\-${roff(o.name)}\\fR${o.arg ? ` \\fI${roff(o.arg)}\\fR` : ''}`);
      out.push(`${roff(o.help)} (default: ${roff(defaultText(o))})${o.key && c === 'run' ? `. Config key \\fB${o.key}\\fR${o.opensm ? `, opensm.conf \\fB${roff(o.opensm)}\\fR` : ''}.` : ''}`);
    }
  }
  out.push(
    '.SH LINK SPEEDS AND WIDTHS',
    'Speeds SDR, DDR, QDR (LinkSpeedActive), FDR, EDR, HDR, NDR (LinkSpeedExtActive) and XDR (LinkSpeedExtActive2, PortInfo byte 56); widths 1x, 2x, 4x, 8x, 12x. PortInfo Gets and Sets carry AttributeModifier bit 31 (SMSupportExtendedSpeeds) where the port\'s CapabilityMask (a switch\'s external port: port 0\'s) has IsExtendedSpeedsSupported, as OpenSM does. PathRecord, MultiPathRecord and MCMemberRecord rates go up to 26 (2400 Gb/s: 12x XDR); NDR 4x is 21 (400 Gb/s), XDR 4x 23 (800 Gb/s), XDR 8x 25 (1600 Gb/s).',
    '.PP',
    "Generated fabrics take the ports' hardware: \\fBspeed=\\fR, \\fBwidth=\\fR (switch ports), \\fBleafspeed=\\fR, \\fBleafwidth=\\fR (switches with hosts), \\fBhostspeed=\\fR, \\fBhostwidth=\\fR (hosts), e.g. \\fBgen:fattree2:leaves=4,spines=2,hosts=4,speed=NDR,leafspeed=HDR\\fR; a link trains to the best width and speed both ends know. \\fBmodel=\\fR, \\fBleafmodel=\\fR and \\fBhostmodel=\\fR name the hardware instead (a speed or width key given with it wins): " +
      HARDWARE_GENERATIONS.map((g) => `${g.generation.toLowerCase()} (${roff(g.switch.name)} / ${roff(g.hca.name)})`).join(', ') +
      '; each a 4x port of its generation (HDR and later also 2x), with the NodeInfo VendorID and DeviceID of its switch or HCA.',
    '.PP',
    'With \\fB\\-\\-umad\\fR and no \\fB\\-\\-ca\\fR/\\fB\\-\\-port\\fR the SM port is chosen as rdma\\-core does: InfiniBand link layer only, ports with IsSMDisabled skipped, the first ACTIVE port, else the first LinkUp one, else the first not Disabled.',
  );
  out.push('.SH FILES', ...FILES.flatMap(([f, what]) => ['.TP', roff(f), roff(what)]));
  out.push(
    '.SH SECURITY',
    'ibsm trusts root on its host (the control socket is a unix socket of mode 0600), the SM_Key (\\fB\\-\\-sm\\-key\\fR: another SM with a different key cannot control it; an SA request carrying it is trusted, and only a trusted requester may join or leave a multicast group for another port unless \\fB\\-\\-sa\\-proxy\\-joins\\fR) and the M_Key (\\fB\\-\\-mkey\\fR). A host on the fabric cannot grow its state, metrics or log without bound: every log line a remote party can trigger is rate-limited per source and code (IBSM-8050 summaries). Nothing listens on the network unless \\fB\\-\\-metrics\\-port\\fR, \\fB\\-\\-metrics\\-listen\\fR or \\fB\\-\\-web\\fR asks; local resources are checked before the first SMP and never removed. See the README, section Security.',
  );
  out.push('.SH SEE ALSO', 'opensm(8), saquery(8), ibnetdiscover(8)');
  return out.join('\n') + '\n';
}
