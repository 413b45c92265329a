/**
 * A story's `readFirst` anchors (docs/plan-format.md): files or folders the coder should
 * read before anything else. They are a hint, never a rule, so an anchor that cannot be
 * shown safely is dropped with a note instead of refusing the plan: one outside the
 * repository, one through a symbolic link, or one under which git tracks no file.
 */
import { isWithin, normalisePath } from '../paths.js';

/** What `git ls-tree -r` lists of a commit, as far as pruning needs. */
interface TrackedEntry {
  readonly path: string;
  readonly mode: string;
}

interface DroppedAnchor {
  readonly anchor: string;
  readonly why: string;
}

/** Outside the repository: absolute, a drive letter, `..` anywhere, or the whole repository. */
function unsafe(anchor: string): boolean {
  const p = normalisePath(anchor);
  return (
    p === '' ||
    p === '.' ||
    p.startsWith('/') ||
    /^[A-Za-z]:/.test(p) ||
    p.split('/').some((part) => part === '..')
  );
}

/**
 * The anchors to show (normalised, in order, once each) and those dropped, with why,
 * against the tracked entries of the commit the story starts from.
 */
export function pruneReadFirst(
  anchors: readonly string[],
  tracked: readonly TrackedEntry[],
): { readonly kept: string[]; readonly dropped: DroppedAnchor[] } {
  const links = tracked.filter((e) => e.mode === '120000').map((e) => e.path);
  const kept: string[] = [];
  const dropped: DroppedAnchor[] = [];
  for (const anchor of anchors) {
    if (unsafe(anchor)) {
      dropped.push({ anchor, why: 'outside the repository' });
      continue;
    }
    const path = normalisePath(anchor);
    if (links.some((link) => isWithin(path, link))) {
      dropped.push({ anchor, why: 'through a symbolic link' });
      continue;
    }
    if (!tracked.some((e) => e.mode !== '120000' && isWithin(e.path, path))) {
      dropped.push({ anchor, why: 'no tracked file there' });
      continue;
    }
    if (!kept.includes(path)) kept.push(path);
  }
  return { kept, dropped };
}
