/**
 * The land prompt: a coder brings a branch into the epic branch by resolving
 * the merge's conflicts and the gates it turned red. The files' text is data
 * from the two branches: quoted in fenced blocks, never instructions.
 */
import { conflictExcerpt } from '../land/index.js';
import { bullets } from './clean.js';
import { gateFailureBlocks, houseRulesSection, type GateFailureFeedback } from './coder-prompt.js';

/** A conflicting path and its text as it is now in the tree (null: not a text file there). */
export interface LandConflictFile {
  readonly path: string;
  readonly text: string | null;
}

export interface LandPromptInput {
  readonly epic: string;
  readonly epicBranch: string;
  /** The branch brought in. */
  readonly branch: string;
  /** Its commit, as the conflict markers name it. */
  readonly branchHead?: string | undefined;
  readonly round: number;
  readonly maxRounds: number;
  /** Every path the merge left in conflict (round 1: all of them still have their markers). */
  readonly conflicts: readonly string[];
  /** The conflicting files that still hold markers, with their text. */
  readonly unresolved: readonly LandConflictFile[];
  /** The gates that failed on the merged tree, new against the epic branch. */
  readonly gateFailures?: readonly GateFailureFeedback[] | undefined;
  /** Paths the previous round changed outside the perimeter (they were put back). */
  readonly restored?: readonly string[] | undefined;
  readonly perimeter: readonly string[];
  readonly gates: readonly string[];
  readonly houseRules?: string | undefined;
}

/** A name for inline code: one line, no backticks. */
function name(text: string): string {
  return `\`${text.replace(/[`\r\n]/g, '')}\``;
}

function fenced(text: string): string {
  return ['```text', text.replace(/```/g, "'''"), '```'].join('\n');
}

export function buildLandPrompt(input: LandPromptInput): string {
  const epicBranch = name(input.epicBranch);
  const branch = name(input.branch);
  const parts: string[] = [
    `# Land ${branch} into ${epicBranch}`,
    `You are bringing the branch ${branch} into ${epicBranch}, the branch of the epic "${input.epic}", ` +
      'in the current working directory only. The merge is already made in your working tree: ' +
      `\`HEAD\` is ${epicBranch}, the other side is ${branch}` +
      (input.branchHead === undefined
        ? '.'
        : ` (its commit ${name(input.branchHead)} in the markers).`),
    'Resolve it keeping both sides\u2019 intent: what the epic built and what ' +
      `${branch} changed meanwhile must both still hold. Do not drop either side to make it pass.`,
  ];
  if (input.unresolved.length > 0) {
    parts.push(
      input.round === 1 ? '## Conflicts' : '## Conflict markers left',
      input.round === 1
        ? 'These files hold conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`). Edit each into its resolved form and remove every marker:'
        : 'Your last round left conflict markers in these files. Remove every marker, keeping both sides\u2019 intent:',
    );
    for (const file of input.unresolved) {
      parts.push(`### ${name(file.path)}`);
      const excerpt = file.text === null ? '' : conflictExcerpt(file.text);
      if (excerpt !== '') parts.push(fenced(excerpt));
    }
  } else if (input.conflicts.length > 0) {
    parts.push(
      '## Conflicts resolved',
      `The conflicts in ${input.conflicts.map(name).join(', ')} are resolved; keep them so.`,
    );
  }
  if (input.gateFailures !== undefined && input.gateFailures.length > 0) {
    parts.push(
      '## The gates failed',
      `On the merged tree these failures are new (they do not fail on ${epicBranch}). Fix them:`,
      ...gateFailureBlocks(input.gateFailures),
    );
  }
  if (input.restored !== undefined && input.restored.length > 0) {
    parts.push(
      '## Put back',
      'Your last round changed these paths outside what you may change; they were put back as the merge left them:',
      bullets(input.restored.map(name)),
    );
  }
  parts.push(
    '## Perimeter',
    'Change only these paths:',
    bullets(input.perimeter.map(name)),
    'Changes anywhere else are put back before landing and reported; changes to `.git`, ' +
      'workflow files or symlinks leaving the repository are never landed.',
  );
  parts.push(
    ...houseRulesSection(input.houseRules),
    '## Rules',
    bullets([
      'epicflow records the merge after your turn: do not commit, and do not run `git merge`, `git checkout` or `git reset`.',
      'After your turn epicflow checks that no conflict markers are left in the conflicting files, ' +
        'that only the paths above changed, and ' +
        (input.gates.length > 0
          ? `that the gates pass: ${input.gates.map(name).join(', ')}.`
          : 'nothing else.'),
      `You have ${input.maxRounds} rounds at most; this is round ${input.round}. Whatever still fails then is left to people.`,
      'Do not delete, skip or focus existing tests.',
    ]),
    `(round ${input.round})`,
  );
  return `${parts.join('\n\n')}\n`;
}
