/**
 * The epic run (docs/architecture.md): skip what the epic branch already merged, start
 * ready stories in parallel within concurrency and coder slots (critical path
 * first), hold the dependents of a failed story, stop launching on a halt, and
 * write the board and the report. Rerunning resumes: the epic branch says what
 * merged, the story records say where the rest stand.
 */
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { decideLocal, type Trigger, verifiedRecord } from '../core/epic/index.js';
import { preferredExecutor } from '../core/epic/rules.js';
import { deferredStories, deferredSummary } from '../core/epic/deferred.js';
import { supersededMerge } from '../core/epic/review.js';
import { reportRow } from '../core/epic/report-rows.js';
import {
  storyBranchName,
  type Halt,
  type Plan,
  type Story,
  type StoryRecord,
} from '../core/model.js';
import {
  buildBoardJson,
  buildReportJson,
  renderBoard,
  renderReport,
  type ReportInput,
} from '../core/report/index.js';
import { loadRosterState, type RosterState } from '../core/roster/index.js';
import { LaunchSummary } from '../core/scheduler/index.js';
import { unfinishedStories } from '../core/land/index.js';
import { EpicContext, type EpicPorts, type EpicSettings } from './context.js';
import { RosterHolder } from './roster-holder.js';
import { runStory } from './story.js';

/** The integration tree's folder name beside the story worktrees (story ids cannot start with `_`). */
const EPIC_TREE_DIR = '_epic';

interface EpicRunOptions {
  readonly concurrency: number;
  readonly failFast: boolean;
  /** `--deferred`: the run is one follow-up round over the findings the judge deferred. */
  readonly deferred?: boolean;
  /** Title for the report (the plan file's first heading, say). */
  readonly title?: string | undefined;
}

export interface EpicRunResult {
  /** 0 when every story merged, 1 otherwise (README.md). */
  readonly exitCode: 0 | 1;
  readonly records: readonly StoryRecord[];
  readonly halts: readonly Halt[];
  readonly files: {
    readonly board: string;
    readonly boardJson: string;
    readonly report: string;
    readonly reportJson: string;
  };
}

/**
 * Creates the epic branch from the user's HEAD when it does not exist (never
 * touching the user's checkout), the epic's integration tree, and the context.
 */
export async function openEpic(settings: EpicSettings, ports: EpicPorts): Promise<EpicContext> {
  const { git, state } = ports;
  const ref = `refs/heads/${settings.epicBranch}`;
  let head = await git.revParse(ref);
  if (head === null) {
    const base = await git.defaultBase();
    await git.createBranch(settings.epicBranch, base);
    head = base;
    ports.events.emit({
      at: ports.clock.now().toISOString(),
      kind: 'epic',
      message: `created ${settings.epicBranch} from ${base.slice(0, 12)}`,
    });
  }
  const tree = await git.detachedWorktree(join(settings.worktreesDir, EPIC_TREE_DIR), head);
  const persisted = await state.readJson<unknown>('roster.json');
  const rosterState: RosterState = loadRosterState(persisted, join(state.dir, 'roster.json'));
  const roster = new RosterHolder(settings.config.executors, rosterState, state, ports.clock);
  return new EpicContext(settings, ports, roster, tree, head);
}

export async function runEpic(ctx: EpicContext, options: EpicRunOptions): Promise<EpicRunResult> {
  const { plan, epicBranch, epic } = ctx.settings;
  const { git, state } = ctx.ports;
  const startedAt = ctx.ports.clock.now().toISOString();
  const stories = plan.stories;
  const byId = new Map(stories.map((s) => [s.id, s]));
  const merged = new Map(await git.mergedStories(epicBranch));
  const records = new Map<string, StoryRecord>();
  const stored = await state.listStories();
  const facts = {
    merged,
    inPlace: await inPlaceStories(ctx, stored, merged),
    stateGuarded: ctx.settings.stateGuarded === true,
  };
  for (const r of stored) {
    const verified = verifiedRecord(r, facts);
    if (verified !== r) ctx.emit('story', verified.notes.at(-1) ?? '', r.story);
    records.set(r.story, verified);
  }
  for (const s of stories) {
    // A follow-up round (`--deferred`) says which merged stories it runs again.
    if (merged.has(s.id) && options.deferred !== true) {
      ctx.emit('status', 'already merged; skipping', s.id, { status: 'done' });
    }
  }

  const running = new Map<string, Promise<void>>();
  /** Stories started in this run: a waiting one keeps the reason its own run gave. */
  const startedNow = new Set<string>();
  const summary = new LaunchSummary();
  // The board for people and the same board for programs, rewritten on every change.
  const writeBoard = async (): Promise<void> => {
    const input = reportInput(ctx, stories, records, startedAt, options);
    await state.writeText('board.md', renderBoard(input));
    await state.writeText('board.json', `${JSON.stringify(buildBoardJson(input), null, 2)}\n`);
  };
  // The first decision reruns what a rerun should (as `/resume` would), or, with
  // `--deferred`, starts the follow-up round over deferred findings (as `/resume deferred`
  // would); later ones only see stories finish.
  let trigger: Trigger = options.deferred === true ? { kind: 'deferred' } : { kind: 'rerun' };

  for (;;) {
    if (ctx.interrupt.signal.aborted) ctx.setHalt({ kind: 'interrupted', message: 'interrupted' });
    for (const back of await ctx.roster.checkHealth(ctx.ports.health)) {
      ctx.emit('epic', `${back.id} is back: its health check answered (${back.url})`, undefined, {
        executor: back.id,
        resumed: 'health',
      });
    }
    // Running stories save their usage after every turn: the budget sees it at once.
    for (const r of await state.listStories()) if (running.has(r.story)) records.set(r.story, r);
    const d = decideLocal({
      epic,
      title: options.title ?? epic,
      plan,
      // The run's own limit (`--concurrency`, else the config's) is the one that counts.
      config: { ...ctx.config, concurrency: options.concurrency },
      records,
      merged,
      running: new Set(running.keys()),
      startedNow,
      halt: ctx.halt,
      freeCoderSlots: ctx.roster.freeSlots(),
      failFast: options.failFast,
      trigger,
      now: ctx.ports.clock.now().toISOString(),
    });
    trigger = { kind: 'status' };
    for (const reply of d.replies) ctx.emit('epic', reply);
    for (const a of d.stateActions) if (a.kind === 'set-halt') ctx.setHalt(a.halt);
    if (d.halt?.kind === 'budget') ctx.setHalt(d.halt);
    if (d.starts.length > 0) {
      const exhausted = ctx.roster.exhausted();
      if (exhausted !== null) {
        ctx.setHalt({
          kind: 'roster-exhausted',
          message: exhausted.message,
          ...(exhausted.until === undefined ? {} : { until: exhausted.until }),
        });
        continue;
      }
    }
    // What the decision changed (merges found, holds, releases, reruns) is written now.
    for (const record of d.writes) {
      records.set(record.story, record);
      await state.writeStory(record);
      if (record.status === 'waiting' && record.reason !== undefined) {
        ctx.emit('status', `waiting: ${record.reason}`, record.story, {
          status: 'waiting',
          reason: record.reason,
        });
      }
    }
    const line = summary.update(d.summary);
    if (line !== undefined) ctx.emit('summary', line);

    let launched = 0;
    for (const id of d.starts) {
      const story = byId.get(id);
      if (story === undefined) continue;
      // The story runs from its record as it is durable (a crash resumes its attempt), or
      // as the decision changed it (a follow-up round).
      const prior = d.startRecords.get(id) ?? records.get(id) ?? null;
      const executor = await ctx.roster.lease(
        id,
        preferredExecutor(story, prior, plan.hashes[id] ?? ''),
      );
      if (executor === null) break;
      launched += 1;
      startedNow.add(id);
      running.set(
        id,
        runStory(ctx, { story, executor, prior })
          .then(async (record) => {
            records.set(id, record);
            if (record.status === 'done' && record.mergeCommit !== undefined) {
              merged.set(id, record.mergeCommit);
            }
          })
          .finally(async () => {
            running.delete(id);
            await ctx.roster.release(id);
            await writeBoard();
          }),
      );
    }
    if (launched > 0) await writeBoard();
    if (running.size === 0) {
      // Settled: nothing runs, nothing started, and the last decision changed nothing.
      if (launched === 0 && d.writes.length === 0) break;
      continue;
    }
    await untilChange(ctx, running.values());
  }

  await writeBoard();
  const input = reportInput(ctx, stories, records, startedAt, options);
  const report = await state.writeText('report.md', renderReport(input));
  const reportJson = await state.writeText(
    'report.json',
    `${JSON.stringify(buildReportJson(input), null, 2)}\n`,
  );
  // Finished as landing counts it: merged, or done for the plan entry as it is. A merge
  // a follow-up round replaces counts only once the round merged again.
  const standing = new Map(
    [...merged].filter(([id, sha]) => !supersededMerge(records.get(id), sha)),
  );
  const allDone = unfinishedStories(ctx.settings.plan, records, standing).length === 0;
  return {
    exitCode: allDone ? 0 : 1,
    records: stories.map((s) => records.get(s.id)).filter((r): r is StoryRecord => r !== undefined),
    halts: ctx.halt === undefined ? [] : [ctx.halt],
    files: {
      board: join(state.dir, 'board.md'),
      boardJson: join(state.dir, 'board.json'),
      report,
      reportJson,
    },
  };
}

/**
 * Waits for a running story to finish or for capacity to return by itself (an
 * exclusion expiring), whichever comes first, so a ready story waiting for a
 * slot starts as soon as one is free.
 */
async function untilChange(ctx: EpicContext, running: Iterable<Promise<void>>): Promise<void> {
  const wake = ctx.roster.nextChange();
  if (wake === null) {
    await Promise.race(running);
    return;
  }
  const timer = new AbortController();
  // Timers cannot wait longer than 2^31-1 ms; a later wake-up simply loops once more.
  const ms = Math.min(
    2 ** 31 - 1,
    Math.max(0, wake.getTime() - ctx.ports.clock.now().getTime()) + 50,
  );
  try {
    await Promise.race([
      Promise.race(running),
      delay(ms, undefined, { signal: timer.signal }).catch(() => undefined),
    ]);
  } finally {
    timer.abort();
  }
}

function budgetStep(halt: Halt): string {
  const facts = halt.budget;
  const key =
    facts === undefined
      ? '`budget`'
      : facts.unit === 'usd'
        ? `\`budget.usd\` (now ${facts.limit})`
        : `\`budget.tokens\` (now ${facts.limit})`;
  return `raise ${key} above what is spent (${halt.message}), then rerun \`epicflow run\``;
}

function nextStep(ctx: EpicContext, records: ReadonlyMap<string, StoryRecord>): string | undefined {
  const halt = ctx.halt;
  if (halt?.kind === 'roster-exhausted' && halt.until !== undefined) {
    return `rerun \`epicflow run\` after ${halt.until.slice(11, 16)} UTC`;
  }
  if (halt?.kind === 'roster-exhausted') {
    return 'make an executor available again (see the reasons above: install, sign in, or `epicflow roster resume <id>`), then rerun `epicflow run`';
  }
  if (halt?.kind === 'budget') return budgetStep(halt);
  if (halt?.kind === 'outside-change') {
    return `put \`${ctx.settings.epicBranch}\` back where epicflow left it (${ctx.epicHead.slice(0, 12)}), then rerun \`epicflow run\``;
  }
  if (halt !== undefined) return 'rerun `epicflow run` to continue';
  if ([...records.values()].some((r) => r.status === 'failed')) {
    return 'fix the plan or the code of the failed stories, then rerun `epicflow run`';
  }
  const stories = ctx.settings.plan.stories.map((s) => {
    const record = records.get(s.id);
    return { id: s.id, done: record?.status === 'done', ...(record ? { record } : {}) };
  });
  const deferred = deferredStories(stories);
  if (deferred.length > 0 && stories.every((s) => s.done)) {
    return `every story is done; ${deferredSummary([...records.values()], deferred)} (listed under Deferred): \`epicflow run --deferred\` runs one follow-up round over them`;
  }
  return undefined;
}

/** The report's input from the plan and the records. */
function reportInput(
  ctx: EpicContext,
  stories: readonly Story[],
  records: ReadonlyMap<string, StoryRecord>,
  startedAt: string,
  options: { readonly title?: string | undefined },
): ReportInput {
  const step = nextStep(ctx, records);
  return buildReportInput({
    epic: ctx.settings.epic,
    epicBranch: ctx.settings.epicBranch,
    plan: ctx.settings.plan,
    stories,
    records,
    startedAt,
    now: ctx.ports.clock.now().toISOString(),
    title: options.title,
    halts: ctx.halt === undefined ? [] : [ctx.halt],
    nextStep: step,
  });
}

export function buildReportInput(input: {
  readonly epic: string;
  readonly epicBranch: string;
  readonly plan: Plan;
  readonly stories: readonly Story[];
  readonly records: ReadonlyMap<string, StoryRecord>;
  readonly startedAt?: string | undefined;
  readonly now: string;
  readonly title?: string | undefined;
  readonly halts: readonly Halt[];
  readonly nextStep?: string | undefined;
}): ReportInput {
  const waveOf = (id: string): number => input.plan.waves.findIndex((w) => w.includes(id)) + 1;
  return {
    epic: input.epic,
    ...(input.title === undefined ? {} : { title: input.title }),
    epicBranch: input.epicBranch,
    ...(input.startedAt === undefined ? {} : { startedAt: input.startedAt }),
    now: input.now,
    // The one row rule of every report (the pull request's comment shows the same).
    stories: input.stories.map((story) =>
      reportRow({
        epic: input.epic,
        story,
        wave: waveOf(story.id),
        hash: input.plan.hashes[story.id] ?? '',
        record: input.records.get(story.id),
      }),
    ),
    halts: input.halts,
    ...(input.nextStep === undefined ? {} : { nextStep: input.nextStep }),
  };
}

/** Stories recorded done without a merge whose branch changes nothing against the epic branch. */
async function inPlaceStories(
  ctx: EpicContext,
  records: readonly StoryRecord[],
  merged: ReadonlyMap<string, string>,
): Promise<Set<string>> {
  const { git } = ctx.ports;
  const { epicBranch, epic } = ctx.settings;
  const inPlace = new Set<string>();
  for (const r of records) {
    if (r.status !== 'done' || r.mergeCommit !== undefined || merged.has(r.story)) continue;
    const branch = storyBranchName(epic, r.story);
    if ((await git.revParse(`refs/heads/${branch}`)) === null) continue;
    if ((await git.diff(epicBranch, branch)) === '') inPlace.add(r.story);
  }
  return inPlace;
}
