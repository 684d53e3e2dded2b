/** The TypeScript type of a command's configuration, computed from the option table's literal
 * types (config/options.ts `OptionTable`): each config key of the command with the type of its
 * value (`type`, and `choices` for an enum). api/sm-config.ts's SmConfig is `ConfigOf<'run'>` and
 * the few API-only extras; no interface restates the table (test/option-types.test.ts). */
import type { Command, OptionTable } from './options.js';

/** The value of each option type, as the config file's checker and the argv parser return it. */
interface ValueOfType {
  boolean: boolean;
  string: string;
  int: number;
  key64: bigint;
  list: string[];
  enum: string;
}

type Spec = OptionTable[number];

/** One option's value type: an enum's choices as a literal union, else its type's. */
export type OptionValueOf<S> = S extends { readonly type: 'enum'; readonly choices: readonly (infer C)[] } ? C : S extends { readonly type: infer T extends keyof ValueOfType } ? ValueOfType[T] : never;

/** The config keys of a command, each optional, with its value's type. */
export type ConfigOf<C extends Command> = {
  -readonly [S in Spec as S extends { readonly key: infer K extends string; readonly commands: readonly (infer Cs)[] } ? (C extends Cs ? K : never) : never]?: OptionValueOf<S>;
};
