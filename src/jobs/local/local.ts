/**
 * `epicflow run` on one machine, a kind the epic shell runs (`epic-kind.ts`): its
 * `prepare` reads the plan and config and checks everything before creating anything;
 * its `run` applies the approved retro's fixes, runs the stories on the epic wired with
 * what is local about it (the state in files under `.git/epicflow/<epic>`, the worktrees
 * beside them, events appended to `events.jsonl`, the epic branch in the user's own
 * repository), proposes splits and keeps the index of runs.
 */
import { join } from 'node:path';
import { otelTracing } from '../../adapters/telemetry/otel.js';
import type { EpicflowConfig } from '../../core/config/types.js';
import { selectExecutors } from '../../core/roster/select.js';
import { describeError, EpicflowError } from '../../core/errors.js';
import {
  endRun,
  readRunIndex,
  RUN_INDEX_FILE,
  runSummary,
  startRun,
} from '../../core/epic/run-index.js';
import { epicBranchName, type Plan, type StoryRecord } from '../../core/model.js';
import { parsePlan } from '../../core/plan/index.js';
import type { CrashPoint, EngineEvent, RunClock, StateStore } from '../../engine/ports.js';
import { runEpic, type EpicRunResult } from '../../engine/run-epic.js';
import { writeSavedEpic } from '../../engine/status.js';
import { findingLines } from '../../core/doctor/index.js';
import { resolveExecutorEnvs } from '../../composition/epic.js';
import { checkLocal } from './local-doctor.js';
import { runEpicKind, type EpicKindHooks, type LocalEpicKind } from './epic-kind.js';
import { headingOf, type LocalJob, type LocalJobOptions } from './local-job.js';
import { applyApprovedRetro } from './retro-local.js';
import { proposeSplitsLocally } from './split-local.js';
import { epicOfPlan, type EpicFolders } from './local-epics.js';

interface LocalRunOptions extends LocalJobOptions {
  readonly file: string;
  readonly concurrency?: number | undefined;
  readonly failFast?: boolean | undefined;
  /** `--deferred`: one follow-up round over the findings the judge deferred. */
  readonly deferred?: boolean | undefined;
  readonly worktrees?: string | undefined;
  /** `--executors a,b`: this run's roster narrowed to those ids. */
  readonly executors?: readonly string[] | undefined;
}

/** `interrupt` (SIGINT/SIGTERM): stop launching, stop running stories, write the report. */
export interface LocalRunHooks extends EpicKindHooks {
  /** Test hook at named lifecycle points. */
  readonly onCheckpoint?: ((point: CrashPoint, story: string) => void) | undefined;
  /** Test hook: the waits before retries (default: the wall clock's). */
  readonly sleep?: RunClock['sleep'] | undefined;
  /** The plan's story ids and the records as the run starts (the live line on a terminal). */
  readonly onStart?: (stories: readonly string[], records: readonly StoryRecord[]) => void;
  /** Every story record as it is saved (the live line's cost). */
  readonly onRecord?: (record: StoryRecord) => void;
}

/** The state store, telling `onRecord` of every story record it writes. */
function observedStore(store: StateStore, onRecord: (record: StoryRecord) => void): StateStore {
  return {
    dir: store.dir,
    readStory: (id) => store.readStory(id),
    writeStory: async (record) => {
      await store.writeStory(record);
      onRecord(record);
    },
    listStories: () => store.listStories(),
    readJson: (name) => store.readJson(name),
    writeJson: (name, value) => store.writeJson(name, value),
    writeText: (name, text) => store.writeText(name, text),
  };
}

interface LocalEpic {
  readonly plan: Plan;
  readonly config: EpicflowConfig;
  readonly folders: EpicFolders;
  readonly configPaths: readonly string[];
  readonly executorEnv: Record<string, Record<string, string>>;
  readonly title: string | undefined;
  /** The plan file (absolute) and its text as read. */
  readonly planPath: string;
  readonly markdown: string;
  /** What the start's checks warn about (`warning: …` lines). */
  readonly warnings: readonly string[];
}

/** Every check that can fail for bad input, before anything is created. */
async function prepareLocalEpic(job: LocalJob, options: LocalRunOptions): Promise<LocalEpic> {
  const { repo, hooks } = job;
  const { path: planPath, text: markdown } = await job.input(options.file, 'plan');
  const loaded = await job.config(options.config, { deferEnv: true });
  const { planOptions, shownFile } = loaded;
  let config =
    options.executors === undefined
      ? loaded.config
      : selectExecutors(loaded.config, options.executors);
  const coders = config.executors.filter((e) => e.roles.includes('coder'));
  const parsed = parsePlan(markdown, planOptions);
  if (!parsed.ok) {
    throw new EpicflowError('plan', `invalid plan in ${options.file}`, {
      details: parsed.violations.map((v) => `${v.code}: ${v.message}`),
    });
  }
  const coderIds = new Set(coders.map((e) => e.id));
  const unknown = parsed.plan.stories.filter(
    (s) => s.executor !== undefined && !coderIds.has(s.executor),
  );
  if (unknown.length > 0) {
    throw new EpicflowError('plan', `invalid plan in ${options.file}`, {
      details: unknown.map(
        (s) =>
          `story ${s.id}: executor "${s.executor ?? ''}" is not a coder in ${shownFile} (coders: ${[...coderIds].join(', ')})`,
      ),
    });
  }
  const epic = epicOfPlan(planPath, options.epic);
  if (
    options.concurrency !== undefined &&
    (!Number.isInteger(options.concurrency) || options.concurrency < 1)
  ) {
    throw new EpicflowError(
      'usage',
      `--concurrency must be a whole number of at least 1, got ${options.concurrency}`,
    );
  }
  // Every problem of the environment at once, before anything is created (as `epicflow doctor`).
  const diagnosis = await checkLocal({
    repo,
    config,
    configFile: shownFile,
    env: hooks.env,
    detectionNotes: loaded.detectionNotes,
    concurrency: options.concurrency,
    pinned: parsed.plan.stories.flatMap((s) =>
      s.executor === undefined ? [] : [{ story: s.id, executor: s.executor }],
    ),
    epicBranch: epicBranchName(epic),
  });
  if (diagnosis.fatal) {
    throw new EpicflowError(
      'config',
      'epicflow cannot run here yet (epicflow doctor lists the same)',
      {
        details: findingLines(diagnosis.findings),
      },
    );
  }
  if (diagnosis.leftOut.length > 0) {
    config = {
      ...config,
      executors: config.executors.filter((e) => !diagnosis.leftOut.includes(e.id)),
    };
  }
  const executorEnv = resolveExecutorEnvs(config.executors, hooks.env);
  const epicRef = `refs/heads/${epicBranchName(epic)}`;
  if ((await repo.revParse(epicRef)) === null) {
    await repo.defaultBase(); // no commits yet → a clear error
    // Untracked files (the plan file itself, often) are not part of HEAD either way.
    const dirty = await repo.dirtyPaths(undefined, { untracked: false });
    if (dirty.length > 0) {
      throw new EpicflowError('usage', `the checkout in ${repo.root} has uncommitted changes`, {
        details: [
          `the epic branch starts from HEAD, so these would not be part of it: ${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? ', …' : ''}`,
          'commit or stash them first',
        ],
      });
    }
  }
  return {
    plan: parsed.plan,
    config,
    folders: job.folders(epic, options.worktrees),
    configPaths: planOptions.configPaths,
    executorEnv,
    title: headingOf(markdown),
    planPath,
    markdown,
    warnings: findingLines(diagnosis.findings),
  };
}

type LocalRunResult = EpicRunResult & { stateDir: string; events: string; runs: string };

/** `epicflow run`: the approved retro's fixes, the stories, the splits proposed, the run index. */
const runKind: LocalEpicKind<LocalRunOptions, LocalRunHooks, LocalEpic, LocalRunResult> = {
  prepare: prepareLocalEpic,
  async run({ job, hooks, store, untrusted, onEvent, open }, prepared, options) {
    let local = prepared;
    // The fixes people approved in the epic's retro.md come first; an edited plan is read again.
    const retro = await applyApprovedRetro({
      store,
      planPath: local.planPath,
      markdown: local.markdown,
      plan: local.plan,
      options: {
        allowWorkflowChanges: local.config.allowWorkflowChanges,
        configPaths: local.configPaths,
      },
      emit: (message) => hooks.onEvent({ at: new Date().toISOString(), kind: 'epic', message }),
    });
    if (retro.planChanged) local = await prepareLocalEpic(job, options);
    const { epic, state } = local.folders;
    // One trace per run, when an OpenTelemetry exporter endpoint is configured.
    const tracing = await otelTracing(hooks.env);
    // Spans not sent yet go at the close; an unreachable collector costs the export's timeout, not the run.
    if (tracing !== undefined) job.onClose(() => tracing.shutdown().catch(() => undefined));
    const trace = tracing?.root(`epic ${epic}`, {
      'epicflow.epic': epic,
      'epicflow.stories': local.plan.stories.length,
    });
    return inRunIndex(store, join(state, RUN_INDEX_FILE), onEvent, async (end) => {
      let outcome: string | undefined = 'the run ended early';
      try {
        const ctx = await open(local, {
          wiring: {
            state: hooks.onRecord === undefined ? store : observedStore(store, hooks.onRecord),
            onCheckpoint: hooks.onCheckpoint,
            sleep: hooks.sleep,
            // The user's state folder keeps them, beside the records.
            logs: store,
            trace,
          },
          beforeOpen: async (settings) => {
            await writeSavedEpic(store, {
              epic,
              epicBranch: settings.epicBranch,
              title: local.title ?? null,
              plan: local.plan,
            });
            hooks.onStart?.(
              local.plan.stories.map((s) => s.id),
              await store.listStories(),
            );
          },
        });
        let result: EpicRunResult;
        try {
          result = await runEpic(ctx, {
            concurrency: options.concurrency ?? local.config.concurrency,
            failFast: options.failFast ?? false,
            ...(options.deferred === true ? { deferred: true } : {}),
            title: local.title,
          });
          // A story that proved too big gets a split proposed; the plan changes only when approved.
          if (hooks.interrupt?.aborted !== true) {
            await proposeSplitsLocally({
              job,
              store,
              epic,
              epicBranch: ctx.settings.epicBranch,
              plan: local.plan,
              markdown: local.markdown,
              planFile: options.file,
              title: local.title,
              config: local.config,
              configPaths: local.configPaths,
              records: result.records,
              untrusted,
              emit: (message) => onEvent({ at: new Date().toISOString(), kind: 'epic', message }),
            });
          }
        } catch (e) {
          end({ outcome: 'error', summary: describeError(e).split('\n')[0] ?? '' });
          throw e;
        }
        const done = result.records.filter((r) => r.status === 'done').length;
        const failed = result.records.filter((r) => r.status === 'failed').length;
        trace?.set({ 'epicflow.done': done, 'epicflow.failed': failed });
        outcome =
          result.exitCode === 0 ? undefined : `${done} of ${local.plan.stories.length} done`;
        end({
          outcome: result.exitCode === 0 ? 'finished' : 'unfinished',
          summary: runSummary({
            done,
            failed,
            waiting: Math.max(0, local.plan.stories.length - done - failed),
          }),
          exitCode: result.exitCode,
        });
        return {
          ...result,
          stateDir: state,
          events: join(state, 'events.jsonl'),
          runs: join(state, RUN_INDEX_FILE),
        };
      } finally {
        trace?.end(outcome);
      }
    });
  },
};

/** How a run ended, for the index of runs. */
interface RunEnd {
  readonly outcome: 'finished' | 'unfinished' | 'error';
  readonly summary: string;
  readonly exitCode?: number;
}

/**
 * The index of runs around `work`: this run is added as running, and its end (as `work`
 * says it, else `the run ended early`) written and told as an event whatever happens.
 */
async function inRunIndex<T>(
  store: StateStore,
  indexPath: string,
  onEvent: (event: EngineEvent) => void,
  work: (end: (how: RunEnd) => void) => Promise<T>,
): Promise<T> {
  const started = startRun(
    readRunIndex(await store.readJson<unknown>(RUN_INDEX_FILE), indexPath),
    new Date().toISOString(),
  );
  await store.writeJson(RUN_INDEX_FILE, started.index);
  let ended: RunEnd = { outcome: 'error', summary: 'the run ended early' };
  try {
    return await work((how) => {
      ended = how;
    });
  } finally {
    const endedAt = new Date().toISOString();
    await store.writeJson(
      RUN_INDEX_FILE,
      endRun(readRunIndex(await store.readJson<unknown>(RUN_INDEX_FILE), indexPath), started.id, {
        endedAt,
        outcome: ended.outcome,
        summary: ended.summary,
      }),
    );
    onEvent({
      at: endedAt,
      kind: 'epic',
      message: `run ended (${started.id}): ${ended.summary}${ended.exitCode === undefined ? '' : ` · exit ${ended.exitCode}`}`,
      data: { runEnded: started.id, outcome: ended.outcome },
    });
  }
}

/** Runs an epic locally; bad input throws `EpicflowError` before anything is created. */
export function runLocalEpic(
  options: LocalRunOptions,
  hooks: LocalRunHooks,
): Promise<LocalRunResult> {
  return runEpicKind(runKind, options, hooks);
}
