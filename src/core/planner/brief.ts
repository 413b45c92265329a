/**
 * An epic brief (docs/planning.md#start-from-a-brief): an epic file whose header (the lines
 * before its first `##` heading) holds a `Status:` line. Only an approved brief whose open
 * questions all have an answer is planned from; a draft, or an approved brief with a question
 * still open, is refused before any planner runs. A file without a `Status:` line is plain prose.
 */
import { EpicflowError } from '../errors.js';

interface OpenQuestion {
  /** The item's number as written (`3`), or its position for a bullet. */
  readonly n: string;
  readonly text: string;
}

interface Brief {
  readonly status: string;
  /** Questions of the `## Open questions` section with no `Answer:` yet. */
  readonly open: readonly OpenQuestion[];
}

const STATUS = /^status:[ \t]*(.*?)\s*$/i;
const ITEM = /^ {0,3}(?:(\d+)[.)]|[-*+])\s+(.*)$/;
const ANSWER = /^\s*(?:[-*+]\s+)?answer:[ \t]*(.*?)\s*$/i;

/** The brief the text is, or null when it is plain prose (no `Status:` in its header). */
export function readBrief(markdown: string): Brief | null {
  const lines = markdown.split(/\r?\n/);
  const headerEnd = lines.findIndex((l) => /^##\s/.test(l));
  const header = headerEnd === -1 ? lines : lines.slice(0, headerEnd);
  const statusLine = header.map((l) => STATUS.exec(l.trim())).find((m) => m !== null);
  if (statusLine === undefined || statusLine === null) return null;
  const status = (statusLine[1] ?? '').replace(/[*_`]/g, '').toLowerCase();
  return { status, open: openQuestions(lines) };
}

function openQuestions(lines: readonly string[]): OpenQuestion[] {
  const start = lines.findIndex((l) => /^##\s+open questions\s*$/i.test(l.trim()));
  if (start === -1) return [];
  const open: OpenQuestion[] = [];
  let current: { n: string; text: string; answered: boolean } | undefined;
  const close = (): void => {
    if (current !== undefined && !current.answered) open.push({ n: current.n, text: current.text });
  };
  let position = 0;
  for (const line of lines.slice(start + 1)) {
    if (/^#{1,2}\s/.test(line)) break;
    const answer = ANSWER.exec(line);
    if (answer !== null) {
      if (current !== undefined && (answer[1] ?? '') !== '') current.answered = true;
      continue;
    }
    const item = ITEM.exec(line);
    if (item !== null) {
      close();
      position += 1;
      current = { n: item[1] ?? String(position), text: (item[2] ?? '').trim(), answered: false };
    }
  }
  close();
  return open;
}

/**
 * Throws the usage error that refuses a brief not ready to plan from: a draft (or any
 * status but approved), or an approved brief with open questions, each named.
 */
export function requireApprovedBrief(brief: Brief, file: string): void {
  if (brief.status !== 'approved') {
    throw new EpicflowError(
      'usage',
      `${file} is a brief with Status: ${brief.status === '' ? '(empty)' : brief.status}, not approved`,
      {
        details: [
          'a brief is planned from once it is agreed: answer its open questions, then set Status: approved',
        ],
      },
    );
  }
  if (brief.open.length > 0) {
    throw new EpicflowError(
      'usage',
      `${file} is approved but ${brief.open.length === 1 ? 'a question is' : `${brief.open.length} questions are`} still open`,
      {
        details: [
          ...brief.open.map(
            (q) => `${q.n}. ${q.text.length > 100 ? `${q.text.slice(0, 97)}...` : q.text}`,
          ),
          'write an "Answer: …" line under each in "## Open questions", then plan again',
        ],
      },
    );
  }
}
