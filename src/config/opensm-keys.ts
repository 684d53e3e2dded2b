/** Every key of OpenSM 3.3.23's opensm.conf (as `opensm -c FILE` writes it) and what ibsm does
 * with it. A key with an ibsm option is mapped through the option table (its `opensm` field,
 * config/options.ts); every other key has a row here: accepted because ibsm behaves as that value
 * does (other values refused with the reason), accepted without effect (with the reason, said when
 * the value is not OpenSM's default), or turned into an option's value. config/opensm-conf.ts reads
 * a file by these rows; keys of NVIDIA's OpenSM fork that ibsm maps are listed in FORK_KEYS with
 * where the fork names them. docs/configuration.md's key table is generated from them
 * (opensmKeysMarkdown, `npm run docs`), and test/opensm-conf.test.ts runs OpenSM's own default
 * file, and each key changed, through `ibsm config`. */
import { OPTIONS, type OptionValue } from './options.js';

export type OpensmKeyRule =
  /** ibsm behaves as OpenSM with `dflt` (and the `also` values; with `like`, the value of that other
   * key, or its default); any other value is refused: `why`. */
  | { key: string; dflt: string; kind: 'same'; also?: readonly string[]; why: string; like?: string }
  /** Any value accepted; nothing in ibsm depends on it: `why` (said when not OpenSM's default; with
   * `differs`, always: ibsm does not do what OpenSM does with its default either). */
  | { key: string; dflt: string; kind: 'no-effect'; why: string; differs?: true }
  /** Turned into an option's value (`to`: the value, or a problem); `doc` says how. */
  | { key: string; dflt: string; kind: 'alias'; option: string; doc: string; to: (v: string) => OptionValue | { problem: string } | { note: string; value?: OptionValue } };

/** Is an opensm.conf value OpenSM's default (numbers by value, TRUE/FALSE by case)? */
export function sameValue(a: string, b: string): boolean {
  const num = (s: string): bigint | undefined => (/^-?(0x[0-9a-f]+|\d+)$/i.test(s) ? (s.startsWith('-') ? -BigInt(s.slice(1)) : BigInt(s)) : undefined);
  const x = num(a);
  const y = num(b);
  if (x !== undefined && y !== undefined) return x === y;
  return a.toLowerCase() === b.toLowerCase();
}

const isTrue = (v: string): boolean => /^true$/i.test(v);
const same = (key: string, dflt: string, why: string, also?: readonly string[]): OpensmKeyRule => ({ key, dflt, kind: 'same', why, ...(also ? { also } : {}) });
const none = (key: string, dflt: string, why: string): OpensmKeyRule => ({ key, dflt, kind: 'no-effect', why });
/** No effect, and ibsm does not behave as OpenSM's default either: said whatever the value. */
const differs = (key: string, dflt: string, why: string): OpensmKeyRule => ({ key, dflt, kind: 'no-effect', why, differs: true });

const RPC = "ibsm's MAD layer sizes its window and retry timeouts from the round trips it measures (src/rpc)";
const PER_TYPE_QOS = 'ibsm programs one set of QoS VL tables for every port type: unset (the qos_* values apply to every port, as ibsm does); to change them set qos_max_vls, qos_high_limit, qos_vlarb_high, qos_vlarb_low, qos_sl2vl';
const CC = 'used only with congestion_control TRUE, which ibsm refuses';
const NO_ENGINE = (what: string): string => `ibsm has no ${what}: choose a routing_engine ibsm has (ftree, torus, nue, dfsssp, updn, minhop)`;

/** OpenSM's log_flags bits (osm_log.h): ERROR 0x01, INFO 0x02, VERBOSE 0x04, DEBUG 0x08, FUNCS 0x10, FRAMES 0x20, ROUTING 0x40, SYS 0x80. */
function logFlags(v: string): OptionValue | { problem: string } | { note: string; value?: OptionValue } {
  if (!/^(0x[0-9a-f]{1,2}|\d{1,3})$/i.test(v) || Number(v) > 0xff) return { problem: `log_flags must be a byte (OpenSM's log levels, e.g. 0x03), got "${v}"` };
  const f = Number(v);
  const verbose = (f & 0x0c) !== 0;
  if ((f & 0x03) !== 0x03) return { note: `log_flags ${v}: ibsm always logs errors and notices (ERROR and INFO)${verbose ? '; VERBOSE/DEBUG: --verbose' : ''}`, value: verbose };
  if (f & 0xf0) return { note: `log_flags ${v}: FUNCS/FRAMES/ROUTING/SYS have no ibsm equivalent; ${verbose ? 'VERBOSE/DEBUG: --verbose' : 'logged as 0x03'}`, value: verbose };
  return verbose;
}

export const OPENSM_KEY_RULES: readonly OpensmKeyRule[] = [
  // ---- device attributes
  none('m_key_lookup', 'TRUE', "ibsm has no guid2mkey file: a port protected by an M_Key ibsm does not know is reported (IBSM-2032) and left until its lease ends; an unprotected port's M_Key is read from its PortInfo (IBSM-2033)"),
  same('sm_sl', '0', "ibsm's SM and SA traffic uses SL 0 (SMSL 0)"),
  same('vl_stall_count', '0x07', 'ibsm programs VLStallCount 7 (OpenSM\'s default) on every switch port'),
  same('leaf_vl_stall_count', '0x07', 'ibsm programs VLStallCount 7 (OpenSM\'s default) on every switch port'),
  none('fdr10', '1', 'ibsm sends no vendor (Mellanox ExtendedPortInfo) MADs: FDR10 stays as the port firmware sets it'),
  none('local_phy_errors_threshold', '0x08', 'ibsm leaves PortInfo:LocalPhyErrors as the port has it (traps 129 are handled as they come)'),
  none('overrun_errors_threshold', '0x08', 'ibsm leaves PortInfo:OverrunErrors as the port has it (traps 130 are handled as they come)'),
  none('use_mfttop', 'TRUE', "ibsm leaves SwitchInfo:MulticastFDBTop as the switch has it and writes the MFT blocks of every group's MLID"),
  // ---- partitioning
  { key: 'no_partition_enforcement', dflt: 'FALSE', kind: 'alias', option: 'part-enforce', doc: 'TRUE is `--part-enforce off` (FALSE: part_enforce decides)', to: (v) => (isTrue(v) ? 'off' : { note: '' }) },
  differs('allow_both_pkeys', 'FALSE', 'ibsm gives a port named `both` in partitions.conf both entries (full and limited), as TRUE does, whatever this says'),
  none('keep_pkey_indexes', 'TRUE', 'ibsm writes each port\'s P_Key table in the same order every sweep (the default partition at index 0), so indexes stay where they were'),
  none('sm_assigned_guid', '0x00', 'ibsm assigns no alias GUIDs of its own (clients set theirs through the SA GUIDInfoRecord)'),
  // ---- sweeps
  same('sweep_on_trap', 'TRUE', 'ibsm always answers a trap 128/144 with a (local) sweep'),
  // ---- routing
  same('port_profile_switch_nodes', 'FALSE', "ibsm's engines balance routes by their own count of routes per link"),
  same('port_prof_ignore_file', '(null)', "ibsm's engines balance routes by their own count of routes per link; no ports are left out of it"),
  same('hop_weights_file', '(null)', "ibsm's engines take no per-port hop weights"),
  same('port_search_ordering_file', '(null)', "ibsm's engines take no per-switch port order"),
  same('avoid_throttled_links', 'FALSE', "ibsm's engines do not read throttled links"),
  same('connect_roots', 'FALSE', "ibsm's updn and ftree keep up/down rules between roots (deadlock-free)"),
  differs('use_ucast_cache', 'FALSE', 'ibsm re-routes incrementally after a link change whenever the result passes its checks (deadlock-free, within the balance bound; IBSM-4011 otherwise) and fully otherwise: what the unicast cache is for, always on'),
  same('lid_matrix_dump_file', '(null)', NO_ENGINE('`file` routing engine (LFTs and hop matrix from dump files)')),
  same('lfts_file', '(null)', NO_ENGINE('`file` routing engine (LFTs from a dump file)')),
  same('quasi_ftree_indexing', 'FALSE', "ibsm's ftree indexes leaves from the roots it finds; no alternative indexing"),
  same('max_reverse_hops', '0', "ibsm's ftree routes I/O nodes (io_guid_file) after the compute nodes, on up/down paths only"),
  same('ids_guid_file', '(null)', "ibsm's updn ranks switches from the roots (root_guid_file); no node ids"),
  same('do_mesh_analysis', 'FALSE', NO_ENGINE('lash engine (use nue: deadlock-free on any fabric)')),
  same('lash_start_vl', '0', NO_ENGINE('lash engine (use nue: deadlock-free on any fabric)')),
  differs('nue_max_num_vls', '1', "ibsm's nue uses up to 8 VLs (fewer when the ports have fewer), and only as many as the fabric needs"),
  same('nue_include_switches', 'FALSE', "ibsm's nue routes CA-to-CA traffic; switches' own traffic (management) is not in its deadlock check"),
  same('port_shifting', 'FALSE', "ibsm's engines balance routes by their own count of routes per link"),
  same('scatter_ports', '0', "ibsm's randomised tie-breaks come from --seed"),
  same('sa_db_file', '(null)', 'ibsm keeps the SA state (groups, services, subscriptions) in memory and copies it to standby SMs'),
  none('sa_db_dump', 'FALSE', 'ibsm writes no SA database file; `ibsm dump` and the SA itself show the state'),
  none('torus_config', '/etc/opensm/torus-2QoS.conf', "ibsm's torus finds the torus's dimensions and datelines from the fabric; torus-2QoS.conf is not read"),
  // ---- handover
  same('ignore_other_sm', 'FALSE', 'ibsm always takes part in the SM election (a second SM on the subnet is never ignored)'),
  { key: 'honor_guid2lid_file', dflt: 'FALSE', kind: 'alias', option: 'honor-guid2lid', doc: '`--honor-guid2lid` (FALSE, OpenSM\'s default: a standby taking over keeps the LIDs the old master gave)', to: (v) => isTrue(v) },
  // ---- timing and threading
  none('max_wire_smps', '4', RPC),
  none('max_wire_smps2', '4', RPC),
  none('max_smps_timeout', '600000', RPC),
  none('transaction_timeout', '200', RPC),
  none('transaction_retries', '3', RPC),
  none('long_transaction_timeout', '500', RPC),
  none('max_msg_fifo_timeout', '10000', "ibsm's SA answers BUSY when its queue is full instead of by age"),
  none('single_thread', 'FALSE', 'ibsm runs on one event loop'),
  // ---- misc
  same('daemon', 'FALSE', 'ibsm does not fork into the background: run it under systemd (Type=simple; docs/examples) or another supervisor'),
  same('sm_inactive', 'FALSE', 'ibsm always takes part as an SM (an inactive SM is not implemented)'),
  same('babbling_port_policy', 'FALSE', 'ibsm disables no ports on its own'),
  differs('drop_event_subscriptions', 'FALSE', "ibsm's SA drops a port's event subscriptions (InformInfo) when the port goes out of service (as TRUE does) and keeps them across a takeover (the SA state is copied to standby SMs)"),
  differs('ipoib_mcgroup_creation_validation', 'TRUE', "ibsm's SA checks a new group's MGID and the creating join's components (IBA o15-0.2.4), not a non-broadcast IPoIB group's parameters against its broadcast group's"),
  same('mcgroup_join_validation', 'TRUE', "ibsm's SA checks a join's parameters against the group's"),
  same('use_original_extended_sa_rates_only', 'FALSE', "ibsm's SA answers with the rates the links have (extended rates included)"),
  same('use_optimized_slvl', 'FALSE', 'ibsm writes SL2VL tables port pair by port pair'),
  none('fsync_high_avail_files', 'TRUE', 'ibsm writes its guid2lid file atomically (a new file renamed over the old)'),
  // ---- perfmgr
  none('perfmgr_redir', 'TRUE', "ibsm's PerfMgr reads each port's PMA at the port's LID"),
  none('perfmgr_max_outstanding_queries', '500', RPC),
  same('perfmgr_ignore_cas', 'FALSE', "ibsm's PerfMgr reads every linked port, CAs included"),
  none('perfmgr_rm_nodes', 'TRUE', "ibsm's PerfMgr drops the counters of nodes that left the fabric"),
  none('perfmgr_log_errors', 'TRUE', "ibsm's PerfMgr logs error counters that rise, with the port"),
  none('perfmgr_query_cpi', 'TRUE', "ibsm's PerfMgr asks ClassPortInfo and uses 64-bit counters where the PMA has them"),
  none('perfmgr_xmit_wait_log', 'FALSE', 'PortXmitWait is in the metrics (ibsm_port_..._total); no separate log'),
  none('perfmgr_xmit_wait_threshold', '65535', 'PortXmitWait is in the metrics (ibsm_port_..._total); no separate log'),
  none('event_db_dump_file', '(null)', "ibsm writes no event database: the PerfMgr's counters are in the metrics"),
  same('event_plugin_name', '(null)', 'ibsm loads no event plugins: use the API instead (openSm(...).events, docs/api.md), or the metrics and the log'),
  none('event_plugin_options', '(null)', 'ibsm loads no event plugins (event_plugin_name)'),
  none('node_name_map_name', '(null)', 'ibsm names nodes by their NodeDescription; the node name map is not read'),
  // ---- debug
  { key: 'log_flags', dflt: '0x03', kind: 'alias', option: 'verbose', doc: '`--verbose` when VERBOSE (0x04) or DEBUG (0x08) is set; errors and notices are always logged', to: logFlags },
  none('force_log_flush', 'FALSE', 'ibsm writes every log line as it is logged (no buffering): always flushed'),
  { key: 'accum_log_file', dflt: 'TRUE', kind: 'alias', option: 'log-truncate', doc: 'FALSE is `--log-truncate` (the log file emptied at start)', to: (v) => !isTrue(v) },
  none('per_module_logging_file', '/etc/opensm/per-module-logging.conf', 'ibsm has one log level (--verbose for the per-phase debug lines)'),
  none('dump_files_dir', '/var/log/', 'ibsm writes no dump files: `ibsm dump lfts|mfts|topology|lids` prints them on request'),
  same('enable_quirks', 'FALSE', 'ibsm has no hardware quirks switch'),
  same('no_clients_rereg', 'FALSE', 'ibsm sets ClientReregister when a new master\'s SA holds no registrations'),
  same('disable_multicast', 'FALSE', 'ibsm always routes multicast'),
  none('exit_on_fatal', 'TRUE', 'ibsm stops on a local problem at start (a bad file, no device) and never because of the fabric'),
  same('console', 'off', 'ibsm has no console: use the control socket (`ibsm status`, `resweep`, `reroute`, `dump`, `topo`; --control-socket)'),
  none('console_port', '10000', 'ibsm has no console (use the control socket)'),
  // ---- QoS
  none('suppress_sl2vl_mad_status_errors', 'FALSE', 'an SL2VL Set a port refuses is logged as every refused write is (IBSM-2030)'),
  ...['ca', 'sw0', 'swe', 'rtr'].flatMap((t) => [
    same(`qos_${t}_max_vls`, '0', PER_TYPE_QOS),
    same(`qos_${t}_high_limit`, '-1', PER_TYPE_QOS),
    same(`qos_${t}_vlarb_high`, '(null)', PER_TYPE_QOS),
    same(`qos_${t}_vlarb_low`, '(null)', PER_TYPE_QOS),
    same(`qos_${t}_sl2vl`, '(null)', PER_TYPE_QOS),
  ]),
  // ---- congestion control
  same('congestion_control', 'FALSE', 'ibsm does not configure congestion control (no CC MADs to switches and CAs; OpenSM marks it experimental)'),
  ...(
    [
      ['cc_key', '0x0000000000000000'], ['cc_max_outstanding_mads', '500'], ['cc_sw_cong_setting_control_map', '0x0'],
      ['cc_sw_cong_setting_victim_mask', '0x0000000000000000000000000000000000000000000000000000000000000000'],
      ['cc_sw_cong_setting_credit_mask', '0x0000000000000000000000000000000000000000000000000000000000000000'],
      ['cc_sw_cong_setting_threshold', '0x00'], ['cc_sw_cong_setting_packet_size', '0'], ['cc_sw_cong_setting_credit_starvation_threshold', '0x00'],
      ['cc_sw_cong_setting_credit_starvation_return_delay', '0:0'], ['cc_sw_cong_setting_marking_rate', '0'], ['cc_ca_cong_setting_port_control', '0x0000'],
      ['cc_ca_cong_setting_control_map', '0x0000'], ['cc_ca_cong_setting_ccti_timer', '0 0'], ['cc_ca_cong_setting_ccti_increase', '0 0'],
      ['cc_ca_cong_setting_trigger_threshold', '0 0'], ['cc_ca_cong_setting_ccti_min', '0 0'], ['cc_cct', '(null)'],
    ] as const
  ).map(([k, d]) => none(k, d, CC)),
  same('consolidate_ipv6_snm_req', 'FALSE', "ibsm's SA keeps each IPv6 solicited-node multicast group apart"),
  none('log_prefix', '(null)', "ibsm's log lines carry a timestamp, level and code (and --log-format json); no prefix"),
];

/** Keys whose value is two words (`cc_ca_cong_setting_* <SL> <value>`). */
export const TWO_WORD_KEYS: ReadonlySet<string> = new Set(['cc_ca_cong_setting_ccti_timer', 'cc_ca_cong_setting_ccti_increase', 'cc_ca_cong_setting_trigger_threshold', 'cc_ca_cong_setting_ccti_min']);

/** OpenSM's routing engine names (3.3.23: minhop, updn, dnup, file, ftree, lash, dor, torus-2QoS,
 * nue, dfsssp, sssp; and some of Mellanox's OpenSM) → ibsm's: the same engine, the nearest with a
 * notice, or refused with what to use. */
export const OPENSM_ENGINES: Readonly<Record<string, { engine?: string; notice?: string; refuse?: string }>> = {
  minhop: { engine: 'minhop' },
  updn: { engine: 'updn' },
  ftree: { engine: 'ftree' },
  nue: { engine: 'nue' },
  dfsssp: { engine: 'dfsssp' },
  'torus-2qos': { engine: 'torus' },
  dor: { engine: 'torus', notice: "dor (dimension-order routing) is routed by ibsm's torus: dimension order with torus-2QoS's datelines (deadlock-free on rings too; meshes are plain dimension order)" },
  dnup: { engine: 'updn', notice: "dnup (down/up ranked from the leaves) is routed by ibsm's updn (up/down from the roots: root_guid_file, else the switches farthest from the CAs)" },
  lash: { engine: 'nue', notice: "lash is routed by ibsm's nue (deadlock-free on any fabric, VLs as needed)" },
  sssp: { engine: 'dfsssp', notice: "sssp is routed by ibsm's dfsssp (the same shortest paths, made deadlock-free with VLs)" },
  file: { refuse: "ibsm has no `file` routing engine (LFTs loaded from a dump): name an engine ibsm has (ftree, torus, nue, dfsssp, updn, minhop)" },
  // Mellanox's OpenSM (MLNX OFED, UFM): adaptive routing and the other engines of its own
  ar_updn: { engine: 'updn', notice: 'ar_updn: ibsm programs no adaptive routing; routed by updn' },
  ar_ftree: { engine: 'ftree', notice: 'ar_ftree: ibsm programs no adaptive routing; routed by ftree' },
  ar_torus: { engine: 'torus', notice: 'ar_torus: ibsm programs no adaptive routing; routed by torus' },
  ar_dor: { engine: 'torus', notice: 'ar_dor: ibsm programs no adaptive routing; routed by torus (dimension order)' },
  pqft: { engine: 'ftree', notice: "pqft (Mellanox's quasi fat tree) is routed by ibsm's ftree, which takes degraded fat trees too" },
  chain: { refuse: 'chain is a list of engines tried in order: name them, as ibsm tries them in order too (e.g. routing_engine ftree,updn)' },
  dfp: { refuse: "ibsm has no dragonfly engine: nue routes any topology deadlock-free (routing_engine nue)" },
};

/** opensm.conf keys of NVIDIA's OpenSM fork (not in OpenSM 3.3.23's file) that ibsm maps onto an
 * option, with where the fork names them. */
export const FORK_KEYS: readonly { key: string; source: string }[] = [
  // XDR's PortInfo byte 56, as force_link_speed_ext is byte 62's
  { key: 'force_link_speed_ext2', source: "NVIDIA's OpenSM (osm_subnet.h, osm_subn_opt_t: force_link_speed_ext2 next to force_link_speed_ext)" },
];

/** The rule of a key: its option (through the option table) or its row here. */
export function opensmKeyRule(key: string): { option: (typeof OPTIONS)[number] } | { rule: OpensmKeyRule } | undefined {
  const option = OPTIONS.find((o) => o.opensm === key);
  if (option) return { option };
  const rule = OPENSM_KEY_RULES.find((r) => r.key === key);
  return rule ? { rule } : undefined;
}

/** Every opensm.conf key ibsm knows. */
export function opensmKeys(): string[] {
  return [...OPTIONS.filter((o) => o.opensm).map((o) => o.opensm!), ...OPENSM_KEY_RULES.map((r) => r.key)];
}

/** docs/configuration.md's table of every opensm.conf key and what ibsm does with it. */
export function opensmKeysMarkdown(order: readonly string[] = opensmKeys()): string {
  const esc = (s: string): string => s.replace(/\|/g, '\\|');
  const rows = ['| opensm.conf key | OpenSM default | in ibsm |', '|---|---|---|'];
  const fork = FORK_KEYS.filter((k) => !order.includes(k.key));
  for (const key of [...order, ...fork.map((k) => k.key)]) {
    const r = opensmKeyRule(key);
    if (!r) continue;
    let status: string;
    let dflt = '';
    const from = FORK_KEYS.find((k) => k.key === key);
    if ('option' in r) status = `mapped to \`--${r.option.name}\` (config key \`${r.option.key}\`)${from ? `; a key of ${from.source}, not of OpenSM 3.3.23` : ''}`;
    else {
      const x = r.rule;
      dflt = x.dflt;
      if (x.kind === 'same' && x.like) status = `accepted when equal to \`${x.like}\`: ${x.why}; another value is refused`;
      else if (x.kind === 'same') status = `accepted as \`${x.dflt}\`${x.also?.length ? ` or ${x.also.map((a) => `\`${a}\``).join(', ')}` : ''}: ${x.why}; another value is refused`;
      else if (x.kind === 'no-effect') status = `accepted, no effect${x.differs ? ' (said whatever the value: ibsm differs from OpenSM\'s default too)' : ''}: ${x.why}`;
      else status = x.doc;
    }
    rows.push(`| \`${key}\` | ${dflt ? `\`${esc(dflt)}\`` : ''} | ${esc(status)} |`);
  }
  return rows.join('\n');
}
