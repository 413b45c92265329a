/**
 * The coder prompt. Story text comes from an issue or a
 * plan file: it is data, quoted as the task after cleaning, never instructions
 * to epicflow itself.
 */
import type { IssueToolsConfig } from '../config/types.js';
import type { Plan, Revision, Story } from '../model.js';
import { bullets, capBytes, cleanText, oneLine, quote, tail } from './clean.js';
import { relationOf } from './relations.js';
import { reviewSection } from './review-prompt.js';
import { startingCodeSection, type StartingCode } from './starting-code.js';

/** House rules are capped so a long CONTRIBUTING.md cannot crowd out the task. */
export const HOUSE_RULES_MAX_BYTES = 8 * 1024;
/** Failing output quoted back to the coder is cut to its tail. */
const FEEDBACK_TAIL_CHARS = 4000;

export interface GateFailureFeedback {
  readonly command: string;
  /** The failing lines this story added (not those already red on the baseline). */
  readonly lines: readonly string[];
  readonly output: string;
}

/** What later rounds are told about the previous one. */
export interface PromptFeedback {
  readonly takeover?: { readonly from: string; readonly reason: string };
  readonly gateFailures?: readonly GateFailureFeedback[];
  readonly oracle?: readonly string[];
  readonly perimeter?: readonly string[];
  readonly blocked?: { readonly claim: string; readonly answer: string };
  readonly noChanges?: boolean;
  /** The judge did not clear the story: one revision round closes its findings. */
  readonly judge?: { readonly findings: readonly string[] };
  /** The reviewers' lenses found these (`lens: finding`): one round closes them. */
  readonly review?: { readonly findings: readonly string[] };
  /** epicflow stopped the last turn as stalled, and why. */
  readonly stalled?: string;
  /** Setup fails in the story's tree before any work: this turn repairs it. */
  readonly setup?: { readonly command: string; readonly output: string };
}

interface CoderPromptInput {
  readonly epic: string;
  readonly plan: Plan;
  readonly story: Story;
  readonly round: number;
  readonly gates: readonly string[];
  /** CONTRIBUTING.md text, if the repository has one. */
  readonly houseRules?: string | undefined;
  readonly feedback?: PromptFeedback | undefined;
  /** The review round the story runs again for: its comments on the pull request. */
  readonly review?: Revision | undefined;
  /** A note from a retro fix a person approved (text a model wrote: quoted, as data). */
  readonly retroNote?: string | undefined;
  /** "The code you start from" (the first coder turn of a run). */
  readonly startingCode?: StartingCode | undefined;
  /** A task plan's part (core/story/tasks.ts): the plan request, or the task of this turn. */
  readonly tasks?: readonly string[] | undefined;
  /** The findings a judge deferred, which this follow-up round closes (`/resume deferred`). */
  readonly followUp?: readonly string[] | undefined;
  /** Labels and logins the coder may ask for on its sub-issue (`issueTools`); empty: say nothing. */
  readonly issueTools?: IssueToolsConfig | undefined;
}

/** How to ask for labels and assignees on the story's sub-issue, when the repository allows any. */
function issueToolsRule(tools: IssueToolsConfig | undefined): string[] {
  if (tools === undefined || (tools.labels.length === 0 && tools.assignees.length === 0)) return [];
  const lines = [
    ...(tools.labels.length === 0
      ? []
      : [`\`add-label: <name>\` or \`remove-label: <name>\` (labels: ${tools.labels.join(', ')})`]),
    ...(tools.assignees.length === 0
      ? []
      : [`\`assign: <login>\` (logins: ${tools.assignees.join(', ')})`]),
  ];
  return [
    `For your story's issue you may end your reply with lines ${lines.join('; ')}. Anything else is ignored; they are applied once the story is merged.`,
  ];
}

/** The follow-up round over deferred findings: the story is merged; these are left to close. */
function followUpSection(findings: readonly string[]): string[] {
  return [
    '## Deferred findings (a follow-up round)',
    'Your story was merged already: its work is in your working tree. A judge let it merge ' +
      'with these findings, deferred to this round. Close them within your owned paths, ' +
      'without weakening or skipping tests:',
    bullets(findings.map(oneLine)),
  ];
}

const RELATION_NOTE = {
  dependency: 'a dependency, already merged into your working tree: read it, do not change it',
  dependent: 'built after you by another story: leave it alone',
  parallel: 'built at the same time by another coder: leave it alone',
} as const;

function perimeterSection(plan: Plan, story: Story): string {
  const parts = [
    '## Perimeter',
    'Change only these paths (create and edit files only here):',
    bullets(story.owns.map((p) => `\`${p}\``)),
  ];
  if (story.readFirst !== undefined && story.readFirst.length > 0) {
    parts.push(
      'Read these first, before you change anything (the plan points you to them):',
      bullets(story.readFirst.map((p) => `\`${p}\``)),
    );
  }
  if (story.reads.length > 0) {
    parts.push('Read for context, never change:', bullets(story.reads.map((p) => `\`${p}\``)));
  }
  const others = plan.stories.filter((s) => s.id !== story.id);
  if (others.length > 0) {
    parts.push(
      "Other stories' paths:",
      bullets(
        others.map(
          (o) =>
            `${o.owns.map((p) => `\`${p}\``).join(', ')} — story ${o.id} (${RELATION_NOTE[relationOf(plan, story.id, o.id)]})`,
        ),
      ),
    );
  }
  parts.push(
    'Changes outside your owned paths are put back before merging and reported; ' +
      'changes to `.git`, workflow files or symlinks leaving the repository are never merged.',
  );
  return parts.join('\n');
}

/** The repository's CONTRIBUTING.md, cleaned and capped; nothing when there is none. */
export function houseRulesSection(houseRules: string | undefined): string[] {
  if (houseRules === undefined || houseRules.trim().length === 0) return [];
  return [
    '## House rules (CONTRIBUTING.md)',
    capBytes(cleanText(houseRules).trim(), HOUSE_RULES_MAX_BYTES),
  ];
}

/**
 * The gate rule: the coder checks its work narrowly and leaves the full run to epicflow, which
 * runs the gates after every turn anyway (a whole suite per turn costs time and tokens).
 */
const GATE_RULE =
  'Do not run the whole test suite or the gates yourself: epicflow runs them after your turn. ' +
  'To check your work, run at most the one test file that covers what you changed.';

/** Each failing gate: its command, the failing lines it added, and the tail of its output. */
export function gateFailureBlocks(failures: readonly GateFailureFeedback[]): string[] {
  return failures.flatMap((g) => [
    `### \`${g.command}\``,
    bullets(g.lines.slice(0, 40)),
    '```text',
    tail(g.output, FEEDBACK_TAIL_CHARS).replace(/```/g, "'''"),
    '```',
  ]);
}

function feedbackSection(feedback: PromptFeedback): string[] {
  const parts: string[] = [];
  if (feedback.takeover !== undefined) {
    parts.push(
      '## Takeover',
      `You are taking over from ${feedback.takeover.from}, which stopped: ${oneLine(feedback.takeover.reason)}. ` +
        'Inspect `git status` and `git diff` first, then finish the story.',
    );
  }
  if (feedback.gateFailures !== undefined && feedback.gateFailures.length > 0) {
    parts.push(
      '## The gates failed',
      'Fix these failures (they are new with your change):',
      ...gateFailureBlocks(feedback.gateFailures),
    );
  }
  if (feedback.oracle !== undefined && feedback.oracle.length > 0) {
    parts.push(
      '## Tests weakened',
      'Tests must not be deleted, skipped or focused, and no fewer may pass than before:',
      bullets(feedback.oracle),
    );
  }
  if (feedback.perimeter !== undefined && feedback.perimeter.length > 0) {
    parts.push(
      '## Outside your perimeter',
      'Put each of these paths back as it is on the epic branch and move the work into your owned paths:',
      bullets(feedback.perimeter),
    );
  }
  if (feedback.blocked !== undefined) {
    parts.push(
      '## Your BLOCKED_ON claim',
      `You said: BLOCKED_ON: ${oneLine(feedback.blocked.claim)}`,
      feedback.blocked.answer,
    );
  }
  if (feedback.judge !== undefined) {
    parts.push(
      "## The judge's findings",
      'A judge reviewed your branch against the story and did not clear it. Close these gaps ' +
        'within your owned paths, without weakening or skipping tests:',
      bullets(feedback.judge.findings.map(oneLine)),
    );
  }
  if (feedback.review !== undefined) {
    parts.push(
      "## The reviewers' findings",
      'Reviewers read your branch, each through one lens (named before each finding). Close ' +
        'these within your owned paths, without weakening or skipping tests; a finding you ' +
        'believe is wrong, answer in one line in your final message instead:',
      bullets(feedback.review.findings.map(oneLine)),
    );
  }
  if (feedback.setup !== undefined) {
    parts.push(
      '## Setup fails',
      `The setup command \`${oneLine(feedback.setup.command)}\` fails in your working tree, before ` +
        'any work on the story. Make it pass first, changing only your owned paths (if the cause ' +
        'is outside them, end with BLOCKED_ON: <what you need>). Its output ends with:',
      '```text',
      tail(feedback.setup.output, FEEDBACK_TAIL_CHARS).replace(/```/g, "'''"),
      '```',
      'This turn only repairs setup: the story itself comes in the next turn.',
    );
  }
  if (feedback.stalled !== undefined) {
    parts.push(
      '## Your last turn stalled',
      `epicflow stopped it: ${oneLine(feedback.stalled)}. Do not do the same again: ` +
        'read the failures above, change your approach, and make the change the story needs.',
    );
  }
  if (feedback.noChanges === true) {
    parts.push(
      '## No changes yet',
      'Your branch has no changes against the epic branch: implement the story now.',
    );
  }
  return parts;
}

export function buildCoderPrompt(input: CoderPromptInput): string {
  const { story, plan } = input;
  const parts: string[] = [
    `# Story ${story.id}: ${oneLine(story.title)}`,
    `You are implementing ONE story of the epic "${input.epic}", in the current working directory only.`,
    '## The task (as written in the plan)',
    quote(story.description),
  ];
  if (story.acceptance.length > 0) {
    parts.push('## Done when', bullets(story.acceptance.map(oneLine)));
  }
  if (story.provides.length > 0) {
    parts.push(
      '## You must provide (complete, for the stories after you)',
      bullets(story.provides.map(oneLine)),
    );
  }
  const deps = plan.stories.filter((s) => story.dependsOn.includes(s.id) && s.provides.length > 0);
  if (deps.length > 0) {
    parts.push(
      '## What your dependencies provide (already merged; use them as declared)',
      bullets(deps.map((d) => `${d.id}: ${d.provides.map(oneLine).join('; ')}`)),
    );
  }
  parts.push(perimeterSection(plan, story), ...houseRulesSection(input.houseRules));
  parts.push(...startingCodeSection(input.startingCode));
  parts.push(
    '## Rules',
    bullets([
      'epicflow commits your work after each turn; you need not commit.',
      input.gates.length > 0
        ? `After your turn epicflow runs the gates: ${input.gates.map((g) => `\`${g}\``).join(', ')}, one after another, stopping at the first that fails. Failures come back to you.`
        : 'After your turn epicflow checks your changes.',
      GATE_RULE,
      story.testsChange
        ? 'This story may change existing tests where its task needs it.'
        : 'Leave existing tests as they are: do not change, delete, skip or focus them, or mock what they test. Add new tests in new files, or at the end of an existing file.',
      'Only when you need work that another story owns, end your reply with one last line ' +
        '`BLOCKED_ON: <what, which path>`. Tooling, dependencies and missing context are never a reason to stop.',
      ...issueToolsRule(input.issueTools),
    ]),
  );
  if (input.review !== undefined) parts.push(...reviewSection(input.review));
  if (input.tasks !== undefined) parts.push(...input.tasks);
  if (input.followUp !== undefined && input.followUp.length > 0) {
    parts.push(...followUpSection(input.followUp));
  }
  if (input.retroNote !== undefined && input.retroNote.trim() !== '') {
    parts.push(
      '## A note for this attempt',
      'The story failed or was held before. A retro over what happened proposed this note and a ' +
        'person approved it (quoted as written):',
      quote(input.retroNote),
    );
  }
  if (input.feedback !== undefined) parts.push(...feedbackSection(input.feedback));
  parts.push(`(round ${input.round})`);
  return `${parts.join('\n\n')}\n`;
}
