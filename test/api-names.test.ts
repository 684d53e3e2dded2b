/** Unique type names (issue #31): a name the package exports means one thing. Across the root
 * (`ibsm`) and every subpath (`ibsm/routing`, `ibsm/wire`, `ibsm/sim`, `ibsm/config`), no two
 * entries export different declarations under one name; and no two modules of src/ export
 * different types (interfaces, type aliases, classes, enums) under one name, so a reader (or an
 * editor's auto-import) never has to ask which `EndPort` a file means. Checked with the
 * TypeScript compiler's checker over src/, resolving re-exports to their declaration. */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const ENTRIES = ['src/index.ts', ...readdirSync(path.join(root, 'src/entry')).filter((f) => f.endsWith('.ts')).sort().map((f) => `src/entry/${f}`)];

function program(): ts.Program {
  const cfg = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!cfg) throw new Error('tsconfig.json does not parse');
  return ts.createProgram({ rootNames: cfg.fileNames, options: { ...cfg.options, noEmit: true } });
}

/** Where a symbol is declared, as `src/file.ts:Name` (re-exports followed to the declaration). */
function where(checker: ts.TypeChecker, s: ts.Symbol): string {
  const t = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
  const d = t.declarations?.[0];
  return d ? `${path.relative(root, d.getSourceFile().fileName)}:${t.name}` : t.name;
}

/** name → the distinct declarations exported under it, for the names with more than one. */
function clashes(exports: Iterable<[string, string]>): Record<string, string[]> {
  const by = new Map<string, Set<string>>();
  for (const [name, decl] of exports) {
    let s = by.get(name);
    if (!s) by.set(name, (s = new Set()));
    s.add(decl);
  }
  return Object.fromEntries([...by].filter(([, s]) => s.size > 1).map(([n, s]) => [n, [...s].sort()]));
}

const TYPE_FLAGS = ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class | ts.SymbolFlags.Enum;

describe('exported names', () => {
  const prog = program();
  const checker = prog.getTypeChecker();
  const moduleOf = (file: string): ts.Symbol => {
    const sf = prog.getSourceFile(path.join(root, file));
    const m = sf && checker.getSymbolAtLocation(sf);
    if (!m) throw new Error(`${file} is not a module of the program`);
    return m;
  };

  it('no two package entries export different declarations under one name', () => {
    const all: Array<[string, string]> = [];
    for (const e of ENTRIES) for (const s of checker.getExportsOfModule(moduleOf(e))) all.push([s.name, where(checker, s)]);
    expect(all.length).toBeGreaterThan(100);
    expect(clashes(all)).toEqual({});
  });

  it('no two modules of src/ declare an exported type under one name', () => {
    const all: Array<[string, string]> = [];
    for (const sf of prog.getSourceFiles()) {
      if (sf.isDeclarationFile || !path.relative(root, sf.fileName).startsWith('src/')) continue;
      const m = checker.getSymbolAtLocation(sf);
      if (!m) continue;
      for (const s of checker.getExportsOfModule(m)) {
        if (s.flags & ts.SymbolFlags.Alias || !(s.flags & TYPE_FLAGS)) continue; // re-exports are checked where declared
        all.push([s.name, where(checker, s)]);
      }
    }
    expect(all.length).toBeGreaterThan(100);
    expect(clashes(all)).toEqual({});
  });
});
