/** Source size (issue #31): no file in src/ over MAX_FILE_LINES lines and no function (declaration,
 * method, arrow or function expression, with the closures inside it) over MAX_FUNCTION_LINES, but
 * the exceptions named below, each with why. An exception that is back within the limit must come
 * off the list, so the list stays what remains to split. Functions are measured with the
 * TypeScript compiler's parser, from their first token (not their doc comment) to their last. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const MAX_FILE_LINES = 500;
const MAX_FUNCTION_LINES = 150;

/** Files over MAX_FILE_LINES, by path from the repository root. */
const ALLOWED_FILES: Record<string, string> = {};

/** Functions over MAX_FUNCTION_LINES, as `<path>:<name>` (methods `<Class>.<method>`). */
const ALLOWED_FUNCTIONS: Record<string, string> = {};

const root = path.resolve(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out.sort();
}

/** Lines as `wc -l` counts them. */
function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

function functionName(n: ts.SignatureDeclaration, sf: ts.SourceFile): string {
  const own = n.name?.getText(sf);
  const cls = n.parent && ts.isClassLike(n.parent) ? n.parent.name?.getText(sf) : undefined;
  if (own) return cls ? `${cls}.${own}` : own;
  if (ts.isConstructorDeclaration(n)) return `${cls ?? '<class>'}.constructor`;
  const p = n.parent;
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p))) return p.name.getText(sf);
  return `<anonymous@${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}>`;
}

/** Every function with a body in `text` longer than `max` lines: name and length. */
function longFunctions(fileName: string, text: string, max: number): Array<{ name: string; lines: number }> {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const out: Array<{ name: string; lines: number }> = [];
  const visit = (n: ts.Node): void => {
    if (ts.isFunctionLike(n) && (n as ts.FunctionLikeDeclaration).body) {
      const a = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
      const b = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
      if (b - a + 1 > max) out.push({ name: functionName(n, sf), lines: b - a + 1 });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

const files = sourceFiles(path.join(root, 'src')).map((f) => ({ rel: path.relative(root, f).split(path.sep).join('/'), text: readFileSync(f, 'utf8') }));
const longFiles = new Map(files.map((f) => [f.rel, lineCount(f.text)] as const).filter(([, n]) => n > MAX_FILE_LINES));
const longFns = new Map(files.flatMap((f) => longFunctions(f.rel, f.text, MAX_FUNCTION_LINES).map((x) => [`${f.rel}:${x.name}`, x.lines] as const)));

describe('source size (#31)', () => {
  it('the measure finds a function one line over the limit, by name, and not one at the limit', () => {
    const body = (n: number): string => Array.from({ length: n - 2 }, (_, i) => `  x += ${i};`).join('\n');
    const text = `class C {\n  m(): void {\n${body(MAX_FUNCTION_LINES + 1)}\n  }\n}\nexport const f = (): void => {\n${body(MAX_FUNCTION_LINES)}\n};\n`;
    expect(longFunctions('t.ts', text, MAX_FUNCTION_LINES)).toEqual([{ name: 'C.m', lines: MAX_FUNCTION_LINES + 1 }]);
  });

  it(`no file in src/ is over ${MAX_FILE_LINES} lines but the allowed ones`, () => {
    expect(files.length).toBeGreaterThan(100);
    expect([...longFiles].filter(([f]) => !(f in ALLOWED_FILES)).map(([f, n]) => `${f}: ${n} lines`)).toEqual([]);
  });

  it(`no function in src/ is over ${MAX_FUNCTION_LINES} lines but the allowed ones`, () => {
    expect([...longFns].filter(([f]) => !(f in ALLOWED_FUNCTIONS)).map(([f, n]) => `${f}: ${n} lines`)).toEqual([]);
  });

  it('every exception is still over its limit (one split comes off the list)', () => {
    expect(Object.keys(ALLOWED_FILES).filter((f) => !longFiles.has(f))).toEqual([]);
    expect(Object.keys(ALLOWED_FUNCTIONS).filter((f) => !longFns.has(f))).toEqual([]);
  });
});
