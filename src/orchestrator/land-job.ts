/**
 * One landing in one Actions job (`land-<n>`, the story workflow with `story: land-<n>`;
 * docs/landing.md): the default branch is merged into the epic branch by the engine's
 * `bringIntoEpic` (gates on the merged tree, a coder for conflicts or red gates, at
 * most three checked rounds, the land perimeter), in trees of the job's own, with the
 * isolation a story job has. The landed merge goes to GitHub by a push with a lease
 * on the epic head the landing started from: never a force. When a story merged
 * meanwhile, the landing is made again on the new head (a few times), else held.
 * A landing that fails pushes nothing and holds the epic, naming the paths.
 */
import { join } from 'node:path';
import { GitHubStateStore, type EpicView, type GitHubRepo } from '../adapters/github/index.js';
import { Git } from '../adapters/git/index.js';
import type { RemoteGit } from '../adapters/git/remote-git.js';
import type { Untrusted } from '../adapters/process/untrusted.js';
import { FileStateStore } from '../adapters/state/file-store.js';
import { composeEpic, resolveExecutorEnvs } from '../composition/epic.js';
import { landGitPort } from '../adapters/git/port.js';
import { reclaimingLandTrees } from '../composition/reclaiming-trees.js';
import { parseConfig } from '../core/config/index.js';
import type { EpicDoc } from '../core/epic/epic-doc.js';
import { jobStaleness, ownsRecord, type LandJobRef } from '../core/epic/index.js';
import { githubLandNextStep, LAND_DOC, landHalt } from '../core/epic/landing.js';
import { botCommitIdentity, describePushRefusal } from '../core/epic/push.js';
import { EpicflowError } from '../core/errors.js';
import { readLandLog, withLand, type LandRecord } from '../core/land/index.js';
import { epicBranchName } from '../core/model.js';
import { planOptionsFor } from '../core/plan/index.js';
import { bringIntoEpic } from '../engine/land.js';
import type { EngineEvent } from '../engine/ports.js';
import { openEpic } from '../engine/run-epic.js';
import { EPIC_DOC, updateEpicDoc } from './epic-doc.js';
import { readLanding } from './landing.js';
import { loadPlan, readView } from './load.js';

/** Landings made again after the epic branch moved on GitHub, before the epic is held. */
const MAX_LAND_PUSHES = 3;

export interface LandJobInput {
  readonly epic: number;
  /** `land-<n>`, as dispatched. */
  readonly job: string;
  readonly configPath: string;
  readonly defaultBranch?: string | undefined;
  readonly repo: GitHubRepo;
  readonly remote: RemoteGit;
  /** The job checkout (`GITHUB_WORKSPACE`). */
  readonly workspace: string;
  readonly tempDir: string;
  /** Without the GitHub token. */
  readonly env: NodeJS.ProcessEnv;
  readonly untrusted?: Untrusted | undefined;
  readonly onEvent?: (event: EngineEvent) => void;
}

interface LandJobResult {
  /** The record as written on GitHub. */
  readonly record: LandRecord;
  readonly events: readonly EngineEvent[];
}

/** The landing's record, read and checked: this job is the one epicflow dispatched. */
async function runningRecord(store: GitHubStateStore, input: LandJobInput): Promise<LandRecord> {
  const { log } = await readLanding(store);
  const record = log.lands.find((l) => l.job === input.job);
  const job: LandJobRef = { kind: 'land', epic: input.epic, job: input.job, attempt: 1 };
  const stale = jobStaleness(job, { kind: 'land', record });
  if (stale !== undefined) throw stale;
  if (record === undefined) {
    throw new EpicflowError('internal', `${input.job} passed the staleness check without a record`);
  }
  return record;
}

/** Writes the landing's final record (compare-and-swap, retried on the log as it is). */
async function saveRecord(store: GitHubStateStore, record: LandRecord): Promise<void> {
  await store.updateJson<unknown>(LAND_DOC, (current) =>
    withLand(readLandLog(current, store.docPath(LAND_DOC)), record),
  );
}

/** Records a landing that could not even start (the job refused), and holds the epic. */
export async function recordLandRefusal(
  repo: GitHubRepo,
  input: { epic: number; job: string },
  reason: string,
): Promise<void> {
  const store = new GitHubStateStore({ repo, epic: String(input.epic) });
  const { log } = await readLanding(store);
  const record = log.lands.find((l) => l.job === input.job);
  const job: LandJobRef = { kind: 'land', epic: input.epic, job: input.job, attempt: 1 };
  if (record === undefined || !ownsRecord(job, record)) return;
  const failed: LandRecord = {
    ...record,
    outcome: 'not-landed',
    finishedAt: new Date().toISOString(),
    reason,
    nextStep: githubLandNextStep(record),
  };
  await saveRecord(store, failed);
  await hold(store, failed);
}

async function hold(store: GitHubStateStore, record: LandRecord): Promise<void> {
  const doc = await store.readJson<EpicDoc>(EPIC_DOC);
  await updateEpicDoc(
    store,
    { value: doc?.value ?? {}, sha: doc?.sha ?? null },
    { halt: landHalt(record) },
  );
}

export async function runLandJob(input: LandJobInput): Promise<LandJobResult> {
  const { repo, remote, epic } = input;
  const events: EngineEvent[] = [];
  const defaultBranch = input.defaultBranch ?? (await repo.defaultBranch());
  const store = new GitHubStateStore({ repo, epic: String(epic), defaultBranch });
  const view: EpicView = await readView(repo, epic, defaultBranch, input.configPath);
  if (view.configText === null) {
    throw new EpicflowError(
      'config',
      `no epicflow config at ${input.configPath} on the default branch of ${repo.fullName}`,
    );
  }
  const config = parseConfig(view.configText, input.configPath);
  if (view.issue === undefined) {
    throw new EpicflowError('github', `GitHub: epic #${epic} of ${repo.fullName} does not exist`);
  }
  const planLoad = await loadPlan(repo, { number: epic, body: view.issue.body }, config, {
    subIssues: view.issue.subIssues,
    configFile: input.configPath,
  });
  if (!planLoad.ok) {
    throw new EpicflowError('plan', `the plan of epic #${epic} is not valid`, {
      details: planLoad.violations.map((v) => v.message),
    });
  }
  const started = await runningRecord(store, input);
  const epicBranch = epicBranchName(String(epic));

  // Before anything of the repository runs: no credential may be in reach of the coder.
  const removed = await input.remote.scrubCredentials();
  const git = await Git.open(input.workspace, botCommitIdentity(repo.botLogin));
  await git.read('cannot detach the job checkout', ['checkout', '--quiet', '--detach']);
  const scratch = new FileStateStore(join(input.tempDir, 'epicflow', String(epic), 'state'));
  const { ports, settings } = await composeEpic({
    repo: git,
    epic: String(epic),
    plan: planLoad.plan,
    config,
    configPaths: planOptionsFor(config, input.configPath).configPaths,
    executorEnv: resolveExecutorEnvs(config.executors, input.env),
    env: input.env,
    untrusted: input.untrusted,
    state: scratch,
    folders: {
      worktrees: join(input.tempDir, 'epicflow', String(epic), 'worktrees'),
      homes: join(input.tempDir, 'epicflow', String(epic), 'homes'),
    },
    onEvent: (event) => {
      events.push(event);
      input.onEvent?.(event);
    },
  });

  let record: LandRecord = started;
  for (let push = 1; ; push++) {
    const heads = await remote.fetch([epicBranch, defaultBranch]);
    const epicHead = heads.get(epicBranch);
    const intoHead = heads.get(defaultBranch);
    if (epicHead === undefined || intoHead === undefined) {
      record = failed(
        record,
        `${epicHead === undefined ? epicBranch : defaultBranch} does not exist on GitHub`,
      );
      break;
    }
    for (const [branch, sha] of [
      [epicBranch, epicHead],
      [defaultBranch, intoHead],
    ] as const) {
      await git.read(`cannot set ${branch}`, ['update-ref', `refs/heads/${branch}`, sha]);
    }
    const ctx = await openEpic(settings, ports);
    if (removed.length > 0 && push === 1) {
      ctx.emit('epic', `removed credentials from the checkout's git config: ${removed.join(', ')}`);
    }
    // The head the dispatch named is landed (a newer one is the next landing's).
    const branchHead = (await git.isAncestor(started.intoHeadBefore, intoHead))
      ? started.intoHeadBefore
      : intoHead;
    record = { ...record, epicHeadBefore: epicHead, intoHeadBefore: branchHead };
    const brought = await bringIntoEpic(
      ctx,
      reclaimingLandTrees(landGitPort(git), input.untrusted),
      {
        job: input.job,
        branch: defaultBranch,
        branchHead,
        treePath: join(input.tempDir, 'epicflow', String(epic), 'land'),
      },
    );
    const { ok: _ok, ...facts } = brought;
    record = { ...record, ...facts };
    if (!brought.ok) {
      record = failed(record, brought.reason);
      break;
    }
    if (!brought.merged) {
      record = landedRecord(record, undefined);
      break;
    }
    // A lease on the head the landing started from: a moved epic branch is never overwritten.
    const pushed = await remote.push(brought.epicHead, epicBranch, epicHead);
    if (pushed.ok) {
      record = landedRecord(record, brought.epicHead);
      break;
    }
    if (pushed.reason !== 'stale' || push >= MAX_LAND_PUSHES) {
      record = failed(
        record,
        pushed.reason === 'stale'
          ? `${epicBranch} kept moving on GitHub: ${MAX_LAND_PUSHES} pushes were refused`
          : describePushRefusal(epicBranch, pushed.reason, pushed.detail),
      );
      break;
    }
    ctx.emit('epic', `${epicBranch} moved on GitHub; landing again on its new head`);
  }
  await saveRecord(store, record);
  if (record.outcome === 'not-landed') await hold(store, record);
  return { record, events };
}

function failed(record: LandRecord, reason: string): LandRecord {
  const base = { ...record, outcome: 'not-landed' as const, reason };
  return { ...base, finishedAt: new Date().toISOString(), nextStep: githubLandNextStep(base) };
}

function landedRecord(record: LandRecord, epicHeadAfter: string | undefined): LandRecord {
  const { reason: _r, nextStep: _n, ...rest } = record;
  return {
    ...rest,
    outcome: 'landed',
    finishedAt: new Date().toISOString(),
    ...(epicHeadAfter === undefined ? {} : { epicHeadAfter }),
  };
}
