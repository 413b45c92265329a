/**
 * What a long-lived process (the App) may remember between events to spare
 * GitHub requests. Only facts that cannot go stale are kept without checking:
 * the merged stories below a commit (content addressed). Comment ids are hints: a write through a stale id fails and falls
 * back to finding the comment again. A process that restarts starts empty and
 * just reads again; a fresh `GitHubCache` per run (the default) remembers nothing.
 */

/** A `Map` that forgets its oldest entries beyond `max` (insertion order, refreshed on `get`). */
class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();

  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.max) {
      const oldest = this.map.keys().next();
      if (oldest.done === true) break;
      this.map.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  get size(): number {
    return this.map.size;
  }
}

export class GitHubCache {
  /** Story id → merge commit found walking first parents from a commit, by commit sha. */
  readonly merged = new BoundedMap<string, ReadonlyMap<string, string>>(500);
  /** Our sticky comments by `<repo>#<issue>:<marker>`: id and body as last written or read. */
  readonly comments = new BoundedMap<string, { id: number; body: string }>(2000);
  /**
   * The project board (URL; null: none) each repository's configuration named when last
   * read, by `owner/repo`: its next epic views read the board along. A hint only: a view
   * read for a board the configuration no longer names is not used for it.
   */
  readonly boards = new BoundedMap<string, string | null>(500);
}
