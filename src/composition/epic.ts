/**
 * The one place an epic's ports and settings are wired to the adapters, for
 * every entry that runs stories: the local run (`jobs/local/local.ts`) and the
 * Actions story job (`jobs/github/story-job.ts`). What differs between them is
 * passed in — where the state lives, where the folders are, what becomes of the
 * events, and how the repository's port or the gates are adapted (the job
 * checkout is the story's worktree; the job records every gate run for its
 * summary) — and everything else is built the same way here.
 */
import { probeHealth } from '../adapters/health/probe.js';
import { createExecutor, type ExecutorDeps } from '../adapters/executors/index.js';
import type { Git } from '../adapters/git/git.js';
import { reclaimingTrees } from './reclaiming-trees.js';
import { setupCacheDir } from '../adapters/state/setup-cache.js';
import { gitPort } from '../adapters/git/port.js';
import { shellGates } from '../adapters/process/shell-gates.js';
import type { Untrusted } from '../adapters/process/untrusted.js';
import { resolveEnv } from '../core/config/schema.js';
import type { EpicflowConfig, ExecutorConfig } from '../core/config/types.js';
import { epicBranchName, type Plan } from '../core/model.js';
import type { EpicPorts, EpicSettings } from '../engine/context.js';
import { setTimeout as delay } from 'node:timers/promises';
import type {
  CrashPoint,
  EngineEvent,
  ExecutorLookup,
  GateRunner,
  GitPort,
  RunClock,
  StateStore,
} from '../engine/ports.js';

/** The repository's house rules, shown to every coder, judge and lander. */
const HOUSE_RULES = 'CONTRIBUTING.md';

/** The wall clock; a wait ends early, without an error, when its signal is aborted. */
const systemClock: RunClock = {
  now: () => new Date(),
  sleep: async (ms, signal) => {
    try {
      await delay(ms, undefined, { signal });
    } catch {
      // Aborted: the caller looks at the signal next.
    }
  },
};

/**
 * Each executor's environment with its `${VAR}` references resolved from `env`:
 * a missing variable is a `config` error naming the executor.
 */
export function resolveExecutorEnvs(
  executors: readonly ExecutorConfig[],
  env: NodeJS.ProcessEnv,
): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const e of executors) out[e.id] = resolveEnv(e.env, env, `executor "${e.id}"`);
  return out;
}

/** The executor port of each configured executor (by harness), running where `untrusted` says. */
export function executorLookup(input: {
  readonly config: EpicflowConfig;
  /** The environment executors' children start from. */
  readonly env: NodeJS.ProcessEnv;
  /** Unset: as epicflow's own user. */
  readonly untrusted?: Untrusted | undefined;
  /** How the CLIs are run (binaries, model API base URLs): test and planner hooks. */
  readonly deps?: Omit<ExecutorDeps, 'sourceEnv' | 'prices' | 'untrusted'> | undefined;
}): ExecutorLookup {
  const { config, env, untrusted, deps } = input;
  return (e) =>
    createExecutor(e, {
      ...(deps ?? {}),
      sourceEnv: env,
      prices: config.prices,
      ...(untrusted === undefined ? {} : { untrusted }),
    });
}

interface EpicWiring {
  /** The repository: the user's checkout locally, the job checkout in Actions. */
  readonly repo: Git;
  readonly epic: string;
  readonly plan: Plan;
  readonly config: EpicflowConfig;
  /** Config files stories may never change (`planOptionsFor(...).configPaths`). */
  readonly configPaths: readonly string[];
  /** Resolved environment per executor id (`resolveExecutorEnvs`), checked by the caller early. */
  readonly executorEnv: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** The environment executors and gates start from: never a GitHub token. */
  readonly env: NodeJS.ProcessEnv;
  /** Where the agent, setup, gates and the judge's tools run. */
  readonly untrusted?: Untrusted | undefined;
  /** Where the engine keeps its records of the epic. */
  readonly state: StateStore;
  /** The key kept judge and verifier answers are sealed with, out of the agent's reach. */
  readonly answerKey: Uint8Array;
  readonly folders: {
    /** One worktree per story, and the epic's integration tree. */
    readonly worktrees: string;
    /** The executors' isolated homes. */
    readonly homes: string;
    /** The setup cache (hidden from every step, as the git folder and the job's folder are). */
    readonly setupCache: string;
  };
  /** Every engine event, in order. */
  readonly onEvent: (event: EngineEvent) => void;
  /** Where each story's logs are kept (`EpicPorts.logs`); none: not kept. */
  readonly logs?: EpicPorts['logs'];
  /** The run's span (`EpicPorts.trace`); none: not traced. */
  readonly trace?: EpicPorts['trace'];
  /** Where other jobs merge into the epic branch too (`EpicPorts.upstream`). */
  readonly upstream?: EpicPorts['upstream'];
  /** Test hook at named lifecycle points. */
  readonly onCheckpoint?: ((point: CrashPoint, story: string) => void) | undefined;
  /** Test hook: the waits before retries (default: the wall clock's). */
  readonly sleep?: RunClock['sleep'] | undefined;
  /** What an entry changes of the standard ports. */
  readonly adapt?: {
    readonly git?: (port: GitPort) => GitPort;
    readonly gates?: (gates: GateRunner) => GateRunner;
  };
}

/** The engine's ports and settings of one epic. */
export async function composeEpic(
  wiring: EpicWiring,
): Promise<{ ports: EpicPorts; settings: EpicSettings }> {
  const { repo, config, env, untrusted, adapt } = wiring;
  // Its trees go to the agent's user and back around every step.
  if (untrusted?.isolated === true) repo.handsTreesOver();
  const git = reclaimingTrees(gitPort(repo, untrusted?.writer), untrusted);
  const gates = shellGates(env, untrusted);
  const ports: EpicPorts = {
    git: adapt?.git === undefined ? git : adapt.git(git),
    state: wiring.state,
    gates: adapt?.gates === undefined ? gates : adapt.gates(gates),
    executors: executorLookup({ config, env, untrusted }),
    clock: wiring.sleep === undefined ? systemClock : { now: systemClock.now, sleep: wiring.sleep },
    events: { emit: wiring.onEvent },
    health: probeHealth,
    ...(wiring.logs === undefined ? {} : { logs: wiring.logs }),
    ...(wiring.trace === undefined ? {} : { trace: wiring.trace }),
    ...(wiring.upstream === undefined ? {} : { upstream: wiring.upstream }),
    setupCache: setupCacheDir(wiring.folders.setupCache),
  };
  const settings: EpicSettings = {
    epic: wiring.epic,
    epicBranch: epicBranchName(wiring.epic),
    plan: wiring.plan,
    config,
    configPaths: wiring.configPaths,
    worktreesDir: wiring.folders.worktrees,
    homesDir: wiring.folders.homes,
    executorEnv: wiring.executorEnv,
    houseRules: await houseRules(repo),
    answerKey: wiring.answerKey,
    // The agent cannot write the state: it runs as another user, or in the sandbox that hides it.
    stateGuarded: untrusted?.isolated === true || untrusted?.walled === true,
    ...(wiring.onCheckpoint === undefined ? {} : { onCheckpoint: wiring.onCheckpoint }),
  };
  return { ports, settings };
}

/**
 * CONTRIBUTING.md of the commit the run starts from (the checkout's HEAD), given to every
 * prompt as house rules; none is fine. Read from git's objects, and only when it is a
 * file there: a symbolic link (or one in a folder on the way) is never followed, so no
 * file outside the repository reaches a prompt, and nothing a tree holds now is read.
 */
async function houseRules(repo: Git): Promise<string | undefined> {
  const head = await repo.revParse('HEAD');
  if (head === null) return undefined;
  const listed = await repo.read(`cannot list ${HOUSE_RULES} in ${head}`, [
    'ls-tree',
    '-z',
    '--full-tree',
    head,
    '--',
    HOUSE_RULES,
  ]);
  // "<mode> SP <type> SP <object> TAB <path>" NUL; a link's mode is 120000.
  const [meta = '', path] = (listed.split('\0')[0] ?? '').split('\t');
  const [mode = '', type = '', object = ''] = meta.split(' ');
  if (path !== HOUSE_RULES || type !== 'blob' || (mode !== '100644' && mode !== '100755')) {
    return undefined;
  }
  const blob = (await repo.readBlobs([object])).get(object);
  return blob === undefined ? undefined : new TextDecoder().decode(blob);
}
