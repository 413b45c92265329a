/**
 * One story in one Actions job (PRODUCT §1, §5, §9.2): the job checkout is the
 * story's worktree and the epic branch lives on GitHub. Everything the job
 * needs is read from GitHub by id (config, plan, the record written at
 * dispatch) and checked before anything is changed; then the engine's own
 * lifecycle runs (`runStory`), and the merged epic head is published with
 * optimistic concurrency: a plain (non-force) push; when another story got
 * there first, fetch, merge again, re-run the gates and push again.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CONFIG_PATH, GitHubStateStore, type GitHubRepo } from '../../adapters/github/index.js';
import { createExecutor } from '../../adapters/executors/index.js';
import { Git } from '../../adapters/git/index.js';
import { FileStateStore } from '../../adapters/state/file-store.js';
import { parseConfig } from '../../core/config/index.js';
import { resolveEnv } from '../../core/config/schema.js';
import type { EpicflowConfig } from '../../core/config/types.js';
import { describeError, EpicflowError, isEpicflowError } from '../../core/errors.js';
import type { GateRun } from '../../core/gates/index.js';
import {
  epicBranchName,
  storyBranchName,
  type Plan,
  type Story,
  type StoryRecord,
} from '../../core/model.js';
import { describeGitConfigRestore } from '../../core/perimeter/index.js';
import { persistableRosterState } from '../../core/roster/index.js';
import { loadPlan } from '../../orchestrator/load.js';
import type { EpicPorts, EpicSettings } from '../context.js';
import { integrate } from '../integrate.js';
import { gitPort, shellGates } from '../local.js';
import type { EngineEvent, GateRunner, WorktreePort } from '../ports.js';
import { openEpic } from '../run-epic.js';
import { StoryStop } from '../stop.js';
import { runStory } from '../story.js';
import type { RemoteGit } from './remote-git.js';
import { mergeRoster, ROSTER_DOC, startingRoster } from './roster-sync.js';

/** Pushes of the epic head before giving up (each after a fresh merge and gate run). */
export const MAX_PUBLISH_ATTEMPTS = 5;

export interface StoryJobInput {
  readonly epic: number;
  readonly story: string;
  readonly attempt: number;
  /** Path of the configuration on the default branch. */
  readonly configPath: string;
  readonly repo: GitHubRepo;
  readonly remote: RemoteGit;
  /** The job checkout (`GITHUB_WORKSPACE`): the story's worktree. */
  readonly workspace: string;
  /** A scratch folder of the job (`RUNNER_TEMP`). */
  readonly tempDir: string;
  /** The environment executors' `${VAR}` and children start from — without the GitHub token. */
  readonly env: NodeJS.ProcessEnv;
  readonly onEvent?: (event: EngineEvent) => void;
}

/** One gate (or setup) run, for the job summary. */
export interface GateLog {
  readonly command: string;
  readonly ok: boolean;
  readonly timedOut: boolean;
  /** The tree it ran in: the story's worktree or the merged epic tree. */
  readonly where: 'story' | 'epic';
  readonly output: string;
}

export interface StoryJobResult {
  /** The record as saved on GitHub. */
  readonly record: StoryRecord;
  readonly story: Story;
  readonly gates: readonly GateLog[];
  readonly events: readonly EngineEvent[];
  /** Pushes of the epic head (1 when nobody else merged meanwhile). */
  readonly pushes: number;
}

/** Everything read and checked before the job changes anything. */
export interface PreparedStory {
  readonly config: EpicflowConfig;
  readonly plan: Plan;
  readonly story: Story;
  readonly prior: StoryRecord;
  readonly store: GitHubStateStore;
}

/** Reads the config, the plan and the dispatch record by id; refuses clearly on any mismatch. */
export async function prepareStoryJob(input: StoryJobInput): Promise<PreparedStory> {
  const { repo, epic } = input;
  const text = await repo.readFile(undefined, input.configPath);
  if (text === null) {
    throw new EpicflowError(
      'config',
      `no epicflow config at ${input.configPath} on the default branch of ${repo.fullName}`,
      { details: ['add the file (see docs/config.md), or point the "config" input at it'] },
    );
  }
  const config = parseConfig(text, input.configPath);
  if (!config.executors.some((e) => e.roles.includes('coder'))) {
    throw new EpicflowError('config', `invalid config in ${input.configPath}`, {
      details: ['executors: list at least one executor with the coder role'],
    });
  }
  const issue = await readIssueBody(repo, epic);
  const planLoad = await loadPlan(repo, { number: epic, body: issue }, config);
  if (!planLoad.ok) {
    throw new EpicflowError('plan', `the plan of epic #${epic} is not valid`, {
      details: planLoad.violations.map((v) => `${v.code}: ${v.message}`),
    });
  }
  const { plan } = planLoad;
  const story = plan.stories.find((s) => s.id === input.story);
  if (story === undefined) {
    throw new EpicflowError('usage', `story "${input.story}" is not in the plan of epic #${epic}`, {
      details: [`stories in the plan: ${plan.stories.map((s) => s.id).join(', ') || 'none'}`],
    });
  }
  const store = new GitHubStateStore({ repo, epic: String(epic) });
  const read = await store.read(story.id);
  if (read === null) {
    throw new EpicflowError(
      'state',
      `epic #${epic} has no record of story ${story.id}: epicflow did not dispatch this job`,
      { details: ['stories are started by labelling the epic issue or commenting /resume'] },
    );
  }
  const prior = read.record;
  if (prior.attempt !== input.attempt) {
    throw new EpicflowError(
      'state',
      `story ${story.id} of epic #${epic} is at attempt ${prior.attempt}, not ${input.attempt}: this job is stale`,
    );
  }
  if (prior.planHash !== plan.hashes[story.id]) {
    throw new EpicflowError(
      'plan',
      `the plan entry of story ${story.id} changed since it was dispatched`,
      { details: ['epicflow restarts the story with the new entry; comment /resume on the epic'] },
    );
  }
  if (prior.status !== 'active') {
    throw new EpicflowError(
      'state',
      `story ${story.id} of epic #${epic} is ${prior.status}, not active: nothing to run`,
      { details: [`comment /retry ${story.id} on the epic to run it again`] },
    );
  }
  return { config, plan, story, prior, store };
}

async function readIssueBody(repo: GitHubRepo, epic: number): Promise<string> {
  try {
    const { data } = await repo.octokit.rest.issues.get({
      owner: repo.owner,
      repo: repo.repo,
      issue_number: epic,
    });
    return data.body ?? '';
  } catch (e) {
    const status = (e as { status?: number }).status;
    throw new EpicflowError(
      'github',
      status === 401
        ? `GitHub refused the token while reading epic #${epic} of ${repo.fullName}`
        : `GitHub: cannot read epic #${epic} of ${repo.fullName}${status === undefined ? '' : ` (HTTP ${status})`}`,
      {
        details:
          status === 401
            ? ['the github-token input is invalid or expired (installation tokens live one hour)']
            : [],
        cause: e,
      },
    );
  }
}

/** Gates that remember every run for the summary. */
function recordingGates(inner: GateRunner, log: GateLog[], workspace: string): GateRunner {
  return {
    async run(command, options) {
      const r: GateRun = await inner.run(command, options);
      log.push({
        command,
        ok: r.ok,
        timedOut: r.timedOut === true,
        where: options.cwd === workspace ? 'story' : 'epic',
        output: r.output,
      });
      return r;
    },
  };
}

/** Writes the outcome to GitHub (compare-and-swap), unless a newer attempt took the story over. */
async function saveRecord(store: GitHubStateStore, record: StoryRecord): Promise<StoryRecord> {
  return store.update(record.story, (current) =>
    current !== null && current.attempt > record.attempt ? current : record,
  );
}

/** Marks the dispatched record failed with a refusal's reason (same attempt only). */
export async function recordRefusal(
  store: GitHubStateStore,
  story: string,
  attempt: number,
  reason: string,
  now: Date,
): Promise<void> {
  const applies = (r: StoryRecord | null): r is StoryRecord =>
    r !== null && r.attempt === attempt && r.status === 'active';
  if (!applies((await store.read(story))?.record ?? null)) return;
  await store.update(story, (current) => {
    if (current === null) {
      throw new EpicflowError('state', `the record of story ${story} disappeared while writing it`);
    }
    // Someone moved the story on meanwhile (a retry, a cancel): leave their record alone.
    if (!applies(current)) return current;
    return { ...current, status: 'failed', reason, finishedAt: now.toISOString() };
  });
}

export async function runStoryJob(
  input: StoryJobInput,
  prepared: PreparedStory,
): Promise<StoryJobResult> {
  const { config, plan, story, prior, store } = prepared;
  const { remote, workspace } = input;
  const epic = String(input.epic);
  const epicBranch = epicBranchName(epic);
  const branch = storyBranchName(epic, story.id);
  const events: EngineEvent[] = [];
  const gates: GateLog[] = [];

  const removed = await remote.scrubCredentials();
  const heads = await remote.fetch([epicBranch, branch]);
  const remoteEpic = heads.get(epicBranch);
  if (remoteEpic === undefined) {
    throw new EpicflowError('github', `the epic branch ${epicBranch} does not exist on GitHub`, {
      details: ['epicflow creates it when the epic starts; comment /resume on the epic'],
    });
  }
  const repo = await Git.open(workspace, {
    name: input.repo.botLogin,
    email: `${input.repo.botLogin.replace(/\[bot\]$/, '')}@users.noreply.github.com`,
  });
  // The checkout's own branch is left alone: the job works on detached and local refs.
  await repo.read('cannot detach the job checkout', ['checkout', '--quiet', '--detach']);
  await repo.read(`cannot set ${epicBranch}`, [
    'update-ref',
    `refs/heads/${epicBranch}`,
    remoteEpic,
  ]);
  const remoteStory = heads.get(branch);
  // A record marked `restart` (its plan entry changed after the story had started) must
  // not build on the old work: the story starts from the epic head, and the new branch
  // replaces the old one on GitHub only by a push with a lease on the old head.
  const restart = prior.restart === 'fresh';
  if (remoteStory !== undefined && !restart) {
    await repo.read(`cannot set ${branch}`, ['update-ref', `refs/heads/${branch}`, remoteStory]);
  } else if ((await repo.revParse(`refs/heads/${branch}`)) !== null) {
    await repo.deleteBranch(branch);
  }

  const scratch = new FileStateStore(join(input.tempDir, 'epicflow', epic, 'state'));
  await scratch.writeStory(prior);
  const shared = await store.readJson<unknown>(ROSTER_DOC);
  await scratch.writeJson('roster.json', startingRoster(shared?.value ?? null));

  const base = gitPort(repo);
  const ports: EpicPorts = {
    // The job checkout is the story's worktree (tools a setup step installed are there).
    git: {
      ...base,
      addWorktree: async (_path, name): Promise<WorktreePort> => {
        await repo.read(`cannot check out ${name}`, ['checkout', '--quiet', '--force', name]);
        return repo.worktree(workspace) as WorktreePort;
      },
    },
    state: scratch,
    gates: recordingGates(shellGates(input.env), gates, workspace),
    executors: (e) => createExecutor(e, { sourceEnv: input.env, prices: config.prices }),
    clock: { now: () => new Date() },
    events: {
      emit: (event) => {
        events.push(event);
        input.onEvent?.(event);
      },
    },
  };
  const executorEnv: Record<string, Record<string, string>> = {};
  for (const e of config.executors) {
    executorEnv[e.id] = resolveEnv(e.env, input.env, `executor "${e.id}"`);
  }
  let houseRules: string | undefined;
  try {
    houseRules = await readFile(join(workspace, 'CONTRIBUTING.md'), 'utf8');
  } catch {
    houseRules = undefined; // no house rules: fine
  }
  const settings: EpicSettings = {
    epic,
    epicBranch,
    plan,
    config,
    configPaths: [...new Set([CONFIG_PATH, input.configPath.replace(/^\.\//, '')])],
    worktreesDir: join(input.tempDir, 'epicflow', epic, 'worktrees'),
    homesDir: join(input.tempDir, 'epicflow', epic, 'homes'),
    executorEnv,
    houseRules,
  };
  const ctx = await openEpic(settings, ports);
  if (removed.length > 0) {
    ctx.emit('epic', `removed credentials from the checkout's git config: ${removed.join(', ')}`);
  }
  if (restart && remoteStory !== undefined) {
    ctx.emit(
      'story',
      `plan entry changed since ${branch} was created: starting over from the epic head`,
      story.id,
    );
  }
  const preferred =
    (restart ? undefined : prior.executors[prior.executors.length - 1]) ?? story.executor;
  const executor = await ctx.roster.lease(story.id, preferred);
  let record: StoryRecord;
  let pushes = 0;
  if (executor === null) {
    const exhausted = ctx.roster.exhausted();
    record = {
      ...prior,
      status: 'waiting',
      reason: `not started: ${exhausted?.message ?? 'no executor can take the coder role'}`,
    };
  } else {
    record = await runStory(ctx, { story, executor, prior });
    await ctx.roster.release(story.id);
    // Nothing is lost: the story branch goes to GitHub whatever the outcome.
    const storyHead = await repo.revParse(`refs/heads/${branch}`);
    // Whether GitHub now holds this run's story branch (or none at all).
    let onGitHub = storyHead === (remoteStory ?? null);
    if (storyHead !== null && storyHead !== remoteStory) {
      const pushed = await remote.push(storyHead, branch, remoteStory ?? null);
      onGitHub = pushed.ok;
      if (!pushed.ok) {
        ctx.emit('story', `could not push ${branch}: ${pushed.detail}`, story.id);
        record = {
          ...record,
          notes: [...record.notes, `${branch} was not pushed: ${pushed.reason}`],
        };
      }
    }
    // The engine's records drop the marker once it restarted; GitHub's record keeps it
    // until the old branch is replaced there, or the next job would resume the old work.
    if (restart && !onGitHub) record = { ...record, restart: 'fresh' };
    if (record.status === 'done') {
      const published = await publish(ctx, remote, { story, branch, chain: record.executors });
      pushes = published.pushes;
      record = published.ok
        ? { ...record, mergeCommit: published.sha }
        : (() => {
            const { mergeCommit: _m, ...rest } = record;
            return { ...rest, status: 'failed' as const, reason: published.reason };
          })();
    }
  }
  const saved = await saveRecord(store, record);
  await store.updateJson(ROSTER_DOC, (current: unknown) =>
    mergeRoster(current, persistableRosterState(ctx.roster.snapshot)),
  );
  return { record: saved, story, gates, events, pushes };
}

type Published =
  | { readonly ok: true; readonly sha: string; readonly pushes: number }
  | { readonly ok: false; readonly reason: string; readonly pushes: number };

/**
 * Publishes the merged epic head. The push is the commit point: a rejected
 * push changed nothing on GitHub, so the story merges again on the new head
 * (the engine's `integrate`: merge, gates, compare-and-swap) and tries again.
 */
async function publish(
  ctx: Awaited<ReturnType<typeof openEpic>>,
  remote: RemoteGit,
  input: { story: Story; branch: string; chain: readonly string[] },
): Promise<Published> {
  const { epicBranch } = ctx.settings;
  for (let pushes = 1; ; pushes++) {
    const pushed = await remote.push(ctx.epicHead, epicBranch);
    if (pushed.ok) {
      if (pushes > 1) ctx.emit('story', `published after ${pushes} pushes`, input.story.id);
      return { ok: true, sha: ctx.epicHead, pushes };
    }
    if (pushed.reason === 'protected') {
      return {
        ok: false,
        pushes,
        reason: `GitHub refused the push to ${epicBranch}: the branch is protected; allow the epicflow App (or the token's user) as a bypass actor in the branch's ruleset, or leave epic branches unprotected (${oneLine(pushed.detail)})`,
      };
    }
    if (pushed.reason !== 'stale') {
      return {
        ok: false,
        pushes,
        reason: `GitHub refused the push to ${epicBranch} (${pushed.reason === 'auth' ? 'token rejected or without Contents: write' : 'push failed'}): ${oneLine(pushed.detail)}`,
      };
    }
    if (pushes >= MAX_PUBLISH_ATTEMPTS) {
      return {
        ok: false,
        pushes,
        reason: `${epicBranch} kept moving: ${MAX_PUBLISH_ATTEMPTS} pushes were rejected; comment /retry ${input.story.id}`,
      };
    }
    ctx.emit('story', `${epicBranch} moved on GitHub; merging again`, input.story.id);
    const heads = await remote.fetch([epicBranch]);
    const head = heads.get(epicBranch);
    if (head === undefined) {
      return { ok: false, pushes, reason: `${epicBranch} was deleted on GitHub while merging` };
    }
    const { git } = ctx.ports;
    if (!(await git.updateRef(`refs/heads/${epicBranch}`, head, ctx.epicHead))) {
      return {
        ok: false,
        pushes,
        reason: `${epicBranch} changed in the job checkout while merging`,
      };
    }
    ctx.epicHead = head;
    // The merge runs the gates on code the agent wrote: git's configuration is put
    // back before the next push carries the token (see guardGitConfig in story.ts).
    const snapshot = await ctx.epicTree.snapshotGitConfig();
    try {
      await integrate(ctx, input);
    } catch (e) {
      if (e instanceof StoryStop) return { ok: false, pushes, reason: e.reason };
      if (isEpicflowError(e))
        return { ok: false, pushes, reason: describeError(e).split('\n').join(' | ') };
      throw e;
    } finally {
      const restored = await ctx.epicTree.restoreGitConfig(snapshot);
      if (restored.length > 0) {
        ctx.emit('story', describeGitConfigRestore(restored, 'the merge retry'), input.story.id);
      }
    }
  }
}

function oneLine(text: string): string {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join(' | ');
}
