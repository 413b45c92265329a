/**
 * What epicflow says on an issue when it cannot act: a decision that failed
 * for a reason someone has to fix (a missing project, a missing App
 * permission, a corrupt record), and a command on an issue that is not an
 * epic. Each is one comment, found again by its marker (`ERROR_MARKER`,
 * `NOT_AN_EPIC_MARKER`: markers.ts) and edited in place.
 */
import { helpText } from './commands.js';
import { echoBlock, echoInline } from './texts.js';

/** Characters of the problem quoted: enough for GitHub's answer and our hints. */
const PROBLEM_MAX = 8_000;

interface ErrorCommentInput {
  /** The failure as `describeError` renders it (GitHub's answer, our hints). */
  readonly problem: string;
  /** The GitHub App permission the failed call probably lacked. */
  readonly permission?: string | undefined;
}

/** The comment on the epic issue when a decision failed: what, why, and what to do. */
export function renderErrorComment(input: ErrorCommentInput): string {
  const fix =
    input.permission === undefined
      ? 'Fix the cause above, then comment `/resume` on this issue.'
      : `The App lacks the permission **${input.permission}**: an owner grants it in the App's settings (**Permissions & events**), then approves the change on the installation (**Settings → GitHub Apps → Configure**). Then comment \`/resume\` on this issue.`;
  // The quoted problem is capped, so the body stays far below GitHub's limit.
  return [
    '**epicflow stopped: it could not finish deciding what this epic needs.** What it had already done stays; nothing is done twice when it continues.',
    echoBlock(input.problem, PROBLEM_MAX),
    fix,
  ].join('\n\n');
}

/**
 * The same comment once a later decision succeeded (edited in place, never deleted,
 * so the notification people got still leads somewhere).
 */
export function renderResolvedError(): string {
  return '~~epicflow had stopped on this epic.~~ Resolved: it goes on again.';
}

/**
 * The one answer to an epicflow command on an issue or pull request that is not
 * an epic: commands act on the epic issue (labelled `label`) and its pull request.
 */
export function renderNotAnEpic(input: {
  readonly isPullRequest: boolean;
  readonly label: string;
  /** The epic, when this issue is one of its story sub-issues. */
  readonly storyOf?: number | undefined;
  /** `/help` gets the command list too. */
  readonly help: boolean;
}): string {
  const label = `**${echoInline(input.label, 100)}**`;
  const lines =
    input.storyOf === undefined
      ? [
          `${input.isPullRequest ? 'This pull request is not the pull request of an epic' : `This issue is not an epic (it has no ${label} label)`}, so epicflow does nothing here. Its commands work on an issue labelled ${label} and on that epic's pull request; adding the label to an issue with a plan starts an epic.`,
        ]
      : [
          `This is a story sub-issue of epic #${input.storyOf}: epicflow takes commands on #${input.storyOf} and on its pull request, not here.`,
        ];
  if (input.help) lines.push(helpText());
  return lines.join('\n\n');
}
