/** Typed errors (issue #31 item 4): src/ throws no bare `Error` and declares no error class outside
 * `IbsmError`, so `catch (e) { if (e instanceof IbsmError) … e.code … }` takes whatever ibsm throws
 * on purpose; an exception says why, per entry. Found with the TypeScript compiler's parser (so a
 * `throw new Error(` inside a string, e.g. the web page's script, is not code of ours). */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { IbsmError } from '../src/util/errors.js';
import { VirtualClock } from '../src/util/clock.js';
import { PathRecord, ComponentMaskError } from '../src/entry/wire.js';
import { openSaClient, SubnetNotUpError } from '../src/index.js';

const root = path.resolve(import.meta.dirname, '..');

/** `throw new Error(…)` allowed, as `<path>:<the message's first words>` → why. */
const ALLOWED_THROWS: Record<string, string> = {};

/** Classes extending the built-in Error, not IbsmError, as `<path>:<Class>` → why. */
const ALLOWED_CLASSES: Record<string, string> = {
  'src/sm/local-sweep.ts:NotLocal': 'private control flow of the local sweep, caught in the same file (never leaves it)',
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

function scan(): { throws: string[]; classes: string[] } {
  const throws: string[] = [];
  const classes: string[] = [];
  for (const file of sourceFiles(path.join(root, 'src'))) {
    const rel = path.relative(root, file);
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (n: ts.Node): void => {
      if (ts.isThrowStatement(n) && ts.isNewExpression(n.expression) && ts.isIdentifier(n.expression.expression) && n.expression.expression.text === 'Error') {
        const arg = n.expression.arguments?.[0];
        const words = arg ? arg.getText(sf).replace(/^[`'"]/, '').split(/\s+/).slice(0, 4).join(' ') : '';
        throws.push(`${rel}:${words}`);
      }
      if (ts.isClassDeclaration(n) && n.heritageClauses?.some((h) => h.token === ts.SyntaxKind.ExtendsKeyword && h.types.some((t) => t.expression.getText(sf) === 'Error'))) {
        const name = `${rel}:${n.name?.text ?? '(anonymous)'}`;
        if (name !== 'src/util/errors.ts:IbsmError') classes.push(name); // the base itself
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return { throws, classes };
}

describe('typed errors', () => {
  const { throws, classes } = scan();

  it('src/ throws no bare Error (but the allowed, each with why)', () => {
    expect(throws.filter((t) => !(t in ALLOWED_THROWS))).toEqual([]);
    expect(Object.keys(ALLOWED_THROWS).filter((t) => !throws.includes(t)), 'allowed entries that no longer occur').toEqual([]);
  });

  it('every error class of src/ extends IbsmError (but the allowed, each with why)', () => {
    expect(classes.filter((c) => !(c in ALLOWED_CLASSES))).toEqual([]);
    expect(Object.keys(ALLOWED_CLASSES).filter((c) => !classes.includes(c)), 'allowed entries that no longer occur').toEqual([]);
  });

  it('what used to be bare errors arrive typed, with their message', async () => {
    let e: unknown;
    try {
      PathRecord.mask('nope');
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(ComponentMaskError);
    expect([(e as IbsmError).code, (e as Error).message]).toEqual(['ComponentMaskError', 'layout PathRecord has no component nope']);

    const clock = new VirtualClock();
    const stuck = await clock.runUntil(new Promise(() => undefined), 1000).catch((x: unknown) => x);
    expect(stuck).toBeInstanceOf(IbsmError);
    expect((stuck as IbsmError).code).toBe('VirtualTimeError');
    expect((stuck as Error).message).toMatch(/^deadlock: the promise has not settled at 0 ms of virtual time/);

    // an SM whose subnet is not up yet (no snapshot): the client cannot know the SA's LID
    const early = await openSaClient({ sm: { sim: undefined, snapshot: undefined } as never }).catch((x: unknown) => x);
    expect(early).toBeInstanceOf(SubnetNotUpError);
    expect((early as IbsmError).code).toBe('SubnetNotUpError');
    expect((early as Error).message).toContain('await sm.start()');
  });
});
