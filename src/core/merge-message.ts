/**
 * The epic branch is the record of what merged: each story merge commit on its
 * first-parent history carries an `Epicflow-Story` trailer. Merged-ness is read
 * back from there, so it survives any loss of local or remote state.
 */
import { formatChain } from './model.js';
import { oneLineText } from './epic/sanitize.js';

export const STORY_TRAILER = 'Epicflow-Story';
const EXECUTOR_TRAILER = 'Epicflow-Executor';
/** On the epic branch: the merge that brought a branch (the default branch, say) in. */
export const LAND_TRAILER = 'Epicflow-Land';
/** On the branch an epic landed in: the merge of the epic branch. */
const EPIC_TRAILER = 'Epicflow-Epic';

interface MergeMessageInput {
  /** Story id. */
  readonly story: string;
  readonly title: string;
  /** Executors that held the coder role, in order, or an already formatted chain. */
  readonly chain: readonly string[] | string;
}

/**
 * One line, no control or bidirectional-override characters: a title must not break the
 * trailer block, nor read differently in a log than it is.
 */
function oneLine(text: string): string {
  const printable = [...text].map((c) => (c < ' ' || c === '\u007f' ? ' ' : c)).join('');
  return oneLineText(printable);
}

/** `Merge story <id>: <title>`, a blank line, then the trailers. */
export function buildMergeMessage({ story, title, chain }: MergeMessageInput): string {
  const executors = typeof chain === 'string' ? chain : formatChain(chain);
  const subject =
    oneLine(title) === '' ? `Merge story ${story}` : `Merge story ${story}: ${oneLine(title)}`;
  const trailers = [`${STORY_TRAILER}: ${story}`];
  if (oneLine(executors) !== '') trailers.push(`${EXECUTOR_TRAILER}: ${oneLine(executors)}`);
  return `${subject}\n\n${trailers.join('\n')}\n`;
}

/**
 * `Merge <branch> into <epic branch>`, then the trailers: `Epicflow-Land: <branch>`
 * and, when a coder resolved it, the executors that did.
 */
export function buildLandMessage(input: {
  readonly branch: string;
  readonly epicBranch: string;
  readonly chain: readonly string[];
}): string {
  const trailers = [`${LAND_TRAILER}: ${oneLine(input.branch)}`];
  if (input.chain.length > 0)
    trailers.push(`${EXECUTOR_TRAILER}: ${oneLine(formatChain(input.chain))}`);
  return `Merge ${oneLine(input.branch)} into ${oneLine(input.epicBranch)}\n\n${trailers.join('\n')}\n`;
}

/** `Merge <epic branch> into <branch>: <title>`, then `Epicflow-Epic: <epic>`. */
export function buildLandedMessage(input: {
  readonly epic: string;
  readonly epicBranch: string;
  readonly into: string;
  readonly title?: string | null | undefined;
}): string {
  const title = oneLine(input.title ?? '');
  const subject = `Merge ${oneLine(input.epicBranch)} into ${oneLine(input.into)}${title === '' ? '' : `: ${title}`}`;
  return `${subject}\n\n${EPIC_TRAILER}: ${oneLine(input.epic)}\n`;
}

/** Values of `key:` trailers in the last paragraph of a commit message. */
export function trailerValues(message: string, key: string): string[] {
  const paragraphs = message.trim().split(/\n\s*\n/);
  const last = paragraphs[paragraphs.length - 1] ?? '';
  const prefix = `${key.toLowerCase()}:`;
  return last
    .split('\n')
    .filter((line) => line.toLowerCase().startsWith(prefix))
    .map((line) => line.slice(prefix.length).trim())
    .filter((v) => v !== '');
}
