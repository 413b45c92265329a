/**
 * Planning on GitHub (docs/planning.md): an epic issue labelled without a plan
 * is planned by a job of the story workflow, dispatched with a reserved story id
 * no plan can hold; a writer's `/plan [guidance]` plans it again. The planning
 * record (`epics/<n>/planning.json` on the state branch) says which planning
 * attempt runs or ran, for whom, with what guidance, how it ended and what every
 * attempt cost; it is written with a compare-and-swap before each dispatch, so an
 * attempt is dispatched once, and by the job at its end. This module is the pure
 * part: the record's shape, what a decision does about planning, and its texts.
 */
import YAML from 'yaml';
import { z } from 'zod';
import { EpicflowError } from '../errors.js';
import { OUTGROWN, type Outgrown, type Plan, type Story, type UsageEntry } from '../model.js';
import type { SplitRequest, SplitSeen } from '../planner/split.js';
import { planYaml, renderPlanBlock } from '../planner/render.js';
import { UsageEntrySchema } from '../record-schema.js';
import type { ReportPlanning } from '../report/index.js';
import { code } from '../report/escape.js';
import { fenceBlock } from './sanitize.js';
import { echoInline } from './texts.js';

export { PLANNING_RUN_STORY } from './job-ref.js';

/** The planning record's name on the state branch (`epics/<n>/planning.json`). */
export const PLANNING_DOC = 'planning';

/** Longest guidance kept from a `/plan` or `/refine` comment (the planner's prompt caps it again). */
export const GUIDANCE_MAX_CHARS = 4_000;

const PLANNING_STATUSES = ['active', 'proposed', 'invalid', 'failed'] as const;
export type PlanningStatus = (typeof PLANNING_STATUSES)[number];

export interface PlanningDoc {
  readonly version: 1;
  /** The planning attempt (1 first); a job runs only the attempt the record names. */
  readonly attempt: number;
  /** `active` while its job runs; then `proposed` (a plan was written), `invalid` or `failed`. */
  readonly status: PlanningStatus;
  /** Who asked: the labeller or the writer who commented `/plan`. */
  readonly requestedBy: string;
  readonly requestedAt: string;
  /** A writer's `/plan <guidance>` or `/refine <feedback>`, untrusted text handed to the planner as data. */
  readonly guidance?: string | undefined;
  /**
   * Set when this attempt is a `/refine`: its refine round n (1, 2, …); the new
   * stories it adds get ids `r<n>-<id>`.
   */
  readonly refine?: number | undefined;
  /** Refine rounds started so far, over every attempt (the next one is this + 1). */
  readonly refines?: number | undefined;
  /**
   * Set when this attempt splits a story that proved too big (docs/planning.md): the
   * planner's 2–4 stories replace it in the plan, proposed for `/approve`.
   */
  readonly split?: SplitRequest | undefined;
  /** Every failed attempt of a story a split was started for, over every attempt (never twice). */
  readonly splits?: readonly SplitSeen[] | undefined;
  readonly finishedAt?: string | undefined;
  /** `planDigest` of the plan written into the issue (when proposed). */
  readonly planDigest?: string | undefined;
  /** Why planning ended without a plan: one line per problem (`code: message`). */
  readonly problems?: readonly string[] | undefined;
  /** Changes of the planner discarded and git configuration restored. */
  readonly notes?: readonly string[] | undefined;
  /** Planner rounds answered over every attempt. */
  readonly rounds: number;
  /** Planner executors that ran a turn, over every attempt, in order of first use. */
  readonly executors: readonly string[];
  /** Usage of every planner turn of every attempt. */
  readonly usage: readonly UsageEntry[];
}

const PlanningDocSchema = z.object({
  version: z.literal(1),
  attempt: z.number().int().positive(),
  status: z.enum(PLANNING_STATUSES),
  requestedBy: z.string(),
  requestedAt: z.string(),
  guidance: z.string().optional(),
  refine: z.number().int().positive().optional(),
  refines: z.number().int().nonnegative().optional(),
  split: z
    .object({
      story: z.string(),
      outgrown: z.enum(OUTGROWN as [Outgrown, ...Outgrown[]]),
      attempt: z.number().int().positive(),
      reason: z.string(),
    })
    .optional(),
  splits: z.array(z.object({ story: z.string(), attempt: z.number().int().positive() })).optional(),
  finishedAt: z.string().optional(),
  planDigest: z.string().optional(),
  problems: z.array(z.string()).optional(),
  notes: z.array(z.string()).optional(),
  rounds: z.number().int().nonnegative(),
  executors: z.array(z.string()),
  usage: z.array(UsageEntrySchema),
});

/** The record's JSON checked; a record edited into something else is named with its path. */
export function parsePlanningDoc(
  value: unknown,
  path: string,
): { ok: true; doc: PlanningDoc } | { ok: false; error: string } {
  const parsed = PlanningDocSchema.safeParse(value);
  if (parsed.success) return { ok: true, doc: parsed.data };
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  return {
    ok: false,
    error: `${path} on the state branch is not a version-1 planning record (${issues.slice(0, 3).join('; ')}); fix or delete the file, then comment /plan`,
  };
}

/** Whether the configuration has an executor that may plan. */
export function hasPlanner(executors: readonly { readonly roles: readonly string[] }[]): boolean {
  return executors.some((e) => e.roles.includes('planner'));
}

/** The guidance of a `/plan` comment: the text after the command, lines included, capped. */
export function guidanceOf(text: string | undefined): string | undefined {
  const trimmed = (text ?? '').trim();
  if (trimmed === '') return undefined;
  return trimmed.length > GUIDANCE_MAX_CHARS ? trimmed.slice(0, GUIDANCE_MAX_CHARS) : trimmed;
}

/** The record of a new attempt: the costs of earlier ones are kept. */
export function startedPlanning(input: {
  readonly previous: PlanningDoc | undefined;
  readonly by: string;
  readonly guidance: string | undefined;
  readonly now: string;
  /** A `/refine` attempt: it takes the next refine round. */
  readonly refine?: boolean | undefined;
  /** A split of a story that proved too big. */
  readonly split?: SplitRequest | undefined;
}): PlanningDoc {
  const prev = input.previous;
  const refines = (prev?.refines ?? 0) + (input.refine === true ? 1 : 0);
  const seen = prev?.splits ?? [];
  const splits =
    input.split === undefined
      ? seen
      : [...seen, { story: input.split.story, attempt: input.split.attempt }];
  return {
    version: 1,
    attempt: (prev?.attempt ?? 0) + 1,
    status: 'active',
    requestedBy: input.by,
    requestedAt: input.now,
    ...(input.guidance === undefined ? {} : { guidance: input.guidance }),
    ...(input.refine === true ? { refine: refines } : {}),
    ...(refines > 0 ? { refines } : {}),
    ...(input.split === undefined ? {} : { split: input.split }),
    ...(splits.length > 0 ? { splits: [...splits] } : {}),
    rounds: prev?.rounds ?? 0,
    executors: [...(prev?.executors ?? [])],
    usage: [...(prev?.usage ?? [])],
  };
}

/** What a decision does about planning. */
type PlanningStep =
  /** Nothing: the epic has a plan (or planning is not ours to start), decide as always. */
  | { readonly kind: 'none' }
  /** Write `doc` (compare-and-swap on the record read), then dispatch its attempt. */
  | { readonly kind: 'start'; readonly doc: PlanningDoc }
  /** Planning runs: say so in the status comment, start nothing. */
  | { readonly kind: 'wait'; readonly doc: PlanningDoc }
  /** Planning ended without a plan; its comment says why: nothing more to do. */
  | { readonly kind: 'ended'; readonly doc: PlanningDoc }
  /** Answer the command (a `/plan` that cannot run), start nothing. */
  | { readonly kind: 'reply'; readonly body: string };

export interface PlanningFacts {
  /** The trigger, as far as planning cares. */
  readonly trigger:
    | { readonly kind: 'label'; readonly by: string }
    | { readonly kind: 'plan'; readonly by: string; readonly guidance: string | undefined }
    | { readonly kind: 'refine'; readonly by: string; readonly feedback: string | undefined }
    | { readonly kind: 'other' };
  /**
   * The epic's plan as loaded: `missing` when there is none at all (no block in the
   * body, no sub-issue plan), `drafted` when it is the planner's section (re-planning
   * keeps its ids), `written` when people wrote it outside the section.
   */
  readonly plan: 'missing' | 'drafted' | 'written' | 'invalid';
  readonly plannerConfigured: boolean;
  readonly doc: PlanningDoc | undefined;
  readonly now: string;
  /**
   * The first story whose split to propose (`splitCandidates` over the records, the
   * record's `splits` seen), if any: a split starts when no planning runs and the plan
   * is the planner's section.
   */
  readonly split?: SplitRequest | undefined;
}

/** The option that turns planning on. */
const PLANNER_OPTION =
  'give an executor the planner role in .github/epicflow.yml (executors[].roles: [coder, planner])';

/** Names the option that turns planning on, for the no-plan-block comment. */
export const PLANNER_OPTION_HINT = `${PLANNER_OPTION} and label the issue again: epicflow then drafts the plan from its text (docs/planning.md)`;

export function decidePlanning(f: PlanningFacts): PlanningStep {
  const running = f.doc?.status === 'active';
  if (f.trigger.kind === 'refine') return decideRefine(f, f.trigger);
  if (f.trigger.kind === 'plan') {
    if (!f.plannerConfigured) {
      return {
        kind: 'reply',
        body: `\`/plan\` needs a planner: ${PLANNER_OPTION}, then comment \`/plan\` again (docs/planning.md).`,
      };
    }
    if (running && f.doc !== undefined) {
      return {
        kind: 'reply',
        body: `A planning job is already running for this epic (attempt ${f.doc.attempt}); its plan is written into the issue when it ends. Comment \`/plan\` again after that to re-plan.`,
      };
    }
    if (f.plan === 'written') {
      return {
        kind: 'reply',
        body: '`/plan` re-plans a plan epicflow drafted; this plan was written by hand, outside the plan section. Edit it instead, or remove its ```epicflow block and comment `/plan` to have one drafted.',
      };
    }
    return {
      kind: 'start',
      doc: startedPlanning({
        previous: f.doc,
        by: f.trigger.by,
        guidance: f.trigger.guidance,
        now: f.now,
      }),
    };
  }
  if (
    f.split !== undefined &&
    f.plan === 'drafted' &&
    f.plannerConfigured &&
    !running &&
    f.trigger.kind !== 'label'
  ) {
    // A story that proved too big: its split is drafted and proposed, never applied unasked.
    return {
      kind: 'start',
      doc: startedPlanning({
        previous: f.doc,
        by: 'epicflow',
        guidance: undefined,
        now: f.now,
        split: f.split,
      }),
    };
  }
  if (f.plan !== 'missing' || !f.plannerConfigured) return { kind: 'none' };
  if (running && f.doc !== undefined) return { kind: 'wait', doc: f.doc };
  // Labelling an issue without a plan asks for one; a plan that exists is never
  // regenerated without `/plan` (the plan is missing here).
  if (f.trigger.kind === 'label') {
    return {
      kind: 'start',
      doc: startedPlanning({ previous: f.doc, by: f.trigger.by, guidance: undefined, now: f.now }),
    };
  }
  if (f.doc !== undefined && (f.doc.status === 'invalid' || f.doc.status === 'failed')) {
    return { kind: 'ended', doc: f.doc };
  }
  return { kind: 'none' };
}

/**
 * A writer's `/refine <feedback>`: the planner adds stories to the plan as it stands.
 * It needs a planner, feedback, no planning job running and a plan in the plan
 * section (the combined plan is written there; a plan people wrote outside it is
 * theirs to edit).
 */
function decideRefine(
  f: PlanningFacts,
  t: { readonly by: string; readonly feedback: string | undefined },
): PlanningStep {
  const reply = (body: string): PlanningStep => ({ kind: 'reply', body });
  if (!f.plannerConfigured) {
    return reply(
      `\`/refine\` needs a planner: ${PLANNER_OPTION}, then comment \`/refine <feedback>\` again (docs/planning.md).`,
    );
  }
  if (t.feedback === undefined) {
    return reply(
      '`/refine` needs feedback: say what to add after the command, e.g. `/refine add a receipt page after the payment`. The planner adds stories for it; the current ones stay as they are.',
    );
  }
  if (f.doc?.status === 'active') {
    return reply(
      `A planning job is already running for this epic (attempt ${f.doc.attempt}); its plan is written into the issue when it ends. Comment \`/refine\` again after that.`,
    );
  }
  if (f.plan === 'missing') {
    return reply(
      '`/refine` adds stories to a plan, and this epic has none yet: comment `/plan` (or label the issue `epic` again) to have one drafted.',
    );
  }
  if (f.plan === 'invalid') {
    return reply(
      '`/refine` adds stories to a valid plan, and the plan in this issue is not valid (the violations comment says why): fix it first, or comment `/plan`.',
    );
  }
  if (f.plan === 'written') {
    return reply(
      "`/refine` adds stories to the plan section epicflow's planner writes; this plan was written by hand, outside it. Add the stories to it yourself (an edit of the plan approves it).",
    );
  }
  return {
    kind: 'start',
    doc: startedPlanning({
      previous: f.doc,
      by: t.by,
      guidance: t.feedback,
      now: f.now,
      refine: true,
    }),
  };
}

/** The status comment while a planning job runs (epicflow's own markdown, the title echoed inert). */
export function renderPlanningStatus(input: {
  readonly epic: { readonly number: number; readonly title: string };
  readonly doc: PlanningDoc;
}): string {
  const { doc } = input;
  const guidance = doc.guidance === undefined ? '' : ', with the guidance of the `/plan` comment';
  return [
    `## epicflow · epic #${input.epic.number}: ${echoInline(input.epic.title, 200)}`,
    `**Planning:** epicflow's planner is drafting a plan from this issue's text (attempt ${doc.attempt}${guidance}). It is written into the issue below your text, and nothing starts until a user with write permission checks it and comments \`/approve\`.`,
  ].join('\n\n');
}

/** One line for the status comment while the planner's plan waits for a writer. */
export const PLAN_PROPOSED_TEXT = 'plan proposed — edit it or comment `/approve`';

/** The planning's costs for the report's Planning row; undefined when nothing was planned. */
export function planningReport(doc: PlanningDoc | undefined): ReportPlanning | undefined {
  if (doc === undefined || (doc.rounds === 0 && doc.usage.length === 0)) return undefined;
  return { usage: doc.usage, executors: doc.executors, rounds: doc.rounds };
}

/** The comment of a planning that ended without a plan (the error comment's body). */
export function renderPlanningFailed(input: {
  readonly attempt: number;
  readonly reason: string;
  /** The refine round, when the attempt was a `/refine`: the plan as it stands is kept. */
  readonly refine?: number | undefined;
}): string {
  const refining = input.refine !== undefined;
  return [
    refining
      ? `**epicflow could not add stories to this epic's plan** (refine round ${input.refine}, planning attempt ${input.attempt}): nothing was written, and the plan stays as it was.`
      : `**epicflow could not draft a plan for this epic** (planning attempt ${input.attempt}): nothing was written and nothing starts.`,
    '',
    `- ${echoInline(input.reason, 1_000)}`,
    '',
    refining
      ? `Fix the cause, then comment \`/refine <feedback>\` to try again (or add the stories to the plan yourself: docs/plan-format.md).`
      : `Fix the cause, then comment ${code('/plan')} to try again (or write the plan into the issue yourself: docs/plan-format.md).`,
  ].join('\n');
}

/** Problems listed in the comment of a refused plan before the rest are counted. */
const PROBLEMS_SHOWN = 30;

/** The violations comment of a plan the validator still refused after the repair rounds. */
export function renderPlanningInvalid(input: {
  readonly attempt: number;
  readonly rounds: number;
  readonly problems: readonly string[];
  /** The refine round, when the attempt was a `/refine`: the plan as it stands is kept. */
  readonly refine?: number | undefined;
}): string {
  const shown = input.problems.slice(0, PROBLEMS_SHOWN).map((p) => {
    const m = /^([a-z-]+): ([\s\S]*)$/.exec(p);
    return m === null
      ? `- ${echoInline(p, 500)}`
      : `- ${code(m[1] ?? '')}: ${echoInline(m[2] ?? '', 500)}`;
  });
  const more = input.problems.length - shown.length;
  if (input.refine !== undefined) {
    return [
      `**epicflow's planner could not add valid stories to this epic's plan** (refine round ${input.refine}, planning attempt ${input.attempt}, ${input.rounds} ${input.rounds === 1 ? 'round' : 'rounds'}): nothing was written into the issue, and the plan stays as it was. The validator still refused the combined plan:`,
      '',
      ...shown,
      ...(more > 0 ? [`- … and ${more} more`] : []),
      '',
      `Reword the feedback (feedback that asks for something the rules forbid is refused each time) and comment \`/refine <feedback>\` again, or add the stories to the plan yourself (docs/plan-format.md).`,
    ].join('\n');
  }
  return [
    `**epicflow's planner could not draft a valid plan for this epic** (planning attempt ${input.attempt}, ${input.rounds} ${input.rounds === 1 ? 'round' : 'rounds'}): the epic is held, nothing was written into the issue and nothing starts. The validator still refused:`,
    '',
    ...shown,
    ...(more > 0 ? [`- … and ${more} more`] : []),
    '',
    `Reword the issue (text in it that asks for something the rules forbid is refused each time) and comment ${code('/plan')} to try again, or write the plan yourself (docs/plan-format.md).`,
  ].join('\n');
}

/** The status comment once a planning attempt ended without a plan. */
export function renderPlanningEnded(input: {
  readonly epic: { readonly number: number; readonly title: string };
  readonly doc: PlanningDoc;
}): string {
  const { doc } = input;
  const why =
    doc.status === 'invalid'
      ? "the planner's plan was still refused after the repair rounds: the epic is held (the comment below lists the violations)"
      : 'planning failed (the comment below says why)';
  return [
    `## epicflow · epic #${input.epic.number}: ${echoInline(input.epic.title, 200)}`,
    `**Planning ended without a plan** (attempt ${doc.attempt}): ${why}. Nothing starts. A user with write permission comments \`/plan\` to try again, or writes the plan into the issue.`,
  ].join('\n\n');
}

/** Shown in the plan section instead of the block when the stories are sub-issues. */
const SUB_ISSUE_PLAN_NOTE =
  "_The stories are this epic's sub-issues: each holds its story's `epicflow` block, and their “blocked by” links are the dependencies._";

/**
 * A story as its sub-issue's body (`planner.subIssues: true`): its description, then
 * its one-story block with its id; its dependencies are the sub-issue's "blocked by"
 * links, not in the block.
 */
export function storyIssueBody(story: Story): string {
  const parsed = YAML.parse(planYaml([{ ...story, dependsOn: [] }])) as {
    stories: Record<string, unknown>[];
  };
  const entry = parsed.stories[0] ?? {};
  const yaml = YAML.stringify(entry, { lineWidth: 0 });
  return [story.description.trim(), fenceBlock(yaml, 'epicflow')].join('\n\n');
}

/** The plan section with the block replaced by the note that the stories are sub-issues. */
export function withoutPlanBlock(section: string, plan: Plan): string {
  const block = renderPlanBlock(plan.stories);
  if (!section.includes(block)) {
    throw new EpicflowError('internal', 'the plan section does not hold the plan block');
  }
  return section.replace(block, SUB_ISSUE_PLAN_NOTE);
}

/**
 * The comment listing what the planner of refine round `round` could not place as
 * stories: its lines are model text, shown inert in a fenced block.
 */
export function renderNotPlanned(round: number, items: readonly string[]): string {
  return [
    `**Not planned in refine round ${round}:** the planner could not place these items of the feedback as stories (each with its question). Answer them in a new \`/refine <feedback>\` if they are still wanted.`,
    fenceBlock(items.join('\n'), 'text'),
  ].join('\n\n');
}
