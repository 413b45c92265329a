/**
 * No module of src imports, at run time, a module that imports it back (directly or
 * around a longer loop): what two files share lives in a third that both import.
 * Type-only imports are left out: they are gone at run time.
 */
import { describe, expect, it } from '@jest/globals';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..', '..');

/** The relative modules a file imports or re-exports at run time. */
function runtimeImports(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  for (const node of source.statements) {
    let specifier: ts.Expression | undefined;
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const onlyTypes =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            bindings !== undefined &&
            ts.isNamedImports(bindings) &&
            bindings.elements.length > 0 &&
            bindings.elements.every((e) => e.isTypeOnly)));
      if (!onlyTypes) specifier = node.moduleSpecifier;
    } else if (ts.isExportDeclaration(node) && !node.isTypeOnly) {
      specifier = node.moduleSpecifier;
    }
    if (specifier !== undefined && ts.isStringLiteral(specifier)) {
      const name = specifier.text;
      if (name.startsWith('.')) out.push(resolve(dirname(file), name.replace(/\.js$/, '.ts')));
    }
  }
  return out;
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** The loops of the graph: its strongly connected parts of more than one module. */
function loops(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    for (;;) {
      const w = stack.pop();
      if (w === undefined) break;
      onStack.delete(w);
      part.push(w);
      if (w === v) break;
    }
    if (part.length > 1) found.push(part.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('imports in src', () => {
  it('form no loop at run time', async () => {
    const graph = new Map<string, string[]>();
    for (const file of await sourceFiles(join(root, 'src'))) {
      graph.set(file, runtimeImports(file, await readFile(file, 'utf8')));
    }
    expect(graph.size).toBeGreaterThan(100);
    const named = loops(graph).map((part) => part.map((f) => relative(root, f)));
    expect(named).toEqual([]);
  });

  it('a loop is found, however long, and a type-only import makes none', () => {
    const at = (name: string): string => join(root, 'src', name);
    const probe = new Map<string, string[]>();
    const files: Record<string, string> = {
      'a.ts': "import { b } from './b.js';\nexport const a = b;",
      'b.ts': "import { c } from './c.js';\nexport const b = c;",
      'c.ts': "export { a as c } from './a.js';",
      'd.ts': "import type { e } from './e.js';\nimport { type f } from './f.js';",
      'e.ts': "import { d } from './d.js';",
      'f.ts': "import { d } from './d.js';",
    };
    for (const [name, text] of Object.entries(files)) {
      probe.set(at(name), runtimeImports(at(name), text));
    }
    expect(loops(probe).map((part) => part.map((f) => relative(join(root, 'src'), f)))).toEqual([
      ['a.ts', 'b.ts', 'c.ts'],
    ]);
  });
});
