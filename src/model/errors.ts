import { IbsmError } from '../util/errors.js';

/** A topology file, spec or JSON document that cannot be used. `line` is 1-based (0: not about a line). */
export class TopologyError extends IbsmError {
  override readonly name = 'TopologyError';
  constructor(
    /** File name (or "<text>", or the generator spec) the problem is in. */
    override readonly file: string,
    override readonly line: number,
    readonly detail: string,
  ) {
    super(line > 0 ? `${file}:${line}: ${detail}` : `${file}: ${detail}`);
  }
}
