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
import { GitHubStateStore, type GitHubRepo } from '../adapters/github/index.js';
import { Git } from '../adapters/git/index.js';
import type { RemoteGit } from '../adapters/git/remote-git.js';
import { FileStateStore } from '../adapters/state/file-store.js';
import { composeEpic } from '../composition/epic.js';
import { landGitPort } from '../adapters/git/port.js';
import { reclaimingLandTrees } from '../composition/reclaiming-trees.js';
import type { EpicflowConfig } from '../core/config/types.js';
import type { LeftToDetection } from '../core/init/index.js';
import type { EpicDoc } from '../core/epic/epic-doc.js';
import { jobStaleness, ownsRecord, type LandJobRef } from '../core/epic/index.js';
import { githubLandNextStep, LAND_DOC, landHalt } from '../core/epic/landing.js';
import { botCommitIdentity } from '../core/epic/push.js';
import { EpicflowError } from '../core/errors.js';
import { readLandLog, withLand, type LandRecord } from '../core/land/index.js';
import { epicBranchName, type Plan } from '../core/model.js';
import { bringIntoEpic } from '../engine/land.js';
import type { EngineEvent } from '../engine/ports.js';
import { openEpic } from '../engine/run-epic.js';
import { EPIC_DOC, updateEpicDoc } from './epic-doc.js';
import { readLanding } from './landing.js';
import {
  composedFrom,
  configAt,
  jobPlan,
  openJob,
  pushAgainOnMove,
  type JobInput,
} from './job-shell.js';

/** Landings made again after the epic branch moved on GitHub, before the epic is held. */
const MAX_LAND_PUSHES = 3;

export interface LandJobInput extends JobInput {
  /** `land-<n>`, as dispatched. */
  readonly job: string;
  readonly remote: RemoteGit;
  readonly onEvent?: (event: EngineEvent) => void;
}

export interface LandJobResult {
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
  job: LandJobRef,
  reason: string,
  now: Date,
): Promise<void> {
  const store = new GitHubStateStore({ repo, epic: String(job.epic) });
  const { log } = await readLanding(store);
  const record = log.lands.find((l) => l.job === job.job);
  if (record === undefined || !ownsRecord(job, record)) return;
  const failed: LandRecord = {
    ...record,
    outcome: 'not-landed',
    finishedAt: now.toISOString(),
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

/** Everything read and checked before the landing runs. */
export interface PreparedLanding {
  /** As the file says (`configAt` adds what it leaves out, on the epic head). */
  readonly config: EpicflowConfig;
  /** What the configuration leaves to detection. */
  readonly left: LeftToDetection;
  readonly plan: Plan;
  readonly store: GitHubStateStore;
  readonly defaultBranch: string;
  /** The landing's record as dispatched (running). */
  readonly started: LandRecord;
}

/** Reads the configuration, the plan and the landing's record; refuses clearly on any mismatch. */
export async function prepareLandJob(input: LandJobInput): Promise<PreparedLanding> {
  const opened = await openJob(input);
  const plan = await jobPlan(input, opened);
  const started = await runningRecord(opened.store, input);
  const { config, left, store, defaultBranch } = opened;
  return { config, left, plan, store, defaultBranch, started };
}

export async function runLandJob(
  input: LandJobInput,
  prepared: PreparedLanding,
): Promise<LandJobResult> {
  const { repo, remote, epic } = input;
  const { config, plan, store, defaultBranch, started } = prepared;
  const events: EngineEvent[] = [];
  const epicBranch = epicBranchName(String(epic));

  // Before anything of the repository runs: no credential may be in reach of the coder.
  const removed = await input.remote.scrubCredentials();
  const git = await Git.open(input.workspace, botCommitIdentity(repo.botLogin));
  await git.read('cannot detach the job checkout', ['checkout', '--quiet', '--detach']);
  const scratch = new FileStateStore(join(input.tempDir, 'epicflow', String(epic), 'state'));
  const { ports, settings } = await composeEpic({
    repo: git,
    epic: String(epic),
    plan,
    config,
    ...composedFrom(input, config),
    state: scratch,
    folders: {
      worktrees: join(input.tempDir, 'epicflow', String(epic), 'worktrees'),
      homes: join(input.tempDir, 'epicflow', String(epic), 'homes'),
      setupCache: join(input.tempDir, 'epicflow', 'cache', 'setup'),
    },
    onEvent: (event) => {
      events.push(event);
      input.onEvent?.(event);
    },
  });

  let record: LandRecord = started;
  let ctx: Awaited<ReturnType<typeof openEpic>> | undefined;
  const out = await pushAgainOnMove(remote, epicBranch, MAX_LAND_PUSHES, async (push) => {
    if (push > 1) ctx?.emit('epic', `${epicBranch} moved on GitHub; landing again on its new head`);
    const heads = await remote.fetch([epicBranch, defaultBranch]);
    const epicHead = heads.get(epicBranch);
    const intoHead = heads.get(defaultBranch);
    if (epicHead === undefined || intoHead === undefined) {
      return {
        stop: failed(
          record,
          `${epicHead === undefined ? epicBranch : defaultBranch} does not exist on GitHub`,
        ),
      };
    }
    for (const [branch, sha] of [
      [epicBranch, epicHead],
      [defaultBranch, intoHead],
    ] as const) {
      await git.read(`cannot set ${branch}`, ['update-ref', `refs/heads/${branch}`, sha]);
    }
    // The epic's stories made its head: its files say what the config leaves out.
    const config = await configAt(prepared.config, prepared.left, git, epicHead);
    ctx = await openEpic({ ...settings, config }, ports);
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
    if (!brought.ok) return { stop: failed(record, brought.reason) };
    if (!brought.merged) return { stop: landedRecord(record, undefined) };
    // A lease on the head the landing started from: a moved epic branch is never overwritten.
    return { push: brought.epicHead, lease: epicHead };
  });
  record =
    out.kind === 'stopped'
      ? out.value
      : out.kind === 'pushed'
        ? landedRecord(record, out.sha)
        : failed(
            record,
            out.kind === 'refused'
              ? out.reason
              : `${epicBranch} kept moving on GitHub: ${MAX_LAND_PUSHES} pushes were refused`,
          );
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
