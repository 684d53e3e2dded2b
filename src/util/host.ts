/** The host facts the option table's defaults go by (config/options.ts HostFacts), read from this
 * process: at the edge (cli/main.ts, and resolveConfig when not given them), never by the table. */
export function processHost(env: NodeJS.ProcessEnv = process.env): { root: boolean; umad2sim: boolean } {
  return { root: typeof process.getuid === 'function' && process.getuid() === 0, umad2sim: env.LD_PRELOAD?.includes('umad2sim') === true };
}
