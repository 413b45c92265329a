/**
 * What one process already knows of a repository's objects, by id: the tree of each commit
 * it wrote, and the entries of the last trees it listed or wrote. An object never changes
 * under its id, so none of this is read from git again (a commit's files listed before a
 * coder's turn and after it, a merge whose tree is the story commit's). Nothing here comes
 * from a work tree, a ref or a config: only what git answered for an id, or what epicflow
 * wrote under the id git gave it.
 */
import { OBJECT_ID } from './objects.js';
import type { FileEntry } from './tree-of-files.js';

/** How many trees' entries are kept (each as large as the repository's listing). */
const KEPT_TREES = 4;

export class KnownTrees {
  /** Commit → its tree, for commits epicflow wrote. */
  private readonly trees = new Map<string, string>();
  /** Commit or tree id → its entries (`ls-tree -r`), the most recent last. */
  private readonly listings = new Map<string, ReadonlyMap<string, FileEntry>>();

  /** `commit` was written with `tree`, whose entries are `entries` when epicflow wrote the tree. */
  wrote(commit: string, tree: string, entries?: ReadonlyMap<string, FileEntry>): void {
    this.trees.set(commit, tree);
    if (entries !== undefined) this.listed(tree, entries);
  }

  /** The tree of a commit epicflow wrote; undefined when it is not known. */
  treeOf(commit: string): string | undefined {
    return this.trees.get(commit);
  }

  /** The entries of the commit or tree `id` are `entries`. */
  listed(id: string, entries: ReadonlyMap<string, FileEntry>): void {
    this.listings.delete(id);
    this.listings.set(id, entries);
    for (const old of this.listings.keys()) {
      if (this.listings.size <= KEPT_TREES) break;
      this.listings.delete(old);
    }
  }

  /** The entries of `base` (by id: listed once; by any other name: every time). */
  async entries(
    base: string,
    list: () => Promise<ReadonlyMap<string, FileEntry>>,
  ): Promise<ReadonlyMap<string, FileEntry>> {
    if (!OBJECT_ID.test(base)) return list();
    const known = this.entriesOf(base);
    if (known !== undefined) return known;
    const entries = await list();
    this.listed(base, entries);
    return entries;
  }

  /** The entries of the commit or tree `id`, when known. */
  entriesOf(id: string): ReadonlyMap<string, FileEntry> | undefined {
    const tree = this.trees.get(id);
    return this.listings.get(id) ?? (tree === undefined ? undefined : this.listings.get(tree));
  }

  /** Whether two commits hold the same tree; undefined unless both trees are known. */
  sameTree(a: string, b: string): boolean | undefined {
    const [x, y] = [this.trees.get(a), this.trees.get(b)];
    return x === undefined || y === undefined ? undefined : x === y;
  }
}
