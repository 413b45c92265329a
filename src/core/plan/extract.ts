/**
 * Finds ` ```epicflow ` blocks in markdown, following CommonMark's rules for
 * fenced code blocks closely enough that what GitHub renders as one plan block is
 * exactly what we read: fences of 3+ backticks or tildes indented up to 3 spaces,
 * closed by the same character at least as long, or by the end of the document.
 * Fences inside other fences and inside HTML comments (issue templates often keep
 * an example plan there) are not plan blocks.
 */

export interface PlanBlock {
  /** The block's text, lines joined with `\n`, without the fences. */
  readonly content: string;
  /** 1-based line of the markdown where `content` starts. */
  readonly line: number;
}

const PLAN_INFO = 'epicflow';

interface OpenFence {
  readonly char: '`' | '~';
  readonly length: number;
  readonly indent: number;
}

function openingFence(line: string): (OpenFence & { info: string }) | undefined {
  const m = /^( {0,3})(`{3,}|~{3,})(.*)$/.exec(line);
  if (!m) return undefined;
  const [, spaces = '', fence = '', info = ''] = m;
  const char = fence[0] === '`' ? '`' : '~';
  // A backtick fence's info string may not contain backticks (it would be inline code).
  if (char === '`' && info.includes('`')) return undefined;
  return { char, length: fence.length, indent: spaces.length, info: info.trim() };
}

function closesFence(line: string, open: OpenFence): boolean {
  const m = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
  const fence = m?.[1];
  return fence !== undefined && fence[0] === open.char && fence.length >= open.length;
}

/** Removes up to `indent` leading spaces, as CommonMark does for fenced content. */
function dedent(line: string, indent: number): string {
  let i = 0;
  while (i < indent && line[i] === ' ') i += 1;
  return line.slice(i);
}

export function extractPlanBlocks(markdown: string): PlanBlock[] {
  const lines = markdown.split(/\r\n|\r|\n/);
  const blocks: PlanBlock[] = [];
  let fence: (OpenFence & { isPlan: boolean; start: number; body: string[] }) | undefined;
  let inComment = false;

  lines.forEach((line, index) => {
    if (fence) {
      if (closesFence(line, fence)) {
        if (fence.isPlan) blocks.push({ content: fence.body.join('\n'), line: fence.start });
        fence = undefined;
      } else if (fence.isPlan) {
        fence.body.push(dedent(line, fence.indent));
      }
      return;
    }
    if (inComment) {
      if (line.includes('-->')) inComment = false;
      return;
    }
    const open = openingFence(line);
    if (open) {
      const isPlan = open.info.split(/\s+/)[0] === PLAN_INFO;
      fence = { ...open, isPlan, start: index + 2, body: [] };
      return;
    }
    // An HTML comment block starts with `<!--` (up to 3 spaces in) and ends on the
    // line holding `-->`, which may be the same line.
    const comment = /^ {0,3}<!--(.*)$/.exec(line);
    if (comment && !(comment[1] ?? '').includes('-->')) inComment = true;
  });
  // An unclosed fence runs to the end of the document.
  if (fence?.isPlan) blocks.push({ content: fence.body.join('\n'), line: fence.start });
  return blocks;
}
