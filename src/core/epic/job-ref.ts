/**
 * What a job of the story workflow is: one story's attempt, a planning attempt, a retro
 * attempt or a landing. Every such job is dispatched with the same three ids (`epic`,
 * `story`, `attempt`); the `story` id says which kind it is (`_plan` for planning,
 * `_retro` for a retro, `land-<n>` for a landing, a plan id otherwise), and the workflow's `run-name` carries the three
 * ids into the run's title. A `JobRef` is read here, once, from a dispatch's inputs or
 * from a run's title, and written back to both, byte for byte as before.
 *
 * `jobStaleness` is the one decision whether a job may still run: the record it was
 * dispatched for must still be its own, and a story job runs only a plan a writer
 * approved, exactly as `planApproval` (approval.ts) decides it.
 */
import { EpicflowError } from '../errors.js';
import type { Plan, StoryRecord } from '../model.js';
import { ID_PATTERN, MAX_ID_LENGTH } from '../plan/index.js';
import { PLAN_APPROVAL_MISSING_MESSAGE, planApproval } from './approval.js';

/**
 * The `story` input of a planning job: not a plan id (those start with a letter or
 * digit), so no story's run is ever taken for a planning run or the other way round.
 */
export const PLANNING_RUN_STORY = '_plan';

/** The `story` input of a retro job (`/retro`): reserved the same way. */
export const RETRO_RUN_STORY = '_retro';

/** `land-<n>`: the story workflow runs a landing when its `story` input says so. */
const LAND_JOB = /^land-([1-9][0-9]{0,8})$/;

/** One story's attempt. */
export interface StoryJobRef {
  readonly kind: 'story';
  readonly epic: number;
  readonly story: string;
  readonly attempt: number;
}

/** One planning attempt (`story: _plan`). */
export interface PlanJobRef {
  readonly kind: 'plan';
  readonly epic: number;
  readonly attempt: number;
}

/** One retro attempt (`story: _retro`). */
export interface RetroJobRef {
  readonly kind: 'retro';
  readonly epic: number;
  readonly attempt: number;
}

/** One landing (`story: land-<n>`). */
export interface LandJobRef {
  readonly kind: 'land';
  readonly epic: number;
  /** `land-<n>`. */
  readonly job: string;
  readonly attempt: number;
}

export type JobRef = StoryJobRef | PlanJobRef | RetroJobRef | LandJobRef;

/** The three ids every job of the story workflow is dispatched with, as numbers where they are. */
export interface JobIds {
  readonly epic: number;
  readonly story: string;
  readonly attempt: number;
}

/** Whether a `story` id names a landing job (`land-<n>`, n ≥ 1). */
export function isLandJob(id: string): boolean {
  return LAND_JOB.test(id);
}

/** The job the ids name: the `story` id decides its kind (anything else is a story's). */
export function jobRef(ids: JobIds): JobRef {
  const { epic, story, attempt } = ids;
  if (story === PLANNING_RUN_STORY) return { kind: 'plan', epic, attempt };
  if (story === RETRO_RUN_STORY) return { kind: 'retro', epic, attempt };
  if (isLandJob(story)) return { kind: 'land', epic, job: story, attempt };
  return { kind: 'story', epic, story, attempt };
}

/** The `story` id a job is dispatched with. */
export function jobId(ref: JobRef): string {
  switch (ref.kind) {
    case 'story':
      return ref.story;
    case 'plan':
      return PLANNING_RUN_STORY;
    case 'retro':
      return RETRO_RUN_STORY;
    case 'land':
      return ref.job;
  }
}

/** The ids of a job as `ids` (the record `runTitle` and the run's checks read). */
export function jobIds(ref: JobRef): JobIds {
  return { epic: ref.epic, story: jobId(ref), attempt: ref.attempt };
}

/** The inputs of the story workflow's dispatch that runs this job: ids only, as text. */
export function jobInputs(ref: JobRef): { epic: string; story: string; attempt: string } {
  return { epic: String(ref.epic), story: jobId(ref), attempt: String(ref.attempt) };
}

/** The story workflow's `run-name` as users copy it (epicflow-story.yml in each folder of examples/workflows). */
export const RUN_NAME_TEMPLATE =
  'epicflow epic ${{ inputs.epic }} story ${{ inputs.story }} attempt ${{ inputs.attempt }}';

/** The title GitHub gives the run of a job dispatched with these ids under `RUN_NAME_TEMPLATE`. */
export function jobTitle(ref: JobRef | JobIds): string {
  const ids = 'kind' in ref ? jobIds(ref) : ref;
  return `epicflow epic ${ids.epic} story ${ids.story} attempt ${ids.attempt}`;
}

// Numbers as epicflow dispatches them (`String(n)`): no sign, no leading zero.
const TITLE = /^epicflow epic ([1-9]\d*) story (\S+) attempt ([1-9]\d*)$/;

/**
 * The job a run's title names, or null when the title is not exactly one `jobTitle`
 * makes: a story job's id must be a plan id.
 */
export function parseJobTitle(title: string): JobRef | null {
  const m = TITLE.exec(title);
  if (m === null) return null;
  const [, epicText = '', story = '', attemptText = ''] = m;
  const epic = Number(epicText);
  const attempt = Number(attemptText);
  if (!Number.isSafeInteger(epic) || !Number.isSafeInteger(attempt)) return null;
  const ref = jobRef({ epic, story, attempt });
  if (ref.kind === 'story' && (!ID_PATTERN.test(story) || story.length > MAX_ID_LENGTH)) {
    return null;
  }
  return ref;
}

/** What a job finds on GitHub when it starts, by kind. */
export type JobFacts =
  | {
      readonly kind: 'story';
      /** The story's record (undefined: none). */
      readonly record: Pick<StoryRecord, 'attempt' | 'status' | 'planHash'> | undefined;
      /** The story's entry hash in the plan as it runs now (review stories included). */
      readonly entryHash: string | undefined;
      /** The plan of the issue, as writers approve it (without review stories). */
      readonly plan: Plan;
      /** The approved plan's hash on file (the epic document's `approvedPlan`). */
      readonly approvedPlan: string | undefined;
    }
  | {
      readonly kind: 'plan';
      /** The planning record (undefined: none). */
      readonly record: { readonly attempt: number; readonly status: string } | undefined;
    }
  | {
      readonly kind: 'retro';
      /** The retro record (undefined: none). */
      readonly record: { readonly attempt: number; readonly status: string } | undefined;
    }
  | {
      readonly kind: 'land';
      /** The landing's record in the landing log (undefined: none). */
      readonly record: { readonly outcome: string } | undefined;
    };

/** The record a job was dispatched for: a story's or a planning attempt's, or a landing's. */
type JobRecord =
  { readonly attempt: number; readonly status: string } | { readonly outcome: string };

/**
 * Whether the record a job was dispatched for is still its own: the same attempt,
 * still active (a landing: still running). A job whose record moved on (a retry, a
 * cancel, a newer attempt) leaves it alone.
 */
export function ownsRecord(ref: JobRef, record: JobRecord | undefined): boolean {
  if (record === undefined) return false;
  if ('outcome' in record) return ref.kind === 'land' && record.outcome === 'running';
  return ref.kind !== 'land' && record.attempt === ref.attempt && record.status === 'active';
}

/**
 * The change a job that could not run makes to the record it was dispatched for, inside a
 * compare-and-swap (which may call it again on a newer record): `fail` applied while the
 * record is still the job's own (`ownsRecord`), the record as it is otherwise (a retry, a
 * cancel or a newer attempt is left alone). `failed()`: what the last call made of it
 * (undefined: it was not the job's).
 */
export function failIfOwned<R extends JobRecord>(
  ref: JobRef,
  fail: (current: R) => R,
): {
  readonly change: <C extends R | null>(current: C) => C | R;
  readonly failed: () => R | undefined;
} {
  let failed: R | undefined;
  return {
    change: (current) => {
      failed = current === null || !ownsRecord(ref, current) ? undefined : fail(current);
      return failed ?? current;
    },
    failed: () => failed,
  };
}

/**
 * What a job read of the record it was dispatched for (`record`, undefined when there is
 * none), when the job may still run; else why not (`jobStaleness`), thrown.
 */
export function freshRecord<R>(ref: JobRef, facts: JobFacts, record: R | undefined): R {
  const stale = jobStaleness(ref, facts);
  if (stale !== undefined) throw stale;
  if (record === undefined) {
    const subject = {
      story: () => `story ${jobId(ref)}`,
      plan: () => `planning of epic #${ref.epic}`,
      retro: () => `the retro of epic #${ref.epic}`,
      land: () => jobId(ref),
    }[ref.kind]();
    throw new EpicflowError('internal', `${subject} passed the staleness check without a record`);
  }
  return record;
}

/**
 * Why this job must not run (undefined: it may). The one staleness check of every job
 * kind, pure: the job shells throw what it returns before they change anything.
 */
export function jobStaleness(ref: JobRef, facts: JobFacts): EpicflowError | undefined {
  if (ref.kind === 'story' && facts.kind === 'story') return storyStaleness(ref, facts);
  if (ref.kind === 'plan' && facts.kind === 'plan') return planStaleness(ref, facts);
  if (ref.kind === 'retro' && facts.kind === 'retro') return retroStaleness(ref, facts);
  if (ref.kind === 'land' && facts.kind === 'land') return landStaleness(ref, facts);
  return new EpicflowError('internal', `a ${ref.kind} job was checked against ${facts.kind} facts`);
}

function storyStaleness(
  ref: StoryJobRef,
  facts: Extract<JobFacts, { kind: 'story' }>,
): EpicflowError | undefined {
  const { epic, story } = ref;
  const prior = facts.record;
  if (prior === undefined) {
    return new EpicflowError(
      'state',
      `epic #${epic} has no record of story ${story}: epicflow did not dispatch this job`,
      { details: ['stories are started by labelling the epic issue or commenting /resume'] },
    );
  }
  if (prior.attempt !== ref.attempt) {
    return new EpicflowError(
      'state',
      `story ${story} of epic #${epic} is at attempt ${prior.attempt}, not ${ref.attempt}: this job is stale`,
    );
  }
  if (prior.planHash !== facts.entryHash) {
    return new EpicflowError(
      'plan',
      `the plan entry of story ${story} changed since it was dispatched`,
      { details: ['epicflow restarts the story with the new entry; comment /resume on the epic'] },
    );
  }
  // The prompt shows other stories of the plan too: none of them may carry text a
  // writer did not approve (an issue's author may edit it without write permission).
  // A job approves nothing: the plan is as approval.ts says with no approving trigger.
  const approval = planApproval({
    plan: facts.plan,
    approvedPlan: facts.approvedPlan,
    trigger: { kind: 'status' },
  });
  if (approval.kind !== 'approved') {
    const missing = facts.approvedPlan === undefined;
    return new EpicflowError(
      'plan',
      missing
        ? `epic #${epic}: ${PLAN_APPROVAL_MISSING_MESSAGE}`
        : `the plan of epic #${epic} changed since a user with write permission approved it`,
      {
        details: [
          `a user with write permission must check the plan and comment ${missing ? '/approve' : '/resume'} to accept it`,
        ],
      },
    );
  }
  if (prior.status !== 'active') {
    return new EpicflowError(
      'state',
      `story ${story} of epic #${epic} is ${prior.status}, not active: nothing to run`,
      { details: [`comment /retry ${story} on the epic to run it again`] },
    );
  }
  return undefined;
}

function planStaleness(
  ref: PlanJobRef,
  facts: Extract<JobFacts, { kind: 'plan' }>,
): EpicflowError | undefined {
  const { epic } = ref;
  const doc = facts.record;
  if (doc === undefined) {
    return new EpicflowError(
      'state',
      `epic #${epic} has no planning record: epicflow did not dispatch this planning job`,
      { details: ['planning starts by labelling an issue without a plan, or commenting /plan'] },
    );
  }
  if (doc.attempt !== ref.attempt) {
    return new EpicflowError(
      'state',
      `planning of epic #${epic} is at attempt ${doc.attempt}, not ${ref.attempt}: this job is stale`,
    );
  }
  if (doc.status !== 'active') {
    return new EpicflowError(
      'state',
      `planning attempt ${doc.attempt} of epic #${epic} is ${doc.status}, not active: nothing to run`,
      { details: ['comment /plan on the epic to plan it again'] },
    );
  }
  return undefined;
}

function retroStaleness(
  ref: RetroJobRef,
  facts: Extract<JobFacts, { kind: 'retro' }>,
): EpicflowError | undefined {
  const { epic } = ref;
  const doc = facts.record;
  if (doc === undefined) {
    return new EpicflowError(
      'state',
      `epic #${epic} has no retro record: epicflow did not dispatch this retro job`,
      { details: ['a retro starts when a user with write permission comments /retro'] },
    );
  }
  if (doc.attempt !== ref.attempt || doc.status !== 'active') {
    return new EpicflowError(
      'state',
      `the retro of epic #${epic} is at attempt ${doc.attempt} (${doc.status}), not ${ref.attempt}: this job is stale`,
    );
  }
  return undefined;
}

function landStaleness(
  ref: LandJobRef,
  facts: Extract<JobFacts, { kind: 'land' }>,
): EpicflowError | undefined {
  const { epic, job } = ref;
  const record = facts.record;
  if (record === undefined) {
    return new EpicflowError(
      'state',
      `epic #${epic} has no record of ${job}: epicflow did not dispatch this landing`,
      { details: ['landings start when the default branch moves'] },
    );
  }
  if (!ownsRecord(ref, record)) {
    return new EpicflowError(
      'state',
      `${job} of epic #${epic} is ${record.outcome}, not running: this job is stale`,
    );
  }
  return undefined;
}
