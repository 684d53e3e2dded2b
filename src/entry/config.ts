/** `ibsm/config`: the `ibsm` command's option table and config files (ibsm's JSON, OpenSM's
 * opensm.conf), and the parsers of the files an SM reads (partitions, QoS policy, guid2lid, root
 * GUIDs, prefix routes) with the errors that name their file and line. */
export { OPTIONS, optionsOf, DEFAULT_CONFIG_FILE, ROOT_GUID2LID_FILE, PLAIN_HOST, type OptionSpec, type OptionValue, type OptionTarget, type HostFacts, type Command } from '../config/options.js';
export { processHost } from '../util/host.js';
export { parseCommandLine, commandHelp, UsageError } from '../config/parse.js';
export { readConfigFile, resolveConfig, formatEffectiveConfig, type EffectiveConfig, type Setting, type ConfigFileValues } from '../config/file.js';
export { ConfigFileError } from '../config/files.js';
export { readOpensmConf, type OpensmConf } from '../config/opensm-conf.js';
export { RELOADABLE_KEYS } from '../api/sm.js';
export { parsePartitions, PartitionPlan, PartitionConfigError } from '../model/partitions.js';
export { parseQosPolicy, QosPolicyError } from '../model/qos-policy.js';
export { parseGuid2Lid, formatGuid2Lid, Guid2LidError } from '../sm/lids.js';
export { parseGuidFile, GuidFileError } from '../model/guid-file.js';
export { parsePrefixRoutes, matchPrefixRoute, PrefixRoutesError } from '../sa/prefix-routes.js';
