/**
 * The planning use case: an epic written in prose becomes a validated plan.
 * A planner executor runs on a read-only checkout (a detached tree at the base
 * commit); after each turn whatever it changed there, commits included, is
 * discarded and reported by path, and git's configuration is put back. Its
 * answer is checked by the plan validator with the options of a hand-written
 * plan, then by the quality checks; a refused answer goes back for a repair
 * round while `planner.repairRounds` allow. Infrastructure outcomes move the
 * turn to another planner, as for a judge. Nothing here writes a plan: the
 * caller decides what to do with the outcome (write the file, update the
 * issue, hold the epic).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { EpicflowConfig, ExecutorConfig } from '../core/config/types.js';
import { EpicflowError } from '../core/errors.js';
import type { OutcomeClass, RunRecord } from '../core/executor.js';
import type { Plan, UsageEntry } from '../core/model.js';
import { withGitConfigGuarded } from './guarded-config.js';
import type { PlanOptions, Violation } from '../core/plan/index.js';
import {
  buildPlannerPrompt,
  checkPlanQuality,
  decideRound,
  keepStoryIds,
  readPlannerAnswer,
  readRefineAnswer,
  readSplitAnswer,
  type KeptIds,
  type SplitRequest,
  type PlannerRepair,
  type QualityWarning,
} from '../core/planner/index.js';
import {
  pickHelper,
  recordMissingBinary,
  recordSignal,
  type Exclusion,
  type RosterState,
} from '../core/roster/index.js';
import { shortDetail } from '../core/story/index.js';
import { someOf } from '../core/paths.js';
import { priceUsage } from '../core/usage/index.js';
import type { Clock, ExecutorLookup, GitConfigSnapshot } from './ports.js';
import { buildTurnRequest } from './turn-request.js';
import { mergeUsage } from './usage.js';

/** `EPICFLOW_STORY` of a planner turn (and the story part of its session names). */
const PLANNER_STORY = 'plan';

/** A planner turn moves to another executor (or waits out a rate limit) at most this often per round. */
const PLANNER_ATTEMPTS = 3;

/** Waits before retrying a rate-limited planner turn: 1 s, then 2 s. */
const PLANNER_BACKOFF_MS = 1000;

/** Paths of a discarded change listed in its note; the rest are counted. */
const PATHS_IN_NOTE = 20;

/** The read-only checkout the planner runs in. */
export interface PlanningTree {
  readonly path: string;
  head(): Promise<string>;
  /** Before the turn: trusts git's own configuration files as they are. */
  snapshotGitConfig(): Promise<GitConfigSnapshot>;
  /** After it: puts back whatever of them changed; returns their labels. */
  restoreGitConfig(snapshot: GitConfigSnapshot): Promise<string[]>;
  /** Every path that differs from `base` (commits on top of it, staged, unstaged, untracked, ignored). */
  changedFrom(base: string): Promise<string[]>;
  /** Back to a detached HEAD at `base`, nothing else left. */
  discardTo(base: string): Promise<void>;
}

export interface PlanningGit {
  /** Every file of the commit the plan is drafted against. */
  listFiles(sha: string): Promise<string[]>;
  /** A fresh read-only checkout at `sha`. */
  checkout(sha: string): Promise<PlanningTree>;
  /** Removes the checkout (and whatever the planner left in it). */
  release(tree: PlanningTree): Promise<void>;
}

/** The planners of the roster: which one runs a turn, and what infrastructure signals do. */
interface PlannerRoster {
  /** A planner not excluded now; null when none can serve. */
  pick(): ExecutorConfig | null;
  signal(
    executor: string,
    outcome: OutcomeClass,
    resetAt: string | undefined,
    detail: string,
  ): Promise<Exclusion | null>;
  missingBinary(executor: string, detail: string): Promise<Exclusion>;
}

interface PlanningPorts {
  readonly git: PlanningGit;
  readonly executors: ExecutorLookup;
  readonly roster: PlannerRoster;
  /** One line for people per step (`round 1: claude planning`). */
  readonly emit: (message: string) => void;
  /** Aborted: the turn is stopped and planning ends as failed. */
  readonly signal?: AbortSignal | undefined;
}

interface PlanningRequest {
  /** The epic's id: `EPICFLOW_EPIC` of the planner's turns. */
  readonly epic: string;
  readonly title?: string | undefined;
  /** The epic's prose, as people wrote it (untrusted). */
  readonly epicText: string;
  /** The commit the plan is drafted against (the default branch's head on GitHub, HEAD locally). */
  readonly base: string;
  readonly config: EpicflowConfig;
  /** Config files stories may not own (as for a hand-written plan). */
  readonly configPaths: readonly string[];
  /** Resolved environment per executor id. */
  readonly executorEnv: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** The isolated home of a planner executor. */
  readonly home: (executor: string) => string;
  /** A writer's guidance (`/plan <guidance>`): untrusted like the epic. */
  readonly guidance?: string | undefined;
  /** The current plan when re-planning: unchanged stories keep their ids. */
  readonly previous?: Plan | undefined;
  /**
   * A refine round (`/refine <feedback>`): `previous` is kept exactly, the planner's
   * stories are added to it with ids `r<round>-<id>`, and the combined plan is validated.
   */
  readonly refine?: { readonly round: number; readonly merged: readonly string[] } | undefined;
  /**
   * A story of `previous` that proved too big: the planner's stories replace it (ids
   * `<story>-<id>`, docs/planning.md), the rest of the plan is kept.
   */
  readonly split?: SplitRequest | undefined;
}

/** What every outcome tells: rounds run, usage measured, who planned, what was discarded. */
export interface PlanningRecord {
  /** Planner rounds answered (1 = the first answer; repairs add one each). */
  readonly rounds: number;
  /** Usage of every planner turn, priced like every executor run. */
  readonly usage: readonly UsageEntry[];
  /** Planner executors that ran a turn, in order of first use. */
  readonly executors: readonly string[];
  /** Changes discarded and git configuration restored, one line each. */
  readonly notes: readonly string[];
}

export type PlanningOutcome =
  | (PlanningRecord & {
      readonly kind: 'planned';
      /** The plan, validated, ids kept when re-planning. */
      readonly plan: Plan;
      /** Quality warnings left (none of them must-fix). */
      readonly warnings: readonly QualityWarning[];
      /** Stories whose proposed id was given back to them (re-planning). */
      readonly renamed: KeptIds['renamed'];
      /** A refine round: what of the feedback the planner could not place, one line each. */
      readonly notPlanned: readonly string[];
    })
  | (PlanningRecord & {
      readonly kind: 'invalid';
      /** The validator's violations of the last answer. */
      readonly violations: readonly Violation[];
      /** Must-fix quality problems of the last answer. */
      readonly mustFix: readonly QualityWarning[];
      readonly warnings: readonly QualityWarning[];
    })
  | (PlanningRecord & {
      readonly kind: 'failed';
      /** Why no plan came: no planner could serve, a turn failed, or planning was interrupted. */
      readonly reason: string;
    });

/** The roster's planners over the pure roster, in memory; `onChange` may persist the state. */
export function plannerRoster(
  executors: readonly ExecutorConfig[],
  clock: Clock,
  initial: RosterState,
  onChange: (state: RosterState) => Promise<void> = async () => undefined,
): PlannerRoster {
  let state = initial;
  return {
    pick: () =>
      pickHelper(executors, state, { role: 'planner', avoid: [], now: clock.now() })?.executor ??
      null,
    async signal(executor, outcome, resetAt, detail) {
      const r = recordSignal(state, { executor, outcome, resetAt, detail, now: clock.now() });
      state = r.state;
      await onChange(state);
      return r.exclusion;
    },
    async missingBinary(executor, detail) {
      const r = recordMissingBinary(state, { executor, detail, now: clock.now() });
      state = r.state;
      await onChange(state);
      return r.exclusion;
    },
  };
}

function codes(violations: readonly Violation[], quality: readonly QualityWarning[]): string {
  return [...new Set([...violations.map((v) => v.code), ...quality.map((q) => q.code)])].join(', ');
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** A function, so that TypeScript does not narrow it across awaits. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

async function backoff(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await delay(ms, undefined, signal === undefined ? {} : { signal });
  } catch {
    // Interrupted: the loop checks the signal next.
  }
}

/** Drafts a plan from the epic's prose (see the module comment). */
export async function planEpic(
  request: PlanningRequest,
  ports: PlanningPorts,
): Promise<PlanningOutcome> {
  const files = await ports.git.listFiles(request.base);
  const tree = await ports.git.checkout(request.base);
  try {
    return await planIn(tree, files, request, ports);
  } finally {
    await ports.git.release(tree);
  }
}

async function planIn(
  tree: PlanningTree,
  files: readonly string[],
  request: PlanningRequest,
  ports: PlanningPorts,
): Promise<PlanningOutcome> {
  const { config } = request;
  const options: PlanOptions = {
    allowWorkflowChanges: config.allowWorkflowChanges,
    configPaths: request.configPaths,
  };
  const coders = config.executors.filter((e) => e.roles.includes('coder')).map((e) => e.id);
  if (
    (request.refine !== undefined || request.split !== undefined) &&
    request.previous === undefined
  ) {
    throw new EpicflowError('internal', 'a refine round or a split needs the current plan');
  }
  const refine =
    request.refine === undefined || request.previous === undefined
      ? undefined
      : { round: request.refine.round, current: request.previous };
  let usage: UsageEntry[] = [];
  const used: string[] = [];
  const notes: string[] = [];
  const record = (rounds: number): PlanningRecord => ({
    rounds,
    usage,
    executors: [...used],
    notes: [...notes],
  });
  let round = 1;
  let repair: PlannerRepair | undefined;
  let attempts = 0;
  let why = 'no executor has the planner role';

  for (;;) {
    if (aborted(ports.signal)) {
      return { kind: 'failed', reason: 'planning interrupted', ...record(round - 1) };
    }
    const executor = ports.roster.pick();
    if (executor === null) {
      return { kind: 'failed', reason: `no planner can serve: ${why}`, ...record(round - 1) };
    }
    ports.emit(`round ${round}: ${executor.id} planning`);
    const prompt = buildPlannerPrompt({
      epic: request.epic,
      title: request.title,
      epicText: request.epicText,
      files,
      limits: {
        maxStories: config.planner.maxStories,
        executors: config.executors,
        allowWorkflowChanges: config.allowWorkflowChanges,
        configPaths: request.configPaths,
      },
      guidance: request.guidance,
      previous: request.previous,
      refine: request.refine,
      split: request.split,
      round,
      repair,
    });
    const result: RunRecord = await withGitConfigGuarded(
      tree,
      `round ${round} (${executor.id} planning)`,
      () =>
        ports.executors(executor).runTurn(
          buildTurnRequest({ ...request, silenceMs: config.timeouts.silenceMs }, executor, {
            story: PLANNER_STORY,
            round,
            role: 'planner',
            prompt,
            worktree: tree.path,
            timeoutMs: config.timeouts.storyMs,
            home: request.home(executor.id),
          }),
          ports.signal,
        ),
      (note) => {
        notes.push(note);
        ports.emit(note);
      },
    );
    usage = mergeUsage(usage, priceUsage(result.usage, config.prices));
    if (!used.includes(executor.id)) used.push(executor.id);
    await discardChanges(tree, request.base, `round ${round}, ${executor.id}`, notes, ports);
    if (aborted(ports.signal)) {
      return { kind: 'failed', reason: 'planning interrupted', ...record(round - 1) };
    }

    if (result.outcome !== 'ok') {
      attempts += 1;
      if (result.missingBinary === true) {
        await ports.roster.missingBinary(executor.id, result.detail);
        why = `${executor.id}: ${shortDetail(result.detail)}`;
      } else if (result.outcome === 'failed') {
        return {
          kind: 'failed',
          reason: `planner turn failed (${executor.id}): ${shortDetail(result.detail)}`,
          ...record(round),
        };
      } else {
        const exclusion = await ports.roster.signal(
          executor.id,
          result.outcome,
          result.resetAt,
          result.detail,
        );
        why = `${executor.id} stopped: ${exclusion?.reason ?? result.outcome}`;
        if (exclusion === null) await backoff(PLANNER_BACKOFF_MS * attempts, ports.signal);
      }
      ports.emit(`round ${round}: ${why}`);
      if (attempts >= PLANNER_ATTEMPTS) {
        return { kind: 'failed', reason: `no planner can serve: ${why}`, ...record(round) };
      }
      continue;
    }
    attempts = 0;

    const refined =
      refine === undefined || request.split !== undefined
        ? undefined
        : readRefineAnswer(result.finalMessage, refine.current, refine.round, options);
    const answer =
      refined ??
      (request.split !== undefined && request.previous !== undefined
        ? readSplitAnswer(result.finalMessage, request.previous, request.split.story, options)
        : readPlannerAnswer(result.finalMessage, options));
    let plan: Plan | undefined;
    let renamed: KeptIds['renamed'] = [];
    let quality: QualityWarning[] = [];
    if (answer.result.ok) {
      plan = answer.result.plan;
      if (request.previous !== undefined && refine === undefined && request.split === undefined) {
        const kept = keepStoryIds(request.previous, plan);
        plan = kept.plan;
        renamed = kept.renamed;
      }
      quality = checkPlanQuality(plan, { files, maxStories: config.planner.maxStories, coders });
    }
    const violations = answer.result.ok ? [] : answer.result.violations;
    const mustFix = quality.filter((q) => q.mustFix);
    const warnings = quality.filter((q) => !q.mustFix);
    const decision = decideRound({
      round,
      repairRounds: config.planner.repairRounds,
      violations,
      quality,
    });
    switch (decision.kind) {
      case 'accept':
        if (plan === undefined) throw new Error('unreachable: accepted without a plan');
        ports.emit(
          `round ${round}: plan accepted (${plan.stories.length} stories in ${plan.waves.length} waves${warnings.length > 0 ? `, ${plural(warnings.length, 'warning')}` : ''})`,
        );
        return {
          kind: 'planned',
          plan,
          warnings,
          renamed,
          notPlanned: refined?.notPlanned ?? [],
          ...record(round),
        };
      case 'repair':
        ports.emit(
          `round ${round}: plan refused (${codes(violations, mustFix)}); asking for a repair`,
        );
        repair = { answer: answer.yaml, violations, mustFix, warnings };
        round = decision.nextRound;
        continue;
      case 'give-up':
        ports.emit(`round ${round}: plan still refused (${codes(violations, mustFix)})`);
        return { kind: 'invalid', violations, mustFix, warnings, ...record(round) };
    }
  }
}

/**
 * Whatever a read-only turn (`who`: the planner, a retro) changed in the checkout,
 * commits included, is discarded and noted by path.
 */
export async function discardChanges(
  tree: PlanningTree,
  base: string,
  during: string,
  notes: string[],
  ports: Pick<PlanningPorts, 'emit'>,
  who = 'planner',
): Promise<void> {
  const head = await tree.head();
  const changed = await tree.changedFrom(base);
  if (head === base && changed.length === 0) return;
  const found: string[] = [];
  if (head !== base) found.push(`${who} moved HEAD to ${head.slice(0, 12)}: discarded (${during})`);
  if (changed.length > 0)
    found.push(`${who} changed ${someOf(changed, PATHS_IN_NOTE)}: discarded (${during})`);
  for (const note of found) {
    notes.push(note);
    ports.emit(note);
  }
  await tree.discardTo(base);
}
