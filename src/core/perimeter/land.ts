/**
 * The perimeter of a landing: what the land coder may change when a branch is
 * brought into the epic. Pure: the engine lists the tree's files and gathers
 * the gates' output; this decides.
 */
import { normalisePath } from '../paths.js';

/** Characters that end a path mention in tool output (quotes, brackets, separators). */
const TOKEN = /[^\s'"`()<>[\]{},;|=]+/g;

/**
 * The files of the tree that a text (a gate's output) names, in order of first
 * mention. A mention may carry a line and column (`src/a.ts:12:5`), a
 * `file://` prefix, or the tree's absolute path (`roots`) in front; it counts
 * only when it is, after that, exactly a file of `files`.
 */
export function pathsNamedIn(
  text: string,
  files: ReadonlySet<string>,
  roots: readonly string[] = [],
): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const prefixes = roots.map((r) => `${normalisePath(r)}/`);
  for (const match of text.matchAll(TOKEN)) {
    let t = match[0].replace(/^file:\/\//, '');
    t = t.replace(/\\/g, '/');
    // Trailing positions and punctuation: `a.ts:12:5:`, `a.ts.`, `a.ts:`.
    for (let prev = ''; prev !== t;) {
      prev = t;
      t = t.replace(/:\d+$/, '').replace(/[.:]+$/, '');
    }
    for (const root of prefixes) {
      if (t.startsWith(root)) {
        t = t.slice(root.length);
        break;
      }
    }
    t = normalisePath(t);
    if (t === '' || seen.has(t) || !files.has(t)) continue;
    seen.add(t);
    found.push(t);
  }
  return found;
}

interface LandPerimeterInput {
  /** The paths the merge left in conflict. */
  readonly conflicts: readonly string[];
  /** Output of the gates that failed (new against the baseline). */
  readonly gateOutputs: readonly string[];
  /** Every file of the tree the gates ran on. */
  readonly files: ReadonlySet<string>;
  /** Absolute paths of that tree, stripped from mentions. */
  readonly roots?: readonly string[] | undefined;
  /**
   * When the gates ran code the land coder wrote, what they name counts only
   * within these paths (what either branch changed since they parted): the
   * coder cannot widen its own perimeter by making a gate print paths.
   */
  readonly within?: ReadonlySet<string> | undefined;
}

/**
 * The conflicting paths plus the files the failing gates' output names that
 * exist in the tree (within `within` when given), sorted, each once.
 */
export function landPerimeter(input: LandPerimeterInput): string[] {
  const out = new Set(input.conflicts.map(normalisePath));
  for (const text of input.gateOutputs) {
    for (const path of pathsNamedIn(text, input.files, input.roots ?? [])) {
      if (input.within === undefined || input.within.has(path)) out.add(path);
    }
  }
  return [...out].sort();
}
