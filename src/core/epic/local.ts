/**
 * The local run's decision (`epicflow run`): the one epic state machine
 * (`decideStories`) over the records as they stand on this machine. Only stories this
 * process runs are active — an `active` record left by a crash is a story to start
 * again, on its branch, at the same attempt — and what the decision changed for the
 * others (merges found, holds, releases, reruns) is what the shell writes.
 */
import type { EpicflowConfig } from '../config/types.js';
import type { Halt, Plan, StoryRecord } from '../model.js';
import { planDigest } from './approval.js';
import { decideStories } from './reconcile.js';
import { blankRecord } from './rules.js';
import { sameRecord } from './story-state.js';
import type { Action, Trigger } from './types.js';

interface LocalInput {
  readonly epic: string;
  readonly title: string;
  readonly plan: Plan;
  readonly config: EpicflowConfig;
  /** The durable records, as the state folder holds them. */
  readonly records: ReadonlyMap<string, StoryRecord>;
  /** Story id → merge commit on the epic branch. */
  readonly merged: ReadonlyMap<string, string>;
  /** Stories this process runs now. */
  readonly running: ReadonlySet<string>;
  /** Stories started in this run (a waiting one keeps the reason its own run gave). */
  readonly startedNow: ReadonlySet<string>;
  readonly halt: Halt | undefined;
  readonly freeCoderSlots: number;
  readonly failFast: boolean;
  readonly trigger: Trigger;
  readonly now: string;
}

interface LocalDecision {
  /** Records to write (not of stories starting or running: those write their own). */
  readonly writes: readonly StoryRecord[];
  /** Stories to start, in order (each needs a free executor). */
  readonly starts: readonly string[];
  /**
   * The records of starting stories the decision changed (a follow-up round's, say): the
   * story starts from these; the others from their record as stored.
   */
  readonly startRecords: ReadonlyMap<string, StoryRecord>;
  readonly halt: Halt | undefined;
  readonly summary: string;
  /** Halts the trigger set or lifted (a local `cancel` or `resume`). */
  readonly stateActions: readonly Action[];
  /** What the trigger answers (a follow-up round started, or why none did). */
  readonly replies: readonly string[];
}

/**
 * A record as a local run may use it. A `done` record counts only when what it claims is
 * in git: its merge on the epic branch, or, done without a merge (the work was already in
 * place), its story branch still there with nothing the epic branch lacks. Where the agent
 * runs as epicflow's own user it can write the state folder, so a record's word alone
 * never skips a story; where it cannot (`stateGuarded`: the agent runs as another user),
 * "already in place" is taken as written. Anything else is a story to run again, and says
 * why.
 */
export function verifiedRecord(
  record: StoryRecord,
  facts: {
    /** Stories merged on the epic branch, with their merge commits. */
    readonly merged: ReadonlyMap<string, string>;
    /** Stories whose branch exists and changes nothing against the epic branch. */
    readonly inPlace: ReadonlySet<string>;
    readonly stateGuarded: boolean;
  },
): StoryRecord {
  if (record.status !== 'done' || facts.merged.has(record.story)) return record;
  if (record.mergeCommit === undefined && (facts.stateGuarded || facts.inPlace.has(record.story)))
    return record;
  const { mergeCommit, storyCommit: _s, finishedAt: _f, ...rest } = record;
  return {
    ...rest,
    status: 'planned',
    notes: [
      ...record.notes,
      mergeCommit === undefined
        ? 'its record said done without a merge, but its branch is not there as the judge left it: run again'
        : `its record named the merge ${mergeCommit.slice(0, 12)}, which is not on the epic branch: run again`,
    ],
  };
}

/** The records as the state machine sees them locally. */
function localView(
  input: Pick<LocalInput, 'epic' | 'plan' | 'records' | 'running'>,
): Record<string, StoryRecord> {
  const view: Record<string, StoryRecord> = {};
  for (const [id, r] of input.records) {
    if (input.running.has(id)) view[id] = { ...r, status: 'active' };
    else if (r.status === 'active') view[id] = { ...r, status: 'planned' };
    else view[id] = r;
  }
  for (const id of input.running) {
    view[id] ??= {
      ...blankRecord(input.epic, id, input.plan.hashes[id] ?? ''),
      status: 'active',
    };
  }
  return view;
}

export function decideLocal(input: LocalInput): LocalDecision {
  const view = localView(input);
  const d = decideStories({
    epic: { number: 0, title: input.title },
    epicId: input.epic,
    plan: input.plan,
    records: view,
    merged: input.merged,
    config: input.config,
    freeCoderSlots: input.freeCoderSlots,
    halt: input.halt,
    failFast: input.failFast,
    ownWaitingReasons: input.startedNow,
    // Locally the plan file is the user's own: approved as it is.
    approvedPlan: planDigest(input.plan),
    subIssues: {},
    pr: undefined,
    now: input.now,
    trigger: input.trigger,
  });
  const starting = new Set(d.decision.start);
  const writes: StoryRecord[] = [];
  const startRecords = new Map<string, StoryRecord>();
  for (const e of d.entries) {
    const id = e.story.id;
    if (starting.has(id) && e.current !== undefined && !sameRecord(view[id], e.current)) {
      startRecords.set(id, e.current);
    }
    if (starting.has(id) || input.running.has(id) || e.current === undefined) continue;
    if (!sameRecord(view[id], e.current)) writes.push(e.current);
  }
  return {
    writes,
    starts: d.decision.start,
    startRecords,
    halt: d.halt,
    summary: d.decision.summary,
    stateActions: d.stateActions,
    replies: d.replies,
  };
}
