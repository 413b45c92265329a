/**
 * What the judge's diff window leaves out: the diff is cut after a number of bytes, and
 * a large change sorted first would otherwise hide every file after it. Pure.
 */
import { diffHeaderPath } from '../gates/index.js';

interface PastWindow {
  /** Files whose diff starts inside the window and ends after it. */
  readonly partly: string[];
  /** Files whose diff starts after the window: not shown at all. */
  readonly omitted: string[];
}

interface Section {
  path: string | null;
  start: number;
  end: number;
  inHeader: boolean;
}

/** The path of `diff --git a/X b/Y` when no `---`/`+++` line names it (a mode change, an empty file). */
function gitLinePath(line: string): string | null {
  const at = line.lastIndexOf(' b/');
  return at < 0 ? null : line.slice(at + 3);
}

/** The files of a unified diff that a window of its first `max` bytes cuts or leaves out. */
export function pathsPastWindow(diff: string, max: number): PastWindow {
  const encoder = new TextEncoder();
  const partly: string[] = [];
  const omitted: string[] = [];
  if (encoder.encode(diff).length <= max) return { partly, omitted };
  const sections: Section[] = [];
  let offset = 0;
  let current: Section | undefined;
  for (const line of diff.split('\n')) {
    if (line.startsWith('diff --git ')) {
      current = { path: gitLinePath(line), start: offset, end: offset, inHeader: true };
      sections.push(current);
    } else if (current?.inHeader === true) {
      if (line.startsWith('@@')) current.inHeader = false;
      else if (line.startsWith('+++ ') || line.startsWith('--- ')) {
        current.path = diffHeaderPath(line.slice(4)) ?? current.path;
      }
    }
    offset += encoder.encode(line).length + 1;
    if (current !== undefined) current.end = offset;
  }
  for (const s of sections) {
    if (s.path === null) continue;
    if (s.start >= max) omitted.push(s.path);
    else if (s.end > max) partly.push(s.path);
  }
  return { partly, omitted };
}
