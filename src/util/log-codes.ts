/** The stable log codes: one row per log message (the `msg` argument exactly as written at the
 * call site), with its level and a one-line meaning. The Logger prints the code of a message
 * (text: a column after the level; JSON: a "code" field); docs/log-codes.md is generated from
 * this table (`npm run docs`), and test/log-codes.test.ts checks that every message in src/ has a
 * row, every row is used, and the document is current.
 *
 * The rule: a code, once given, keeps its meaning. A message reworded keeps its code; a message
 * removed leaves its code unused (never given to another); a new message takes the next free code
 * of its area. Areas by thousands, like OpenSM's ERR numbers. */
import type { Level } from './log.js';

export interface LogCode {
  code: string;
  level: Level;
  msg: string;
  meaning: string;
  /** A remote party (a host on the fabric, a client of a server) can trigger the line: it is
   * written through `Logger.from(source)`, rate-limited per source (util/log.ts LogLimiter). */
  remote?: true;
}

/** The areas, by the first digit of the number. */
export const LOG_AREAS: ReadonlyArray<{ digit: string; area: string }> = [
  { digit: '1', area: 'SM state and sweeps' },
  { digit: '2', area: 'Discovery, LIDs and programming the fabric' },
  { digit: '3', area: 'Traps' },
  { digit: '4', area: 'Routing' },
  { digit: '5', area: 'SA, multicast, QoS and SA state sync' },
  { digit: '6', area: 'RPC' },
  { digit: '7', area: 'PerfMgr' },
  { digit: '8', area: 'Operator: process, control socket, signals, metrics' },
  { digit: '9', area: 'Configuration and fatal errors' },
];

export const LOG_CODES: readonly LogCode[] = [
  // ---- 1: SM state and sweeps
  { code: 'IBSM-1001', level: 'info', msg: 'SUBNET UP', meaning: 'The first heavy sweep as master finished: every reachable port is ACTIVE and routed.' },
  { code: 'IBSM-1002', level: 'info', msg: 'heavy sweep done; subnet up', meaning: 'A later heavy sweep finished and the subnet is up.' },
  { code: 'IBSM-1003', level: 'info', msg: 'heavy sweep requested', meaning: 'A trap, a light sweep, a signal or an operator asked for a heavy sweep (reason given).' },
  { code: 'IBSM-1004', level: 'info', msg: 'light sweep found a change; heavy sweep follows', meaning: 'A switch flags PortStateChange or a CA port is not ACTIVE: the fabric is swept again.' },
  { code: 'IBSM-1005', level: 'warn', msg: 'heavy sweep left some of the fabric out; the next sweep tries again', meaning: 'Nodes, links or writes failed in this sweep (counts given); the next sweep retries them.' },
  { code: 'IBSM-1006', level: 'error', msg: 'sweep failed; the SM carries on and sweeps again', meaning: "A heavy sweep failed because of the fabric (lost SMPs, unroutable): the SM keeps running and sweeps again." },
  { code: 'IBSM-1007', level: 'error', msg: 'sweep failed', meaning: 'A heavy sweep failed for a local reason: the SM cannot go on (see the error).' },
  { code: 'IBSM-1008', level: 'error', msg: 'light sweep failed; the SM carries on and sweeps again', meaning: 'A light sweep failed because of the fabric; the SM carries on.' },
  { code: 'IBSM-1009', level: 'error', msg: 'light sweep failed', meaning: 'A light sweep failed for a local reason.' },
  { code: 'IBSM-1010', level: 'error', msg: 'multicast forwarding update failed; the SM carries on and sweeps again', meaning: 'Writing the MFTs failed because of the fabric; the SM carries on.' },
  { code: 'IBSM-1011', level: 'error', msg: 'multicast forwarding update failed', meaning: 'Reprogramming the MFTs after a join, a leave or a sweep failed (error given).' },
  { code: 'IBSM-1020', level: 'info', msg: 'entering MASTER', meaning: 'This SM became the master SM of the subnet.' },
  { code: 'IBSM-1021', level: 'info', msg: 'entering STANDBY', meaning: 'Another SM masters the subnet (GUID, LID given); this one polls it.' },
  { code: 'IBSM-1022', level: 'info', msg: 'entering DISCOVERING', meaning: 'This SM is discovering the subnet (at start, or after losing it).' },
  { code: 'IBSM-1023', level: 'info', msg: 'entering NOTACTIVE', meaning: 'This SM stopped taking part (disabled by another SM, or stopped).' },
  { code: 'IBSM-1024', level: 'info', msg: 'handover to {master}', meaning: 'This master handed the subnet over to a better SM, whose port GUID the line names.' },
  { code: 'IBSM-1025', level: 'info', msg: 'SM found', meaning: 'Discovery found another SM port (GUID, LID, priority, state).' },
  { code: 'IBSM-1026', level: 'debug', msg: 'SMInfo not read', meaning: "Another SM port did not answer a SMInfo Get; it is looked at again next sweep." },
  { code: 'IBSM-1027', level: 'debug', msg: 'master poll unanswered', meaning: 'A standby polled its master and got no answer (after the configured misses it takes over).' },
  { code: 'IBSM-1028', level: 'debug', msg: 'trap 144 to the master not delivered', meaning: "A standby's notice to the master that it is an SM got no answer." },
  { code: 'IBSM-1029', level: 'warn', msg: 'SMInfo Set from an SM with another SM_Key ignored', meaning: 'An SM with a different non-zero SM_Key tried to control this one; ignored.', remote: true },
  { code: 'IBSM-1030', level: 'warn', msg: 'SMInfo Set refused', meaning: 'A SMInfo Set not valid in this state (IBA 14.4.1) was refused with status 7.', remote: true },
  { code: 'IBSM-1031', level: 'warn', msg: 'SMInfo Set not delivered', meaning: 'A handover / acknowledge SMInfo Set to another SM got no answer.' },
  { code: 'IBSM-1032', level: 'warn', msg: 'SMInfo Set not sent: no route to the SM', meaning: 'Another SM must be told something but neither its LID nor a path to it is known.' },
  { code: 'IBSM-1033', level: 'warn', msg: 'SA state not pulled from the master', meaning: "A standby could not copy the master's SA state this poll; it tries again." },
  { code: 'IBSM-1034', level: 'info', msg: 'SMP retries in this sweep', meaning: 'Some SMPs needed retries in this sweep (recovered, Sets found done, given up).' },
  { code: 'IBSM-1035', level: 'info', msg: 'action cut short by the stop', meaning: 'The SM was stopped while a sweep or a multicast update ran (its MAD RPC layer closed under it): not a failure; nothing more is sent.' },
  { code: 'IBSM-1036', level: 'error', msg: 'a master with another SM_Key holds the fabric; this SM does not program it', meaning: "Discovery found an SM whose SM_Key differs answering as MASTER (GUID, LID, priority and both keys given): ibsm writes nothing to the fabric and looks again on every sweep interval; it masters once that SM stops answering. To run both, give them one SM_Key (--sm-key, opensm.conf sm_key); --force-master overrides." },
  { code: 'IBSM-1037', level: 'info', msg: 'the master with another SM_Key is gone; this SM manages the fabric again', meaning: 'The SM of IBSM-1036 no longer answers as MASTER: this SM sweeps and programs the fabric.' },
  { code: 'IBSM-1038', level: 'warn', msg: 'an SM with another SM_Key is ignored: it can neither take this subnet nor be handed it', meaning: 'An SM whose SM_Key differs stands by or discovers: it does not count in elections, its SMInfo Sets are refused, and it is never handed the subnet. Logged once per SM.' },
  { code: 'IBSM-1039', level: 'error', msg: 'ports name another master or their LIDs moved: another SM is writing this fabric', meaning: "A light sweep found CA ports whose MasterSMLID is not this SM's LID, or whose LID is not the one this SM gave them: a heavy sweep follows, finds the other SM and, if its SM_Key differs, stops writing (IBSM-1036). The LIDs this SM assigned are kept, never taken from the other SM." },
  { code: 'IBSM-1040', level: 'info', msg: "the master does not serve ibsm's SA state sync", meaning: 'The master this SM stands by for (OpenSM, or an SM with another SM_Key) has no SA state to pull: a takeover from it starts with an empty SA and sets ClientReregister. Asked once per master.' },
  { code: 'IBSM-1041', level: 'info', msg: 'stopping: handover to {master}', meaning: 'A master that stops hands the subnet to its best standby (GUID given) before it exits, so the standby takes over at once instead of after its polls go unanswered.' },
  { code: 'IBSM-1042', level: 'info', msg: 'takeover from the view: every port told its new master; a full heavy sweep verifies', meaning: "Handed the subnet by the ibsm master it stood by for, whose view of the fabric its own discovery matched (same fingerprint, sent with the SA state): this SM told every port it is their master (PortInfo Sets, figures given) without rediscovering the fabric first, and computed the routes the old master wrote. A full heavy sweep follows at once and programs whatever changed." },
  { code: 'IBSM-1043', level: 'info', msg: 'takeover: the fabric is not the view the old master had; full heavy sweep', meaning: 'A takeover from the view was possible but a switch flags a port change, holds another LinearFDBTop or does not answer, or the LIDs would change (reason given): the new master rediscovers the fabric as after any handover.' },
  { code: 'IBSM-1044', level: 'info', msg: "this standby's view of the fabric is the master's: a handover is taken over from it", meaning: "The fingerprint of the master's view (nodes, links, LIDs), pulled with its SA state, is that of this standby's own discovery: when the master hands over (e.g. as it stops), this SM takes the subnet over from that view (IBSM-1042). Said when it becomes true." },
  { code: 'IBSM-1045', level: 'info', msg: "this standby's view of the fabric is no longer the master's: a handover is followed by a full heavy sweep", meaning: "The master swept a fabric that differs from what this standby discovered when it stood by (a node or link came or went, a LID moved): this standby rediscovers the fabric once (no Set) to hold the master's view again (IBSM-1044); a handover before that starts with a full rediscovery, as a failover does." },
  { code: 'IBSM-1101', level: 'debug', msg: 'sweep phase: discovery', meaning: '--verbose: nodes, switches, ports, SMPs and time of the discovery phase.' },
  { code: 'IBSM-1102', level: 'debug', msg: 'sweep phase: LIDs', meaning: '--verbose: end ports, highest LID, LIDs changed and time of the LID assignment.' },
  { code: 'IBSM-1103', level: 'debug', msg: 'sweep phase: ports', meaning: '--verbose: PortInfo Sets written, ports told INIT to ARMED, P_Key blocks, time.' },
  { code: 'IBSM-1104', level: 'debug', msg: 'sweep phase: routing', meaning: '--verbose: the engine, its time and the verification figures of its routes.' },
  { code: 'IBSM-1105', level: 'debug', msg: 'sweep phase: forwarding tables', meaning: '--verbose: SwitchInfo, LFT blocks read and written, SL2VL/VLArb tables, time.' },
  { code: 'IBSM-1106', level: 'debug', msg: 'sweep phase: activation', meaning: '--verbose: ports told ARMED to ACTIVE and time.' },
  { code: 'IBSM-1107', level: 'debug', msg: 'sweep phase: multicast', meaning: '--verbose: multicast groups, MFT blocks written and failed, time.' },
  { code: 'IBSM-1108', level: 'debug', msg: 'sweep phase: light sweep', meaning: '--verbose: nodes, SMPs, whether anything changed, CA ports read (this sweep\'s share, or all when full), time.' },
  { code: 'IBSM-1109', level: 'debug', msg: 'sweep done', meaning: '--verbose: one sweep finished (kind, SMPs, time).' },
  { code: 'IBSM-1201', level: 'info', msg: 'local sweep done', meaning: 'A change around a few ports was re-explored and re-routed locally.' },
  { code: 'IBSM-1202', level: 'info', msg: 'local sweep: change not local, full heavy sweep follows', meaning: 'The local sweep found more than it can handle; the whole fabric is swept.' },
  { code: 'IBSM-1203', level: 'info', msg: 'local sweep: no switch flags a change; ports or SMs need a full heavy sweep', meaning: 'No switch reports a port change, so a full heavy sweep looks for what moved.' },
  { code: 'IBSM-1204', level: 'warn', msg: 'local sweep: a write failed; full heavy sweep follows', meaning: 'Writes of a local sweep failed (each logged as IBSM-2030; the count and the first one given): the other writes went on, and a full heavy sweep follows.' },
  { code: 'IBSM-1205', level: 'info', msg: 'node found', meaning: 'A local sweep took in a host the last sweep did not have (node, GUID, port, and the switch port it hangs off given).' },
  // ---- 2: discovery, LIDs, programming
  { code: 'IBSM-2001', level: 'info', msg: 'discovery done', meaning: 'Discovery finished: nodes, switches, SMPs, depth.' },
  { code: 'IBSM-2002', level: 'warn', msg: 'node left out of this sweep: it could not be read', meaning: 'A node did not answer (node, GUID, LID, path given); the next sweep tries again.' },
  { code: 'IBSM-2003', level: 'warn', msg: 'link left out of this sweep: its far side could not be read', meaning: 'The far side of a port did not answer (node, GUID, port, path given).' },
  { code: 'IBSM-2004', level: 'warn', msg: 'more nodes and links left out of this sweep', meaning: 'More than 20 nodes/links were left out: the rest are counted here, not listed.' },
  { code: 'IBSM-2005', level: 'error', msg: 'duplicate GUID: a second node answers with the GUID of a node found already; it is left out', meaning: 'Two nodes share a GUID (both paths given): fix the hardware; the second is not managed.' },
  { code: 'IBSM-2006', level: 'info', msg: 'link down', meaning: 'A link went down (both ends named: node, GUID, port).' },
  { code: 'IBSM-2007', level: 'info', msg: 'link up', meaning: 'A link came up (both ends named).' },
  { code: 'IBSM-2008', level: 'info', msg: 'node gone', meaning: 'A node is no longer reachable (node, GUID).' },
  { code: 'IBSM-2020', level: 'info', msg: 'LIDs assigned', meaning: 'LIDs assigned: end ports, highest LID, how many changed, the SM LID.' },
  { code: 'IBSM-2030', level: 'warn', msg: 'SMP write failed; left for the next sweep', meaning: 'A Set was not acknowledged after every retry (node, GUID, port, LID, attribute given).' },
  { code: 'IBSM-2031', level: 'warn', msg: 'more SMP writes failed in this sweep', meaning: 'More than 20 writes failed: the rest are counted here.' },
  { code: 'IBSM-2032', level: 'warn', msg: 'port protected by an M_Key this SM does not know: its Sets are refused; left out until the M_Key lease expires', meaning: 'Configure --mkey with that M_Key, or wait for its lease to expire.' },
  { code: 'IBSM-2033', level: 'info', msg: "port's M_Key read from its PortInfo (protection off): its Sets present it", meaning: "A port holds another M_Key but does not protect it: this SM's Sets carry that key." },
  { code: 'IBSM-2034', level: 'warn', msg: 'port stuck in INIT: told to ARM, it stays in INIT; left for the next sweep', meaning: 'The port acknowledged INIT to ARMED but stays INIT (a link or firmware problem).' },
  { code: 'IBSM-2035', level: 'warn', msg: 'more ports stuck in INIT', meaning: 'More than 20 ports stuck: the rest are counted here.' },
  { code: 'IBSM-2036', level: 'info', msg: 'ClientReregister set on every port: the SA holds no registrations from before', meaning: 'First master sweep: clients are told to register again with the SA.' },
  { code: 'IBSM-2037', level: 'warn', msg: 'port is in no partition', meaning: 'partitions.conf gives the port no P_Key: it cannot talk to anyone.' },
  { code: 'IBSM-2038', level: 'warn', msg: 'P_Key table full: partitions left out of a port', meaning: "The port's P_Key table (PartitionCap, typically 64) cannot hold all its partitions: the first that fit are written, the rest named (OpenSM's ERR 0512); metric ibsm_pkey_tables_full." },
  { code: 'IBSM-2040', level: 'info', msg: 'LFT blocks read back', meaning: 'LFT blocks of switches programmed by someone else were read before writing.' },
  { code: 'IBSM-2041', level: 'debug', msg: 'LFT block written', meaning: 'A local sweep wrote one LFT block (switch GUID, block).' },
  { code: 'IBSM-2042', level: 'warn', msg: 'MFT blocks not written; left for the next update', meaning: 'MFT blocks were not acknowledged (first switch named); the next update retries.' },
  { code: 'IBSM-2043', level: 'debug', msg: 'multicast', meaning: 'A note of the multicast tree computation (e.g. a member not reachable).' },
  { code: 'IBSM-2044', level: 'warn', msg: 'alias GUIDs not written', meaning: 'A GUIDInfo block of alias GUIDs was not written to the port (node, port, LID given).' },
  { code: 'IBSM-2045', level: 'warn', msg: 'topology mismatch', meaning: 'The fabric differs from the expected topology (--topology): the class (missing-node, extra-node, missing-link, extra-link, wrong-port, guid-changed, width, speed) and both ends (node descriptions, GUIDs, ports) given. Logged once when found.' },
  { code: 'IBSM-2046', level: 'info', msg: 'topology mismatch gone', meaning: 'A mismatch with the expected topology is no longer found (the cable fixed, the file changed).' },
  { code: 'IBSM-2047', level: 'warn', msg: 'isolated: not brought to ACTIVE, not routed', meaning: 'A link or node is isolated (its class configured `isolate`): held in INIT (taken Down first if it was ARMED or ACTIVE) and left out of routing.' },
  { code: 'IBSM-2048', level: 'info', msg: 'isolation released', meaning: 'An isolated link or node matches the expected topology again: the sweep brings it to ACTIVE and routes over it.' },
  { code: 'IBSM-2049', level: 'info', msg: 'isolated ports taken Down', meaning: 'Isolated ports that were ARMED or ACTIVE were set Down (the link retrains to INIT, where it is held); counts given.' },
  { code: 'IBSM-2050', level: 'info', msg: 'local sweep: a node is isolated; full heavy sweep follows', meaning: 'A local sweep does not re-link an isolated node: a full heavy sweep compares and isolates it again.' },
  { code: 'IBSM-2060', level: 'info', msg: 'vports', meaning: 'A heavy sweep read the SR-IOV virtual ports (docs/vports.md): capable ports, vports, ACTIVE, with their own LID, activated now.' },
  { code: 'IBSM-2061', level: 'warn', msg: 'vports not read', meaning: "A capable port's virtualization attributes could not be read (node, GUID, port, error given): its vports are left as they were until the next sweep." },
  { code: 'IBSM-2062', level: 'warn', msg: 'vports not polled', meaning: "A light sweep's VirtualizationInfo poll of a capable port failed (GUID, port, error given): read again at the next sweep." },
  { code: 'IBSM-2063', level: 'info', msg: 'vports changed: handled without a heavy sweep', meaning: 'VPortStateChange on some ports: their vports were read, the new ones given LIDs, routed (only the LFT blocks of the new LIDs) and activated, without a heavy sweep (figures given).' },
  { code: 'IBSM-2064', level: 'warn', msg: 'vports not re-read after VPortStateChange was cleared', meaning: "A port whose VPortStateChange the SM just cleared could not be read again (GUID, port, error given): its vports are read in full at the next light sweep's vport pass." },
  { code: 'IBSM-2065', level: 'warn', msg: 'link flapping', meaning: 'A link changed state (went or came back) as many times within the window as --health-flap says (both ends, the count and the action given): with isolate it is held in INIT and left out of routing, its bounces no longer re-route anything.' },
  { code: 'IBSM-2066', level: 'info', msg: 'flapping link quiet: isolation released', meaning: "A link isolated for flapping saw no state change for --health-flap's quiet time: it is brought to ACTIVE and routed again." },
  { code: 'IBSM-2067', level: 'info', msg: 'flapping link quiet time over: heavy sweep follows', meaning: "A flapping link's quiet time is over and the light sweep found no change: a heavy sweep releases it." },
  { code: 'IBSM-2068', level: 'warn', msg: 'isolated by hand', meaning: '`ibsm isolate NODE[:PORT]`: the link or node (given) is held in INIT and left out of routing (source manual) until `ibsm release`.' },
  { code: 'IBSM-2069', level: 'info', msg: 'released by hand', meaning: '`ibsm release NODE[:PORT]`: the isolation (its source given: manual, flapping) is released; the sweep that follows brings it to ACTIVE and routes it.' },
  { code: 'IBSM-2070', level: 'warn', msg: 'port error rate over threshold', meaning: 'Error counters read by PerfMgr at one end of a link rose faster than --health-errors allows (both ends, the counters with their rates per minute, the action given): with isolate the link is held in INIT and left out of routing (source errors). Logged once until the link is quiet.' },
  { code: 'IBSM-2071', level: 'info', msg: 'erroring link quiet: isolation released', meaning: "A link isolated for its error rate saw none of the policy's counters rise for --health-errors' quiet time: it is brought to ACTIVE and routed again." },
  { code: 'IBSM-2072', level: 'info', msg: 'error-rate isolations changed: heavy sweep follows', meaning: 'The error-rate policy isolated or released a link after a PerfMgr sweep: a full heavy sweep applies it (routes around it, or over it again).' },
  { code: 'IBSM-2073', level: 'warn', msg: '--health-errors without --perfmgr: no error rates to judge', meaning: 'The error-rate policy is fed by PerfMgr: turn on --perfmgr (and pick --perfmgr-interval) or the policy never acts.' },
  { code: 'IBSM-2075', level: 'warn', msg: 'node unresponsive', meaning: "A node's SMPs timed out, after the retries, in as many consecutive heavy sweeps as --health-unresponsive says (the node, the count and the action given): with isolate it is left out of routing and later sweeps do not wait for it (one probe a sweep watches it)." },
  { code: 'IBSM-2076', level: 'info', msg: 'unresponsive node answers again', meaning: 'A node named unresponsive (IBSM-2075) and not isolated was read by a heavy sweep again.' },
  { code: 'IBSM-2077', level: 'info', msg: 'unresponsive node answered for the quiet time: isolation released', meaning: "A node isolated as unresponsive answered its probe for --health-unresponsive's quiet time: released; a heavy sweep reads it and routes through it again." },
  { code: 'IBSM-2078', level: 'info', msg: 'health state loaded', meaning: 'At start, the isolations kept across a restart (the file next to the guid2lid file, how many): held again, with the time each began; with its policy on, a flapping or unresponsive isolation is released after its quiet time from now, else only by hand.' },
  { code: 'IBSM-2079', level: 'warn', msg: 'health state file not used', meaning: 'The health state file could not be read or parsed (the file and the problem given): the SM starts with nothing isolated but what it finds; the file is written again at the next change.' },
  { code: 'IBSM-2080', level: 'warn', msg: 'health state not saved', meaning: 'Writing the health state file failed (the file, the error, the failures so far): the isolations hold in memory; the next change tries again.' },
  { code: 'IBSM-2081', level: 'info', msg: 'health state from the master', meaning: 'Taking over from an ibsm master whose SA state this SM mirrored: its isolations (every source but the expected topology) are held from the first sweep, replacing those this SM had (how many of each given).' },
  { code: 'IBSM-2082', level: 'warn', msg: 'health state row from the master not used', meaning: 'An isolation in the SA state mirrored from the master did not decode (the problem given; another ibsm version?): it is left out, the others are held.' },
  { code: 'IBSM-2085', level: 'debug', msg: 'quarantined link bounced: counted for the flapping policy, no sweep', meaning: 'A link isolated for flapping changed state again (trap 128 or PortStateChange of the switch given, nothing else on it changed): its quiet time starts again; no sweep, no routing, no LFT write (sm/health-quiet.ts).' },
  { code: 'IBSM-2086', level: 'debug', msg: 'switch with a quarantined link: another port changed; sweeping', meaning: 'A switch at the end of a link isolated for flapping flagged a change, and another of its ports (given) moved too, or the quarantined port leads elsewhere now: the SM sweeps as for any change.' },
  { code: 'IBSM-2087', level: 'debug', msg: 'quarantined link check failed; sweeping', meaning: 'Reading a switch at the end of a link isolated for flapping failed (error given): the SM sweeps as for any change, and the sweep finds out what happened.' },
  // ---- 3: traps
  { code: 'IBSM-3001', level: 'info', msg: 'trap received', meaning: 'A trap arrived (number, source LID; details in the fields).', remote: true },
  { code: 'IBSM-3002', level: 'warn', msg: 'malformed trap ignored', meaning: 'A trap that does not decode was dropped (source LID given).', remote: true },
  { code: 'IBSM-3003', level: 'warn', msg: 'trap storm: traps from this port damped (repressed, not logged, no sweep) until it calms down', meaning: 'A port sends traps faster than the limit: they are repressed and ignored for a while.', remote: true },
  { code: 'IBSM-3004', level: 'warn', msg: 'TrapRepress refused for a bad M_Key: not repressed again (the port repeats its trap on its own schedule)', meaning: 'The port refused TrapRepress: its M_Key is not the one this SM presents.', remote: true },
  { code: 'IBSM-3005', level: 'warn', msg: 'malformed SMInfo Set ignored', meaning: 'A SMInfo Set that does not decode was dropped.', remote: true },
  { code: 'IBSM-3006', level: 'debug', msg: 'SMInfo answer not sent', meaning: 'An SMInfo Get held while the master decided about a new SM could not be answered (the SM was stopping).', remote: true },
  { code: 'IBSM-3007', level: 'debug', msg: 'trap 128: its change already read by a local sweep; no sweep', meaning: 'A trap 128 that arrived while the SM was busy: a local sweep published since read the ports of its switch after the trap arrived (the other end of a link, both ends trapping), so it saw the change; no sweep (sm/trap-check.ts).' },
  { code: 'IBSM-3008', level: 'debug', msg: 'trap 128: PortStateChange clear and the ports as the snapshot has them; no sweep', meaning: "A trap 128 from a switch whose ports a local sweep read: checked alone (its SwitchInfo and PortInfo), nothing moved since that sweep; no sweep (sm/trap-check.ts)." },
  { code: 'IBSM-3009', level: 'debug', msg: 'trap 128: a port moved since the snapshot', meaning: 'A trap 128 checked alone: a port of its switch (given) moved since the last sweep read it: the SM sweeps, unless a local sweep read that switch since the trap (sm/trap-check.ts).' },
  { code: 'IBSM-3010', level: 'debug', msg: 'trap 128 check failed', meaning: "Reading the switch of a trap 128 failed (error given; the path to it may have gone with the change another trap's sweep handles): the SM sweeps as for any change, unless a local sweep read that switch since the trap (sm/trap-check.ts)." },
  // ---- 4: routing
  { code: 'IBSM-4001', level: 'info', msg: 'routing done', meaning: 'Routes computed: engine, time, VLs used.' },
  { code: 'IBSM-4002', level: 'warn', msg: 'routing engine not applicable', meaning: 'An engine of the chain does not apply to this fabric (reason given); the next is tried.' },
  { code: 'IBSM-4003', level: 'error', msg: 'no engine of the routing chain applies; routing with the final fallback', meaning: 'No configured engine applies (reasons given): the deadlock-free fallback routes instead.' },
  { code: 'IBSM-4020', level: 'info', msg: 'forwarding tables of the previous master adopted', meaning: "The first heavy sweep after taking over from another SM (the SM port named another master) read every switch's LFT back; the tables verify (every LID reachable over ACTIVE links, no loop, deadlock-free when the configured engine promises it) and their busiest link carries at most 1.2x the routes of the configured engine's: they are kept, and no LFT block is written. They stay until the next full re-route (sm/adopt-lfts.ts)." },
  { code: 'IBSM-4021', level: 'info', msg: 'forwarding tables of the previous master not adopted: routing with the configured engine', meaning: 'The tables another SM left were read back but are not kept (the reason: a switch not read whole, a route that fails or loops, a credit loop, a busier busiest link, an engine whose routes use several VLs): the blocks that differ from the configured engine\'s routes are written.' },
  { code: 'IBSM-4030', level: 'warn', msg: 'routing engine routes in its own order: the guid routing order file is not used by it', meaning: 'A guid routing order file is configured (guid_routing_order_file) and an engine of the routing chain does not take it (only minhop, updn and dfsssp do, as in OpenSM): when that engine routes, it routes as without the file. Logged at start and at each reload.' },
  { code: 'IBSM-4031', level: 'error', msg: 'guid routing order file not read; routing without an order', meaning: 'At a reload the guid routing order file could not be read or parsed (file and reason given): the routes are computed without an order, as OpenSM does (ERR 3A0D), and the rest of the reload applies. At start the same file is a configuration error.' },
  { code: 'IBSM-4010', level: 'info', msg: 'incremental re-route', meaning: 'Only the routes through the changed links were recomputed (figures given).' },
  { code: 'IBSM-4011', level: 'warn', msg: 'incremental re-route not possible; full re-route', meaning: 'The incremental re-route could not keep the routes valid (reason given): the engine routes all.' },
  { code: 'IBSM-4012', level: 'debug', msg: 'incremental re-route rehearsed', meaning: 'While idle after a heavy sweep, a dry re-route (a link down and back, on copies) warmed the re-route code (outcomes and ms given).' },
  // between subnets, through routers (docs/routers.md)
  { code: 'IBSM-4101', level: 'info', msg: 'subnets found', meaning: 'The in-process fabric has several subnets joined by routers: one SM+SA runs per subnet (counts given).' },
  { code: 'IBSM-4102', level: 'info', msg: 'router tables written', meaning: "Every subnet's SM wrote its part of the routers' tables after the first sweeps (router ports given)." },
  { code: 'IBSM-4103', level: 'warn', msg: 'router tables not written', meaning: "A router port did not take this subnet's GID->LID table (router named); tried again after the next heavy sweep." },
  { code: 'IBSM-4104', level: 'warn', msg: 'router not read', meaning: 'What a router port reaches could not be read (router named); the SA does not offer it until it is read.' },
  { code: 'IBSM-4105', level: 'warn', msg: 'router tables failed', meaning: "Programming one subnet's routers failed (prefix given); the SM carries on and tries after the next heavy sweep." },
  // ---- 5: SA
  { code: 'IBSM-5001', level: 'error', msg: 'SA request failed', meaning: 'Answering one SA request threw; it was answered with NO_RESOURCES and the SA carries on.', remote: true },
  { code: 'IBSM-5002', level: 'warn', msg: 'SA RMPP response failed', meaning: 'A multi-MAD SA answer was not acknowledged by the requester (LID given).', remote: true },
  { code: 'IBSM-5003', level: 'warn', msg: 'SA response could not be sent', meaning: 'The transport refused an SA answer (requester LID given).', remote: true },
  { code: 'IBSM-5004', level: 'warn', msg: 'SA table answer refused: too many RMPP transfers running', meaning: 'The RMPP bounds (--sa-rmpp-per-port, --sa-rmpp-total) were reached; the requester retries.', remote: true },
  { code: 'IBSM-5005', level: 'warn', msg: 'report not delivered', meaning: 'An InformInfo Report was not acknowledged by its subscriber (LID given).', remote: true },
  { code: 'IBSM-5006', level: 'warn', msg: 'SA request refused: a bound was reached', meaning: 'A bound of the SA (services, subscriptions or groups per port, groups in all, PathRecords per answer) was reached: answered ERR_NO_RESOURCES (0x0100); requester LID, attribute and method given.', remote: true },
  { code: 'IBSM-5010', level: 'info', msg: 'multicast group created', meaning: 'A multicast group of partitions.conf exists (MGID, MLID, P_Key).' },
  { code: 'IBSM-5011', level: 'error', msg: 'multicast group not created', meaning: 'A multicast group of partitions.conf could not be created (error given).' },
  { code: 'IBSM-5012', level: 'warn', msg: 'partitions.conf multicast group skipped', meaning: 'A multicast group line of partitions.conf was not used (reason given).' },
  { code: 'IBSM-5020', level: 'warn', msg: 'QoS policy', meaning: 'A note on the QoS policy file (a part not used).' },
  { code: 'IBSM-5021', level: 'warn', msg: 'QoS policy SLs not used for PathRecords: the routing engine assigns SLs', meaning: 'The layered routing engine needs its own SLs: the QoS policy SLs are not used.' },
  { code: 'IBSM-5030', level: 'warn', msg: 'SA state sync unavailable: the transport refused its vendor class; a failover loses SA state', meaning: 'No SA state sync with standbys: after a failover clients register again.' },
  { code: 'IBSM-5031', level: 'warn', msg: 'SA state not sent to a standby', meaning: 'A standby asked for the SA state and the answer failed (LID given).', remote: true },
  { code: 'IBSM-5032', level: 'debug', msg: 'SA state pulled', meaning: "A standby copied changes of the master's SA state." },
  { code: 'IBSM-5033', level: 'info', msg: 'SA state restored', meaning: 'After taking over, the SA state copied from the old master was restored.' },
  { code: 'IBSM-5041', level: 'debug', msg: 'SA warmed up', meaning: 'On a device, in idle moments once the SM is up as master or stands by, the SA answered a re-registration storm of its own on a scratch server over a small generated fabric (sa/warmup.ts; requests and errors given): the first real storm meets compiled code. Nothing is sent.' },
  { code: 'IBSM-5040', level: 'warn', msg: 'SA request with a wrong SA_Key dropped', meaning: "An SA request carried a non-zero SM_Key field other than the SA_Key (--sa-key, opensm.conf sa_key): dropped unanswered, as OpenSM does (its ERR 1A04); requester LID and the key it sent given, the count in ibsm_sa_wrong_key_total. A client set with the SM_Key instead of the SA_Key, or a probe.", remote: true },
  // ---- 6: RPC and events
  { code: 'IBSM-6001', level: 'warn', msg: 'event listener failed', meaning: 'A listener of the API events threw; the SM carries on.' },
  // ---- 7: PerfMgr
  { code: 'IBSM-7001', level: 'debug', msg: 'PerfMgr sweep done', meaning: '--verbose: a PerfMgr sweep finished (ports, MADs, time).' },
  { code: 'IBSM-7002', level: 'warn', msg: 'PerfMgr sweep failed', meaning: 'A PerfMgr sweep failed as a whole (error given); the next one follows.' },
  { code: 'IBSM-7003', level: 'warn', msg: 'PerfMgr sweep: ports not read', meaning: "Some ports' PMAs did not answer this PerfMgr sweep (counts given)." },
  { code: 'IBSM-7004', level: 'debug', msg: 'PMA query failed', meaning: "One port's PMA did not answer (node, port, LID given)." },
  { code: 'IBSM-7005', level: 'warn', msg: 'port error counters rose', meaning: 'Error counters of the port rose since the last read (counter+delta given).' },
  // ---- 8: operator
  { code: 'IBSM-8001', level: 'info', msg: 'ibsm starting', meaning: 'The SM starts on the given port (backend, port GUID, routing chain, LMC).' },
  { code: 'IBSM-8002', level: 'info', msg: 'ibsm stopping', meaning: 'The SM stops (the signal or reason given).' },
  { code: 'IBSM-8003', level: 'info', msg: 'log file reopened', meaning: 'SIGUSR1: the log file was opened again (after logrotate).' },
  { code: 'IBSM-8004', level: 'info', msg: 'umad2sim: MADs in flight capped by the socket send buffer', meaning: "Under ibsim's umad2sim preload the requests on the wire at once (window=) are half of what a quarter of the socket send buffer holds (net.core.wmem_default, 1,280 bytes a MAD; the default 212,992 gives 20): when both directions of umad2sim's socket pair fill, ibsim and the SM hang together (docs/ibsim-notes.md). The RPC's window of outstanding requests (outstanding=) waits in the addon's send queue, each answer letting the next one out. Not on a real HCA." },
  { code: 'IBSM-8040', level: 'info', msg: 'configuration reloaded', meaning: 'SIGHUP or `ibsm reload`: the configuration and its files were read again and checked whole; the settings that can change live (partitions, QoS, routing, prefix routes) are applied (named), a full heavy sweep programs them.' },
  { code: 'IBSM-8041', level: 'error', msg: 'configuration reload failed; the running configuration is kept', meaning: 'A reload found an error (file and line given): nothing was changed; fix the file and reload again (ibsm_config_reloads_total{result="failed"}).' },
  { code: 'IBSM-8042', level: 'warn', msg: 'configuration changes need a restart', meaning: 'A reload found settings changed that cannot change in a running SM (the port, the control socket, metrics, log file, ...): named; the running values stay until ibsm is restarted.' },
  { code: 'IBSM-8010', level: 'info', msg: 'control socket served', meaning: 'The control socket listens (path given).' },
  { code: 'IBSM-8011', level: 'warn', msg: 'control socket not served', meaning: 'The default control socket path is not usable; the SM runs without it.' },
  { code: 'IBSM-8012', level: 'warn', msg: 'control socket error', meaning: 'The control socket server reported an error.' },
  { code: 'IBSM-8020', level: 'info', msg: 'metrics served', meaning: 'Prometheus metrics are served (URL given).' },
  { code: 'IBSM-8030', level: 'info', msg: 'web view served', meaning: 'The read-only live web view is served (URL given).' },
  { code: 'IBSM-8031', level: 'warn', msg: 'web view request failed', meaning: 'One web view request could not be answered (URL and error given); the view goes on.', remote: true },
  { code: 'IBSM-8032', level: 'warn', msg: 'web view server error', meaning: 'The web view server reported an error (a broken connection); the SM goes on.' },
  { code: 'IBSM-8050', level: 'warn', msg: 'log lines suppressed: a remote party repeats this line', meaning: 'Lines a remote party can trigger are rate-limited: this many of suppressedCode from source were not written in the last interval (source "*": sources beyond the budget).' },
  // ---- 9: configuration and fatal errors
  { code: 'IBSM-9001', level: 'info', msg: 'configuration read', meaning: 'The config file was read (file, format).' },
  { code: 'IBSM-9002', level: 'warn', msg: 'configuration', meaning: 'A note on the config file (an opensm.conf key not used, ...).' },
  { code: 'IBSM-9003', level: 'info', msg: 'guid2lid loaded', meaning: 'The persistent GUID-to-LID file was read (entries given).' },
  { code: 'IBSM-9010', level: 'warn', msg: 'guid2lid entry not used', meaning: 'A duplicate in the guid2lid file, resolved as OpenSM does: a GUID given twice keeps its later line; a LID range already taken by an earlier line is dropped and its port gets a free LID (file:line given).' },
  { code: 'IBSM-9011', level: 'info', msg: 'guid2lid not used: every port gets a new LID (reassign_lids)', meaning: '--reassign-lids (opensm.conf reassign_lids TRUE): the first sweep as master assigns LIDs afresh.' },
  { code: 'IBSM-9012', level: 'error', msg: 'partition configuration in error; using the default configuration', meaning: 'partitions.conf has an error (file:line given): the SM runs with the default partition (0x7fff, every port full, IPoIB), as OpenSM does; a reload keeps the last good configuration instead. Fix the file and reload.' },
  { code: 'IBSM-9013', level: 'warn', msg: 'guid2lid not saved', meaning: 'The LIDs of a sweep were not saved to the guid2lid store (the file and error given, and how many saves failed so far): the sweep carried on; the next sweep saves again. Check the file\'s directory (space, permissions).' },
  { code: 'IBSM-9101', level: 'error', msg: 'configuration refused; ibsm stops', meaning: 'An option, the config file or a file it names is wrong (the error says which); exit 2.' },
  { code: 'IBSM-9102', level: 'error', msg: 'metrics address not available; ibsm stops', meaning: 'The --metrics-listen / --metrics-port address is in use or not local; exit 1.' },
  { code: 'IBSM-9103', level: 'error', msg: 'no usable device; ibsm stops', meaning: 'No HCA port (or simulated fabric) to run on: check --ca/--port/--guid; or another SM (OpenSM, another ibsm) already runs on that port (SmPortBusyError, naming it): its IsSM bit is left alone; exit 1.' },
  { code: 'IBSM-9104', level: 'error', msg: 'first sweep failed; ibsm stops', meaning: 'The first sweep failed for a local reason (error given); exit 1.' },
  { code: 'IBSM-9105', level: 'error', msg: 'fatal error; ibsm stops', meaning: 'Any other error that ends the process (error given); exit 1.' },
  { code: 'IBSM-9106', level: 'error', msg: 'control socket not available; ibsm stops', meaning: 'The --control-socket path given cannot be served; exit 1.' },
];

const BY_MSG = new Map<string, LogCode>(LOG_CODES.map((c) => [c.msg, c]));

/** The code of a log message, when it has one. */
export function logCodeOf(msg: string): string | undefined {
  return BY_MSG.get(msg)?.code;
}

/** The row of a code (IBSM-NNNN). */
export function logCode(code: string): LogCode | undefined {
  return LOG_CODES.find((c) => c.code === code);
}

/** docs/log-codes.md: the table as Markdown, grouped by area (`npm run docs` writes it). */
export function logCodesMarkdown(): string {
  const out = [
    '# ibsm log codes',
    '',
    '<!-- generated from src/util/log-codes.ts by `npm run docs`; do not edit -->',
    '',
    'Every log line carries a stable code: in text logs the column after the level',
    '(`2026-01-01T00:00:00.000Z warn  IBSM-3003 trap storm: ...`), in JSON logs the `"code"` field.',
    'Scripts should match the code, not the wording.',
    '',
    'The rule: a code, once given, keeps its meaning. A message reworded keeps its code; a message',
    'removed leaves its code unused (never given to another); a new message takes the next free',
    'code of its area. The first digit is the area, like OpenSM\'s ERR numbers.',
    '',
    '## Lines a remote party can trigger',
    '',
    'A host on the fabric (an SMP, a trap, an SA request) or a client of a server (the web view) can',
    'make ibsm write the lines marked *remote* below. They all go through one rate limit',
    '(`Logger.from(source)`, `LogLimiter` in src/util/log.ts), keyed by source (a LID, an address)',
    'and code: the first line of a (source, code) pair in an interval (60 s) is written, the next',
    'ones are counted, and once per interval an `IBSM-8050` line says how many were suppressed',
    '(`suppressedCode`, `source`, `suppressed`). New pairs beyond 100 an interval (or 4,096',
    'remembered) are counted under the source `*`. A flood from any number of sources therefore',
    'writes at most about 200 lines a minute (well under 100 KB), and with `--log-file` the file',
    'is also bounded by `--log-max-size`.',
    '',
    ...LOG_CODES.filter((c) => c.remote).map((c) => `- ${c.code} (${c.level}) ${c.msg}`),
    '',
  ];
  for (const { digit, area } of LOG_AREAS) {
    const rows = LOG_CODES.filter((c) => c.code.startsWith(`IBSM-${digit}`));
    if (!rows.length) continue;
    out.push(`## ${digit}xxx: ${area}`, '', '| code | level | message | meaning |', '|---|---|---|---|');
    for (const c of rows) out.push(`| ${c.code} | ${c.level} | ${c.msg.replace(/\|/g, '\\|')} | ${c.remote ? '*remote*: ' : ''}${c.meaning.replace(/\|/g, '\\|')} |`);
    out.push('');
  }
  return out.join('\n');
}
