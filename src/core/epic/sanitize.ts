/**
 * Issue and comment text is data (docs/security.md). Before it reaches a prompt or
 * is echoed into one of epicflow's own comments it is cleaned: nothing hidden
 * from the people reading the issue may reach an agent, and nothing echoed may
 * notify people who never asked to be involved.
 */

/**
 * Characters that change how text reads without being seen: C0/C1 controls
 * other than tab and newline, soft hyphen, Arabic letter mark, Hangul and
 * Mongolian fillers, zero-width and directional marks (U+200B–U+200F), bidi
 * embeddings and overrides (U+202A–U+202E), word joiner and invisible
 * operators (U+2060–U+2064), bidi isolates and deprecated format characters
 * (U+2066–U+206F), the BOM, interlinear annotation controls and the tag
 * characters (U+E0000–U+E007F), which can smuggle a whole hidden text.
 */
const INVISIBLE =
  // eslint-disable-next-line no-control-regex -- control characters are exactly what we strip
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu;

/**
 * Removes HTML comments (an unterminated `<!--` hides everything after it, so
 * that goes too) and invisible characters; line breaks become `\n`.
 * Invisible characters go first so that `<!\u200b--` cannot survive as a
 * comment opener, and the unterminated pass runs last so no `<!--` remains.
 * Idempotent.
 */
export function sanitizeIssueText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(INVISIBLE, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<!--[\s\S]*$/, '');
}

/**
 * A title from people on one line, for places that show it raw (a commit message, a
 * branch's log, a run name): invisible, control and bidirectional-override characters
 * removed, whitespace runs (line breaks included) made one space.
 */
export function oneLineText(text: string): string {
  return text.replace(INVISIBLE, '').replace(/\s+/g, ' ').trim();
}

/**
 * Fences sanitised text as a quoted block for a prompt. The fence is one
 * backtick longer than the longest backtick run inside (at least three), so
 * nothing in the text can close it early.
 */
export function quoteForPrompt(text: string, info = 'text'): string {
  return fenceBlock(sanitizeIssueText(text), info);
}

/** A fenced block that no backtick run inside `text` can close. */
export function fenceBlock(text: string, info: string): string {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  const body = text.endsWith('\n') ? text : `${text}\n`;
  return `${fence}${info}\n${body}${fence}`;
}

/** GitHub user or team handle after `@` (`alice`, `my-org/team_a`). */
const HANDLE = /^[A-Za-z0-9][A-Za-z0-9-]*(?:\/[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?)?/;
/** Characters after which GitHub does not link `@name` (a word character: `a@b.com`). */
const WORD_CHAR = /[A-Za-z0-9_]/;
const ASCII_PUNCT = /[!-/:-@[-`{-~]/;

/**
 * Makes `@name` mentions in markdown inert by putting each in a code span
 * (GitHub never notifies from code), so echoing an issue title or a failure
 * reason does not ping anyone. Existing code spans are kept as they are;
 * literal backticks outside code are escaped so that they cannot pair with
 * the spans this adds. The text reads the same on GitHub.
 */
export function neutralizeMentions(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    if (c === '\\') {
      const next = text.charAt(i + 1);
      // `\@name` renders as `@name` and would still notify: drop the escape, wrap the mention.
      if (next === '@' && !WORD_CHAR.test(text.charAt(i - 1))) {
        const handle = HANDLE.exec(text.slice(i + 2));
        if (handle !== null) {
          out += mentionSpan(out, handle[0], text.charAt(i + 2 + handle[0].length));
          i += 2 + handle[0].length;
          continue;
        }
      }
      // Any other escape (`\``, `\\`) is copied as a unit so it is never re-read.
      out += ASCII_PUNCT.test(next) ? c + next : c;
      i += ASCII_PUNCT.test(next) ? 2 : 1;
      continue;
    }
    if (c === '`') {
      const run = /^`+/.exec(text.slice(i))?.[0] ?? '`';
      const close = closingRun(text, i + run.length, run.length);
      if (close === -1) {
        // An unmatched run is literal text: escape it so it pairs with nothing we add.
        out += '\\`'.repeat(run.length);
        i += run.length;
      } else {
        out += text.slice(i, close + run.length);
        i = close + run.length;
      }
      continue;
    }
    if (c === '@' && !WORD_CHAR.test(text.charAt(i - 1))) {
      const handle = HANDLE.exec(text.slice(i + 1));
      if (handle !== null) {
        out += mentionSpan(out, handle[0], text.charAt(i + 1 + handle[0].length));
        i += 1 + handle[0].length;
        continue;
      }
    }
    out += c;
    i += 1;
  }
  return out;
}

/** Index of the next backtick run of exactly `length` at or after `from`, or -1. */
function closingRun(text: string, from: number, length: number): number {
  const runs = /`+/g;
  runs.lastIndex = from;
  for (let m = runs.exec(text); m !== null; m = runs.exec(text)) {
    if (m[0].length === length) return m.index;
  }
  return -1;
}

/** `` `@name` ``, with a space where a neighbouring backtick would merge into its fence. */
function mentionSpan(before: string, handle: string, after: string): string {
  const lead = before.endsWith('`') ? ' ' : '';
  const trail = after === '`' ? ' ' : '';
  return `${lead}\`@${handle}\`${trail}`;
}
