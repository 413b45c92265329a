/**
 * A retro's proposal as it is kept (`retro.json` beside the story records) and as
 * people read and approve it (markdown with one checkbox per fix: a file locally, a
 * comment on the epic issue on GitHub). What a fix does is always read from the kept
 * proposal, never from the markdown: the markdown only says which fixes are ticked.
 * Every text a model wrote is shown in a fenced block longer than any backtick run in
 * it, indented under its item, so nothing in it can become a checkbox, a link or HTML.
 */
import { stringify } from 'yaml';
import { z } from 'zod';
import { inlineText } from '../report/escape.js';
import { sanitizeIssueText } from '../epic/sanitize.js';
import type { Plan } from '../model.js';
import { retroFixSchema, type RetroFix, type RetroSubject } from './answer.js';

/** What happened to an approved fix: applied, or not (and why); either way never tried again. */
export type FixOutcome =
  | { readonly applied: true; readonly at: string }
  | { readonly applied: false; readonly at: string; readonly reason: string };

export interface RetroSubjectFacts {
  readonly story: string;
  readonly state: 'failed' | 'held';
  readonly reason?: string | undefined;
  /** The story's plan hash when the retro read it: a plan edit applies only to that entry. */
  readonly planHash: string;
}

export interface RetroProposal {
  readonly version: 1;
  readonly epic: string;
  /** When the model answered (ISO). */
  readonly at: string;
  /** The executor that answered. */
  readonly executor: string;
  readonly subjects: readonly RetroSubjectFacts[];
  readonly fixes: readonly RetroFix[];
  readonly leftOut: readonly string[];
  /** What epicflow did about the call itself: changes it made in its checkout discarded, say. */
  readonly notes: readonly string[];
  /** Story id → what applying its approved fix did. */
  readonly outcomes: Readonly<Record<string, FixOutcome>>;
}

/** A retro's new proposal: its subjects as the retro read them, the model's answer, nothing applied yet. */
export function newRetroProposal(input: {
  readonly epic: string;
  readonly at: string;
  readonly executor: string;
  readonly plan: Plan;
  readonly subjects: readonly RetroSubject[];
  readonly answer: Pick<RetroProposal, 'fixes' | 'leftOut' | 'notes'>;
}): RetroProposal {
  return {
    version: 1,
    epic: input.epic,
    at: input.at,
    executor: input.executor,
    subjects: input.subjects.map((s) => ({
      story: s.story.id,
      state: s.state,
      ...(s.record.reason === undefined ? {} : { reason: s.record.reason }),
      planHash: input.plan.hashes[s.story.id] ?? '',
    })),
    fixes: input.answer.fixes,
    leftOut: input.answer.leftOut,
    notes: input.answer.notes,
    outcomes: {},
  };
}

export const retroProposalSchema = z.object({
  version: z.literal(1),
  epic: z.string(),
  at: z.string(),
  executor: z.string(),
  subjects: z.array(
    z.object({
      story: z.string(),
      state: z.enum(['failed', 'held']),
      reason: z.string().optional(),
      planHash: z.string(),
    }),
  ),
  fixes: z.array(retroFixSchema),
  leftOut: z.array(z.string()),
  notes: z.array(z.string()),
  outcomes: z.record(
    z.string(),
    z.union([
      z.object({ applied: z.literal(true), at: z.string() }),
      z.object({ applied: z.literal(false), at: z.string(), reason: z.string() }),
    ]),
  ),
});

/** The fixes a person can approve (a `nothing` answer has no checkbox). */
export function approvable(proposal: RetroProposal): RetroFix[] {
  return proposal.fixes.filter((f) => f.kind !== 'nothing');
}

const KIND_TEXT: Readonly<Record<RetroFix['kind'], string>> = {
  'plan-edit': 'edit its plan entry',
  acceptance: 'add an acceptance line',
  retry: 'retry with a note for its coder',
  nothing: 'no fix',
};

/** Text a model wrote, as a fenced block under a list item: nothing in it is markdown. */
function fencedText(text: string, info = 'text'): string[] {
  const clean = sanitizeIssueText(text).replace(/\s+$/, '');
  const longest = Math.max(0, ...[...clean.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [`${fence}${info}`, ...clean.split('\n'), fence].map((l) => (l === '' ? '' : `  ${l}`));
}

function fixBody(fix: RetroFix): string[] {
  switch (fix.kind) {
    case 'plan-edit':
      return ['  The story entry gets:', ...fencedText(stringify(fix.edit).trimEnd(), 'yaml')];
    case 'acceptance':
      return ['  Acceptance line:', ...fencedText(fix.line)];
    case 'retry':
      return ['  Note for its coder:', ...fencedText(fix.note)];
    case 'nothing':
      return [];
  }
}

function outcomeText(outcome: FixOutcome | undefined): string {
  if (outcome === undefined) return '';
  if (outcome.applied) return ' · **applied**';
  return ` · **not applied**: ${inlineText(outcome.reason)}`;
}

interface RenderRetroOptions {
  /** Story ids whose box is ticked (as read from the document people edit). */
  readonly ticked: ReadonlySet<string>;
  /** How approved fixes get applied here, e.g. "the next `epicflow run`". */
  readonly applyWith: string;
}

/** The proposal as markdown: one checkbox per fix, its outcome once applied. */
export function renderRetro(proposal: RetroProposal, options: RenderRetroOptions): string {
  const failed = proposal.subjects.filter((s) => s.state === 'failed').length;
  const held = proposal.subjects.length - failed;
  const fixes = approvable(proposal);
  const state = new Map(proposal.subjects.map((s) => [s.story, s]));
  const lines = [
    `# Retro of epic \`${proposal.epic.replace(/`/g, '')}\``,
    '',
    `\`${proposal.executor.replace(/`/g, '')}\` read the evidence of ${proposal.subjects.length} ` +
      `${proposal.subjects.length === 1 ? 'story' : 'stories'} (${failed} failed, ${held} held) ` +
      `and proposes ${fixes.length} ` +
      `${fixes.length === 1 ? 'fix' : 'fixes'}. Tick the fixes you approve (\`[x]\`): ` +
      `${options.applyWith} applies the ticked ones and marks them applied here. ` +
      'An unticked fix is never applied.',
    '',
  ];
  if (fixes.length > 0) lines.push('## Fixes', '');
  for (const fix of fixes) {
    const outcome = proposal.outcomes[fix.story];
    const tick = outcome !== undefined || options.ticked.has(fix.story) ? 'x' : ' ';
    const s = state.get(fix.story);
    const where =
      s === undefined
        ? ''
        : ` (${s.state}${s.reason === undefined ? '' : `: ${inlineText(s.reason).slice(0, 200)}`})`;
    lines.push(
      `- [${tick}] **${fix.story}** — ${KIND_TEXT[fix.kind]}${where}${outcomeText(outcome)}`,
      ...fixBody(fix),
      '  Why:',
      ...fencedText(fix.why),
    );
  }
  const nothing = proposal.fixes.filter((f) => f.kind === 'nothing');
  if (nothing.length > 0) {
    lines.push('', '## No fix proposed', '');
    for (const fix of nothing) lines.push(`- **${fix.story}**`, ...fencedText(fix.why));
  }
  const silent = proposal.subjects.filter((s) => !proposal.fixes.some((f) => f.story === s.story));
  if (silent.length > 0) {
    lines.push('', `Not answered: ${silent.map((s) => `**${s.story}**`).join(', ')}.`);
  }
  if (proposal.leftOut.length > 0) {
    lines.push('', '## Left out', '', ...proposal.leftOut.map((l) => `- ${inlineText(l)}`));
  }
  if (proposal.notes.length > 0) {
    lines.push('', '## Notes', '', ...proposal.notes.map((l) => `- ${inlineText(l)}`));
  }
  return `${lines.join('\n')}\n`;
}

/** A fix's checkbox line: at the start of a line, the story id in bold right after the box. */
const CHECKBOX = /^- \[([ xX])\] \*\*([a-z0-9][a-z0-9-]*)\*\*/;

/**
 * The stories whose fix box is ticked in a retro document people edited. Only a
 * top-level checkbox line of a fix the proposal holds counts (model text is indented
 * in fenced blocks, so it never does); the first line per story wins.
 */
export function tickedFixes(markdown: string, proposal: RetroProposal): Set<string> {
  const known = new Set(approvable(proposal).map((f) => f.story));
  const seen = new Set<string>();
  const ticked = new Set<string>();
  for (const line of markdown.split(/\r\n|\r|\n/)) {
    const m = CHECKBOX.exec(line);
    const story = m?.[2];
    if (m === null || story === undefined || !known.has(story) || seen.has(story)) continue;
    seen.add(story);
    if (m[1] !== ' ') ticked.add(story);
  }
  return ticked;
}
