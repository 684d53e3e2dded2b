/** The one base of ibsm's public errors: `catch (e) { if (e instanceof IbsmError) … }` takes every
 * error the package throws on purpose, `code` says which (the class name, e.g. 'TopologyError':
 * stable, match on it rather than on the message), and an error about a file the operator wrote
 * (topology, partitions, QoS policy, guid2lid, root GUIDs, config) has the `file` and `line`
 * (1-based; absent when the problem is the file as a whole) its message starts with. */
export class IbsmError extends Error {
  override readonly name: string = 'IbsmError';
  readonly file?: string;
  readonly line?: number;

  constructor(message: string, where: { file?: string; line?: number; cause?: unknown } = {}) {
    super(message, where.cause === undefined ? undefined : { cause: where.cause });
    if (where.file !== undefined) this.file = where.file;
    if (where.line !== undefined) this.line = where.line;
  }

  /** Which error: the class name (every subclass sets its `name`). */
  get code(): string {
    return this.name;
  }
}

/** An error in a file the operator wrote, whose message is `FILE:LINE: detail` or `FILE: detail`
 * (the form every such message takes, so an editor jumps to it): `file` and `line` come from it. */
export class IbsmFileError extends IbsmError {
  override readonly name: string = 'IbsmFileError';

  /** `where` when the message does not start with the file (`--guid2lid FILE: …`). */
  constructor(message: string, where?: { file: string; line?: number; cause?: unknown }) {
    const m = /^(\S+?):(\d+): /.exec(message) ?? /^(\S+): /.exec(message);
    super(message, where ?? (m ? { file: m[1], line: m[2] === undefined ? undefined : Number(m[2]) } : {}));
  }
}

/** A broken invariant of ibsm itself ("cannot happen"): a bug to report, with the message, not
 * something an operator's input or the fabric can cause. */
export class InternalError extends IbsmError {
  override readonly name: string = 'InternalError';
}

/** A call that needs a subnet the SM has brought up (a snapshot), made before the first sweep
 * finished: `await sm.start()` (or wait for `subnetUp`) first. */
export class SubnetNotUpError extends IbsmError {
  override readonly name = 'SubnetNotUpError';
}
