/**
 * docs/architecture.md draws the layers of src as a graph of arrows ("may import"): every
 * arrow drawn is an import the code has, and every import across layers is drawn. A layer
 * is a folder of src (the entries `cli`, `app` and `action` are one); `engine/ports.ts` is
 * drawn on its own as what the adapters see of the engine (for every other layer it is the
 * engine's).
 */
import { describe, expect, it } from '@jest/globals';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..', '..');
const src = join(root, 'src');

/** The relative modules a file imports or re-exports, type-only ones included. */
function imports(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  for (const node of source.statements) {
    const specifier =
      ts.isImportDeclaration(node) || ts.isExportDeclaration(node)
        ? node.moduleSpecifier
        : undefined;
    if (specifier !== undefined && ts.isStringLiteral(specifier)) {
      const name = specifier.text;
      if (name.startsWith('.')) out.push(resolve(dirname(file), name.replace(/\.js$/, '.ts')));
    }
  }
  return out;
}

const ENTRIES = new Set(['cli', 'app', 'action', 'index.ts']);

/** The layer of a module of src, as the drawing names it. */
function layerOf(file: string, importer?: string): string {
  const path = relative(src, file).split('/');
  const top = path[0] ?? '';
  if (ENTRIES.has(top)) return 'entries';
  if (top === 'engine' && path[1] === 'ports.ts' && importer === 'adapters') return 'ports';
  return top;
}

/** The arrows of the first mermaid flowchart of the page (the layers). */
function drawnArrows(markdown: string): Set<string> {
  const block = /```mermaid\n(flowchart[^\n]*\n[\s\S]*?)```/.exec(markdown)?.[1];
  if (block === undefined) throw new Error('docs/architecture.md has no mermaid flowchart');
  const arrows = new Set<string>();
  for (const line of block.split('\n').slice(1)) {
    const m = /^\s*(\w+)(?:\[[^\]]*\])?\s*-->\s*(\w+)(?:\[[^\]]*\])?\s*$/.exec(line);
    if (m === null) {
      if (line.trim() !== '') throw new Error(`cannot read this line of the drawing: ${line}`);
      continue;
    }
    arrows.add(`${m[1]} --> ${m[2]}`);
  }
  return arrows;
}

describe('the drawing of the layers', () => {
  it('has every import across layers, and no arrow the code does not have', async () => {
    const files = (await readdir(src, { withFileTypes: true, recursive: true }))
      .filter((e) => e.isFile() && e.name.endsWith('.ts'))
      .map((e) => join(e.parentPath, e.name));
    const actual = new Map<string, string>();
    for (const file of files) {
      const from = layerOf(file);
      for (const target of imports(file, await readFile(file, 'utf8'))) {
        const to = layerOf(target, from);
        if (to !== from)
          actual.set(
            `${from} --> ${to}`,
            `${relative(root, file)} imports ${relative(root, target)}`,
          );
      }
    }
    const drawn = drawnArrows(await readFile(join(root, 'docs', 'architecture.md'), 'utf8'));
    const undrawn = [...actual]
      .filter(([arrow]) => !drawn.has(arrow))
      .map(([a, why]) => `${a} (${why})`);
    const unused = [...drawn].filter((arrow) => !actual.has(arrow));
    expect({ undrawn, unused }).toEqual({ undrawn: [], unused: [] });
  });
});
