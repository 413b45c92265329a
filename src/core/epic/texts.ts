/**
 * The texts epicflow writes on GitHub besides the two sticky comments: the
 * draft pull request, story sub-issues, failure comments and the plan
 * violations comment. Text that came from people (titles, descriptions,
 * failure output) is sanitised and its mentions made inert, so that nothing
 * hidden is republished and nobody is pinged by epicflow echoing them.
 */
import type { Story } from '../model.js';
import { epicBranchName } from '../model.js';
import type { Violation } from '../plan/index.js';
import { GITHUB_BODY_MAX } from '../report/index.js';
import { capText, code, inlineText } from '../report/escape.js';
import type { MarkerName } from './markers.js';
import {
  failureMarker,
  markerOverhead,
  storyMarker,
  VIOLATIONS_MARKER,
  withMarker,
} from './markers.js';
import { fenceBlock, neutralizeMentions, sanitizeIssueText } from './sanitize.js';

/** Characters of a story description copied into its sub-issue. */
const DESCRIPTION_MAX = 20_000;
/** Characters of a failure reason quoted in a failure comment. */
const REASON_MAX = 4_000;
const LIST_MAX = 50;

interface IssueText {
  readonly title: string;
  readonly body: string;
}

/** One line of people's text for markdown: clean, escaped, mentions inert, capped. */
export function echoInline(text: string, max: number): string {
  return neutralizeMentions(inlineText(capText(sanitizeIssueText(text), max)));
}

/** A block of people's text, fenced so nothing in it renders as markup or mentions. */
export function echoBlock(text: string, max: number): string {
  return fenceBlock(capText(sanitizeIssueText(text).trim(), max), 'text');
}

/** The draft pull request from the epic branch: `Epic #<n>: <title>`. */
export function renderPullRequest(epic: { number: number; title: string }): IssueText {
  const title = `Epic #${epic.number}: ${inlineText(sanitizeIssueText(epic.title))}`;
  const body = [
    `Delivers epic #${epic.number}: every story of its plan is merged into ${code(epicBranchName(String(epic.number)))} here by epicflow.`,
    'This pull request stays a draft until every story is merged; the report below is kept current.',
    '',
    `Closes #${epic.number}`,
  ].join('\n');
  return { title: capText(title, 256), body };
}

/** The sub-issue of one story, carrying its marker so it is found again and never duplicated. */
export function renderSubIssue(epic: number, story: Story, wave: number): IssueText {
  const list = (label: string, items: readonly string[]): string[] => {
    if (items.length === 0) return [];
    const shown = items.slice(0, LIST_MAX).map(code);
    if (items.length > LIST_MAX) shown.push(`… and ${items.length - LIST_MAX} more`);
    return [`**${label}:** ${shown.join(', ')}`];
  };
  const description = sanitizeIssueText(story.description).trim();
  const parts = [
    `Story ${code(story.id)} of epic #${epic} (wave ${wave}). epicflow keeps this issue current and closes it when the story merges into ${code(epicBranchName(String(epic)))}.`,
    description === '' ? '' : neutralizeMentions(capText(description, DESCRIPTION_MAX)),
    [
      ...list('Owns', story.owns),
      ...list('Reads', story.reads),
      ...list('Depends on', story.dependsOn),
    ].join('  \n'),
  ];
  if (story.acceptance.length > 0) {
    parts.push(
      [
        '**Acceptance:**',
        ...story.acceptance.slice(0, LIST_MAX).map((a) => `- ${echoInline(a, 500)}`),
      ].join('\n'),
    );
  }
  parts.push(`_To change this story, edit the plan in #${epic}; edits here are not read._`);
  const body = fitBody(parts.filter((p) => p !== '').join('\n\n'), storyMarker(story.id));
  return {
    title: capText(`${story.id}: ${inlineText(sanitizeIssueText(story.title))}`, 256),
    body: withMarker(body, storyMarker(story.id)),
  };
}

interface FailureCommentInput {
  readonly epic: number;
  readonly story: string;
  readonly attempt: number;
  readonly reason: string;
  /** Stories now waiting for this one, in plan order. */
  readonly waiting: readonly string[];
}

/** The comment on a failed story's sub-issue: why, what waits, and what to comment. */
export function renderFailureComment(input: FailureCommentInput): {
  readonly marker: MarkerName;
  readonly body: string;
} {
  const reason = input.reason.trim() === '' ? 'no reason was recorded' : input.reason;
  const why = /\n/.test(reason.trim())
    ? `:\n\n${echoBlock(reason, REASON_MAX)}`
    : `: ${echoInline(reason, REASON_MAX)}`;
  const lines = [`**Story ${code(input.story)} failed** (attempt ${input.attempt})${why}`];
  if (input.waiting.length > 0) {
    const shown = input.waiting.slice(0, LIST_MAX).map(code).join(', ');
    const more =
      input.waiting.length > LIST_MAX ? ` and ${input.waiting.length - LIST_MAX} more` : '';
    lines.push(`Waiting for it: ${shown}${more}.`);
  }
  lines.push(
    `Next: fix the cause (edit the story in the plan of #${input.epic} if it needs changing), then comment \`/retry ${input.story}\` on #${input.epic} — or \`/skip ${input.story}\` to go on without it.`,
  );
  const marker = failureMarker(input.story, input.attempt);
  return { marker, body: withMarker(lines.join('\n\n'), marker) };
}

/** The comment on the epic issue when its plan is not valid: one line per violation. */
export function renderViolationsComment(violations: readonly Violation[]): {
  readonly marker: MarkerName;
  readonly body: string;
} {
  const head =
    '**The plan of this epic is not valid**, so epicflow starts nothing new until it is fixed. Edit the issue; epicflow checks it again on every edit.';
  const budget = GITHUB_BODY_MAX - markerOverhead(VIOLATIONS_MARKER) - head.length - 200;
  const lines: string[] = [];
  let used = 0;
  for (const v of violations) {
    const where = v.line === undefined ? '' : ` (line ${v.line})`;
    const line = `- ${code(v.code)}${where}: ${echoInline(v.message, 500)}`;
    if (used + line.length + 1 > budget) {
      lines.push(`- … and ${violations.length - lines.length} more`);
      break;
    }
    lines.push(line);
    used += line.length + 1;
  }
  const body = [head, lines.join('\n')].join('\n\n');
  return { marker: VIOLATIONS_MARKER, body: withMarker(body, VIOLATIONS_MARKER) };
}

/** Cuts a body at a line break so that it and its marker fit in one GitHub body. */
function fitBody(body: string, marker: MarkerName): string {
  const max = GITHUB_BODY_MAX - markerOverhead(marker) - CUT_NOTE.length - 2;
  if (body.length <= max) return body;
  const cut = body.slice(0, max);
  const line = cut.lastIndexOf('\n');
  return `${line > 0 ? cut.slice(0, line) : cut}\n\n${CUT_NOTE}`;
}

const CUT_NOTE = "_… cut to fit GitHub's size limit; the full story is in the plan._";
