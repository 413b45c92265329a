/**
 * No module of src imports a module that imports it back (directly or around a longer
 * loop): what two files share lives in a third that both import. Type-only imports count
 * too: they are gone at run time, but a loop of types still ties the modules into one
 * that cannot be read, moved or tested apart.
 */
import { describe, expect, it } from '@jest/globals';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..', '..');

/**
 * The relative modules a file imports or re-exports; `runtimeOnly`: those it still imports
 * once types are gone.
 */
function imports(file: string, text: string, runtimeOnly = false): string[] {
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
      if (!(runtimeOnly && onlyTypes)) specifier = node.moduleSpecifier;
    } else if (ts.isExportDeclaration(node) && !(runtimeOnly && node.isTypeOnly)) {
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
  it('form no loop, type-only imports included', async () => {
    const graph = new Map<string, string[]>();
    for (const file of await sourceFiles(join(root, 'src'))) {
      graph.set(file, imports(file, await readFile(file, 'utf8')));
    }
    expect(graph.size).toBeGreaterThan(100);
    const named = loops(graph).map((part) => part.map((f) => relative(root, f)));
    expect(named).toEqual([]);
  });

  it('a loop is found, however long, and one closed by a type-only import too', () => {
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
    const named = (graph: Map<string, string[]>): string[][] =>
      loops(graph).map((part) => part.map((f) => relative(join(root, 'src'), f)));
    for (const [name, text] of Object.entries(files)) probe.set(at(name), imports(at(name), text));
    expect(named(probe)).toEqual([
      ['a.ts', 'b.ts', 'c.ts'],
      ['d.ts', 'e.ts', 'f.ts'],
    ]);
    // Without the types, only the loop that holds at run time is left.
    for (const [name, text] of Object.entries(files)) {
      probe.set(at(name), imports(at(name), text, true));
    }
    expect(named(probe)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});
