/**
 * The local composition root: `epicflow run` on one machine. Reads the plan
 * and config and checks everything before creating anything; then the epic is
 * wired (`composeEpic`) with what is local about it: the state in files under
 * `.git/epicflow/<epic>`, the worktrees beside them, events appended to
 * `events.jsonl`, and the epic branch in the user's own repository.
 */
import { basename, extname, join, resolve } from 'node:path';
import type { Git } from '../adapters/git/index.js';
import { localUntrusted } from './local-untrusted.js';
import type { AgentUserFlag } from '../core/agent-user.js';
import { FileStateStore } from '../adapters/state/file-store.js';
import { otelTracing } from '../adapters/telemetry/otel.js';
import type { EpicflowConfig } from '../core/config/types.js';
import { EpicflowError } from '../core/errors.js';
import { epicBranchName, type Plan, type StoryRecord } from '../core/model.js';
import { parsePlan } from '../core/plan/index.js';
import type { CrashPoint, EngineEvent, RunClock, StateStore } from '../engine/ports.js';
import { openEpic, runEpic, type EpicRunResult } from '../engine/run-epic.js';
import { findingLines } from '../core/doctor/index.js';
import { composeEpic, resolveExecutorEnvs } from './epic.js';
import { checkLocal } from './local-doctor.js';
import { loadLocalConfig, openRepo, readInputFile } from './local-config.js';
import { applyApprovedRetro } from './retro-local.js';
import { checkEpicId } from './local-epics.js';

interface LocalRunOptions {
  readonly file: string;
  readonly repo?: string | undefined;
  readonly config?: string | undefined;
  readonly epic?: string | undefined;
  readonly concurrency?: number | undefined;
  readonly failFast?: boolean | undefined;
  /** `--deferred`: one follow-up round over the findings the judge deferred. */
  readonly deferred?: boolean | undefined;
  readonly worktrees?: string | undefined;
  /** Who untrusted code runs as (see core/agent-user.ts). */
  readonly agentUser?: AgentUserFlag;
}

export interface LocalRunHooks {
  /** Where relative paths are resolved. */
  readonly cwd: string;
  /** The environment executors' `${VAR}` come from and children start from. */
  readonly env: NodeJS.ProcessEnv;
  readonly onEvent: (event: EngineEvent) => void;
  /** Aborted on SIGINT/SIGTERM: stop launching, stop running stories, write the report. */
  readonly interrupt?: AbortSignal | undefined;
  /** Test hook at named lifecycle points. */
  readonly onCheckpoint?: ((point: CrashPoint, story: string) => void) | undefined;
  /** Test hook: the waits before retries (default: the wall clock's). */
  readonly sleep?: RunClock['sleep'] | undefined;
  /** The start's checks found something to warn about (one line each). */
  readonly onWarning?: ((line: string) => void) | undefined;
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

/** The plan's first markdown heading, for the report title. */
function planTitle(markdown: string): string | undefined {
  const m = /^#\s+(.+)$/m.exec(markdown);
  return m?.[1]?.trim();
}

interface LocalEpic {
  readonly repo: Git;
  readonly plan: Plan;
  readonly config: EpicflowConfig;
  readonly epic: string;
  readonly stateDir: string;
  readonly worktreesDir: string;
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
async function prepareLocalEpic(
  options: LocalRunOptions,
  hooks: LocalRunHooks,
): Promise<LocalEpic> {
  const repoDir = resolve(hooks.cwd, options.repo ?? '.');
  const repo = await openRepo(repoDir);
  const planPath = resolve(hooks.cwd, options.file);
  const markdown = await readInputFile(planPath, options.file, 'plan');
  const loaded = await loadLocalConfig({
    root: repo.root,
    config: options.config,
    cwd: hooks.cwd,
    env: hooks.env,
    deferEnv: true,
  });
  const { planOptions, shownFile } = loaded;
  let config = loaded.config;
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
  const epic = options.epic ?? basename(planPath, extname(planPath));
  checkEpicId(
    epic,
    options.epic === undefined ? `from the plan file name ${basename(planPath)}` : '--epic',
  );
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
    const dirty = (
      await repo.read(`cannot read the status of ${repo.root}`, [
        'status',
        '--porcelain=v1',
        '-z',
        '--untracked-files=no',
      ])
    )
      .split('\0')
      .filter((f) => f.length > 3)
      .map((f) => f.slice(3));
    if (dirty.length > 0) {
      throw new EpicflowError('usage', `the checkout in ${repo.root} has uncommitted changes`, {
        details: [
          `the epic branch starts from HEAD, so these would not be part of it: ${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? ', …' : ''}`,
          'commit or stash them first',
        ],
      });
    }
  }
  const stateDir = join(repo.gitDir, 'epicflow', epic);
  const worktreesDir =
    options.worktrees === undefined
      ? join(repo.gitDir, 'epicflow', 'worktrees', epic)
      : resolve(hooks.cwd, options.worktrees);
  return {
    repo,
    plan: parsed.plan,
    config,
    epic,
    stateDir,
    worktreesDir,
    configPaths: planOptions.configPaths,
    executorEnv,
    title: planTitle(markdown),
    planPath,
    markdown,
    warnings: findingLines(diagnosis.findings),
  };
}

/** Runs an epic locally; bad input throws `EpicflowError` before anything is created. */
export async function runLocalEpic(
  options: LocalRunOptions,
  hooks: LocalRunHooks,
): Promise<EpicRunResult & { stateDir: string; events: string }> {
  let local = await prepareLocalEpic(options, hooks);
  for (const line of local.warnings) hooks.onWarning?.(line);
  const untrusted = await localUntrusted(
    options.agentUser,
    {
      // epicflow's own folders: its state (homes among it) and the worktrees.
      roots: [join(local.repo.gitDir, 'epicflow'), local.worktreesDir],
      home: join(local.stateDir, 'agent-home'),
    },
    hooks,
  );
  const store = new FileStateStore(local.stateDir);
  const unlock = await store.lock();
  try {
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
    if (retro.planChanged) local = await prepareLocalEpic(options, hooks);
  } catch (e) {
    await unlock();
    throw e;
  }
  // Events are appended in order, without holding up the run.
  let appending: Promise<void> = Promise.resolve();
  // One trace per run, when an OpenTelemetry exporter endpoint is configured.
  const tracing = otelTracing(hooks.env ?? process.env);
  const trace = tracing?.root(`epic ${local.epic}`, {
    'epicflow.epic': local.epic,
    'epicflow.stories': local.plan.stories.length,
  });
  let outcome: string | undefined = 'the run ended early';
  try {
    const { ports, settings } = await composeEpic({
      repo: local.repo,
      epic: local.epic,
      plan: local.plan,
      config: local.config,
      configPaths: local.configPaths,
      executorEnv: local.executorEnv,
      env: hooks.env,
      untrusted,
      state: hooks.onRecord === undefined ? store : observedStore(store, hooks.onRecord),
      folders: { worktrees: local.worktreesDir, homes: join(local.stateDir, 'homes') },
      onEvent: (event) => {
        hooks.onEvent(event);
        appending = appending.then(() => store.appendEvent(event)).catch(() => undefined);
      },
      onCheckpoint: hooks.onCheckpoint,
      sleep: hooks.sleep,
      // The user's state folder keeps them, beside the records.
      logs: store,
      trace,
    });
    await store.writeJson('epic.json', {
      epic: local.epic,
      epicBranch: settings.epicBranch,
      title: local.title ?? null,
      plan: local.plan,
    });
    hooks.onStart?.(
      local.plan.stories.map((s) => s.id),
      await store.listStories(),
    );
    const ctx = await openEpic(settings, ports);
    const onAbort = (): void => ctx.interrupt.abort();
    if (hooks.interrupt?.aborted === true) onAbort();
    hooks.interrupt?.addEventListener('abort', onAbort, { once: true });
    try {
      const result = await runEpic(ctx, {
        concurrency: options.concurrency ?? local.config.concurrency,
        failFast: options.failFast ?? false,
        ...(options.deferred === true ? { deferred: true } : {}),
        title: local.title,
      });
      const done = result.records.filter((r) => r.status === 'done').length;
      trace?.set({
        'epicflow.done': done,
        'epicflow.failed': result.records.filter((r) => r.status === 'failed').length,
      });
      outcome = result.exitCode === 0 ? undefined : `${done} of ${local.plan.stories.length} done`;
      return { ...result, stateDir: local.stateDir, events: join(local.stateDir, 'events.jsonl') };
    } finally {
      hooks.interrupt?.removeEventListener('abort', onAbort);
    }
  } finally {
    trace?.end(outcome);
    // Spans not sent yet go now; an unreachable collector costs the export's timeout, not the run.
    await tracing?.shutdown().catch(() => undefined);
    await appending;
    await unlock();
  }
}
