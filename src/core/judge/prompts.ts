/**
 * Prompts of the judge and the BLOCKED_ON verifier (docs/executors.md).
 * Story text is data from a plan or an issue: cleaned and quoted, never
 * instructions to epicflow.
 */
import type { Plan, Revision, Story } from '../model.js';
import { judgeReviewSection } from '../prompt/review-prompt.js';
import { bullets, capBytes, cleanText, oneLine, quote } from '../prompt/clean.js';
import { HOUSE_RULES_MAX_BYTES } from '../prompt/coder-prompt.js';
import { pathsPastWindow } from './diff-window.js';

/** The diff shown to the judge is capped so a huge change cannot crowd out the rubric. */
export const JUDGE_DIFF_MAX_BYTES = 48 * 1024;

/** The story as the judge and the verifier see it: task, acceptance, provides, perimeter, dependencies. */
function storySections(plan: Plan, story: Story): string[] {
  const parts = ['## The story (as written in the plan)', quote(story.description)];
  if (story.acceptance.length > 0) {
    parts.push('## Acceptance criteria', bullets(story.acceptance.map(oneLine)));
  }
  if (story.provides.length > 0) {
    parts.push('## It must provide', bullets(story.provides.map(oneLine)));
  }
  parts.push('## Its owned paths', bullets(story.owns.map((p) => `\`${p}\``)));
  const deps = plan.stories.filter((s) => story.dependsOn.includes(s.id));
  if (deps.length > 0) {
    parts.push(
      '## What its dependencies provide (already merged)',
      'Using these is correct and expected; it is neither out of scope nor duplication:',
      bullets(
        deps.map(
          (d) =>
            `${d.id} (${d.owns.map((p) => `\`${p}\``).join(', ')})` +
            (d.provides.length > 0 ? `: ${d.provides.map(oneLine).join('; ')}` : ''),
        ),
      ),
    );
  }
  return parts;
}

const RUBRIC = [
  '`provides`: everything the story promises exists and is complete; every acceptance criterion is met.',
  '`scope`: the change is focused on this story and stays inside its owned paths; nothing unrelated.',
  '`style`: it follows the house rules and the style of the surrounding code.',
  '`tests`: the behaviour is covered by tests that would catch a regression; no test was weakened.',
];

interface JudgePromptInput {
  readonly epic: string;
  readonly plan: Plan;
  readonly story: Story;
  /** `git diff <epic>...<story>`; '' when the branch has no changes. */
  readonly diff: string;
  readonly houseRules?: string | undefined;
  /** Set on the one repair re-ask: why the previous answer could not be read. */
  readonly repairError?: string | undefined;
  /** The review round the story runs again for. */
  readonly review?: Revision | undefined;
  /** What epicflow found checking the coder's claims against what it ran: read first. */
  readonly evidence?: readonly string[] | undefined;
  /** `judge.deferNonBlocking`: each finding carries a severity, and only critical ones block. */
  readonly deferNonBlocking?: boolean | undefined;
  /** The findings deferred earlier that this follow-up round addresses (`/resume deferred`). */
  readonly followUp?: readonly string[] | undefined;
  /** Review findings (`lens: finding`) the review rounds left open. */
  readonly openReview?: readonly string[] | undefined;
}

/** What the reviewers' lenses found and no review round closed: the judge weighs it. */
function openReviewSection(findings: readonly string[] | undefined): string[] {
  if (findings === undefined || findings.length === 0) return [];
  return [
    "## Reviewers' findings left open",
    'Reviewers read this change through their lenses; the coder got their findings but the ' +
      'review rounds ran out with these still open. Check each: a real gap is a finding of ' +
      'yours, one that is wrong or does not matter for this story is not:',
    bullets(findings.map(oneLine)),
  ];
}

/** The follow-up round of deferred findings, as the judge sees it. */
function followUpSection(findings: readonly string[]): string[] {
  return [
    '## A follow-up round of deferred findings',
    'The story was merged already (its earlier work is on the epic branch, outside the diff ' +
      'below). A judge then deferred these findings; this change addresses them. Judge whether ' +
      'it does, and that the story as a whole still holds:',
    bullets(findings.map(oneLine)),
  ];
}

const SEVERITY_RULES = [
  '`critical`: the story must not merge without it (an unmet acceptance criterion or promise, a bug, a missing or weakened test, a change out of scope).',
  '`major`: it should be fixed, but the story works and can merge.',
  '`minor`: polish (naming, comments, small style points).',
];

/** epicflow's own findings about the coder's claims, before anything the coder wrote. */
function evidenceSection(evidence: readonly string[]): string[] {
  if (evidence.length === 0) return [];
  return [
    '## Evidence notes (checked by epicflow, not written by the coder)',
    "The coder's claims were compared with the commands its turn ran. Weigh what it says it " +
      'verified accordingly, and run the checks yourself:',
    bullets(evidence.map(oneLine)),
  ];
}

/**
 * Every changed file the capped diff leaves out or cuts short, so that a large change sorted
 * first cannot hide the rest from the judge. Paths are the branch's own: shown as quoted data.
 */
function pastWindowSection(diff: string): string[] {
  const { partly, omitted } = pathsPastWindow(diff, JUDGE_DIFF_MAX_BYTES);
  if (partly.length + omitted.length === 0) return [];
  return [
    '## Changed files the diff above leaves out',
    `The diff was cut at ${JUDGE_DIFF_MAX_BYTES} bytes. These files changed too; read their ` +
      'changes in the working directory (`git diff` against the epic branch) before you judge:',
    bullets([
      ...partly.map((p) => `${JSON.stringify(p)} (cut short)`),
      ...omitted.map((p) => `${JSON.stringify(p)} (not shown)`),
    ]),
  ];
}

export function buildJudgePrompt(input: JudgePromptInput): string {
  const { story } = input;
  const empty = input.diff.trim() === '';
  const parts = [
    `# Judge story ${story.id}: ${oneLine(story.title)}`,
    `You judge ONE story of the epic "${input.epic}". The working directory holds its branch. ` +
      'Read and run what you need, but change no file: your verdict is your only output.',
    ...evidenceSection(input.evidence ?? []),
    ...storySections(input.plan, story),
    ...(input.review === undefined ? [] : judgeReviewSection(input.review)),
    ...(input.followUp === undefined || input.followUp.length === 0
      ? []
      : followUpSection(input.followUp)),
    ...openReviewSection(input.openReview),
  ];
  if (input.houseRules !== undefined && input.houseRules.trim().length > 0) {
    parts.push(
      '## House rules (CONTRIBUTING.md)',
      capBytes(cleanText(input.houseRules).trim(), HOUSE_RULES_MAX_BYTES),
    );
  }
  if (empty) {
    parts.push(
      '## The change',
      'The story branch has no changes against the epic branch. Decide whether the story is ' +
        'already in place: inspect its owned paths in the working directory. Clear it only when ' +
        'everything the story asks for already exists and works.',
    );
  } else {
    parts.push(
      '## The change (diff against the epic branch)',
      '```diff',
      capBytes(input.diff, JUDGE_DIFF_MAX_BYTES).replace(/```/g, "'''"),
      '```',
      ...pastWindowSection(input.diff),
    );
  }
  parts.push(
    '## Rubric',
    'Score each dimension 0 (missing or wrong), 1 (partly) or 2 (fully):',
    bullets(RUBRIC),
    'Clear the story only when every dimension scores 2. Otherwise list findings: each one ' +
      'concrete gap the coder must close, naming the file and what is missing.',
  );
  if (input.deferNonBlocking === true) {
    parts.push(
      '## Severity',
      'Give each finding a severity. Only critical findings hold the story back; the others ' +
        'are deferred to a later round and the story merges without them:',
      bullets(SEVERITY_RULES),
      '## Answer',
      'End your reply with exactly one JSON object in a ```json fenced block, each finding an ' +
        'object with its severity:',
      '```json\n{"scores": {"provides": 2, "scope": 2, "style": 1, "tests": 2}, "cleared": false, "findings": [{"severity": "minor", "text": "src/a.ts: name the helper after what it returns"}]}\n```',
    );
  } else {
    parts.push(
      '## Answer',
      'End your reply with exactly one JSON object in a ```json fenced block:',
      '```json\n{"scores": {"provides": 2, "scope": 2, "style": 2, "tests": 2}, "cleared": true, "findings": []}\n```',
    );
  }
  if (input.repairError !== undefined) {
    parts.push(
      '## Your previous answer could not be read',
      `${oneLine(input.repairError)}. Answer again with the JSON object exactly as described.`,
    );
  }
  return `${parts.join('\n\n')}\n`;
}

interface VerifierPromptInput {
  readonly epic: string;
  readonly plan: Plan;
  readonly story: Story;
  /** The coder's `BLOCKED_ON:` claim. */
  readonly claim: string;
  /** What the plan says about the paths in the claim. */
  readonly planAnswer: string;
  readonly repairError?: string | undefined;
}

export function buildVerifierPrompt(input: VerifierPromptInput): string {
  const { story } = input;
  const others = input.plan.stories.filter((s) => s.id !== story.id);
  const parts = [
    `# Verify a BLOCKED_ON claim of story ${story.id}: ${oneLine(story.title)}`,
    `The coder of ONE story of the epic "${input.epic}" stopped, saying it needs work another story owns. ` +
      'Decide whether the claim is real. The working directory holds its branch; change no file.',
    '## The claim',
    quote(`BLOCKED_ON: ${input.claim}`),
    '## What the plan says about it',
    input.planAnswer,
    ...storySections(input.plan, story),
  ];
  if (others.length > 0) {
    parts.push(
      '## The other stories and their owned paths',
      bullets(
        others.map(
          (o) => `${o.id}: ${oneLine(o.title)} (${o.owns.map((p) => `\`${p}\``).join(', ')})`,
        ),
      ),
    );
  }
  parts.push(
    '## Answer',
    'The claim is real only when the story cannot be completed inside its owned paths because ' +
      'it needs work that another story owns and that is not in the working directory. Tooling, ' +
      'dependencies, missing context and work the story could do itself are never real claims.',
    'End your reply with exactly one JSON object in a ```json fenced block:',
    '```json\n{"real": false, "reason": "one sentence"}\n```',
  );
  if (input.repairError !== undefined) {
    parts.push(
      '## Your previous answer could not be read',
      `${oneLine(input.repairError)}. Answer again with the JSON object exactly as described.`,
    );
  }
  return `${parts.join('\n\n')}\n`;
}
