/**
 * One landing in two Actions jobs of one run (`land-<n>`, the story workflow with
 * `story: land-<n>`; docs/landing.md). The work job, whose token can only read, merges the
 * default branch into the epic branch by the engine's `bringIntoEpic` (gates on the merged
 * tree, a coder for conflicts or red gates, at most three checked rounds, the land
 * perimeter), in trees of the job's own, with the isolation a story job has, and hands the
 * landed merge over (`landWorkJob`). The publish job checks it from its objects and pushes it
 * with a lease (land-publish.ts). A landing that fails pushes nothing and holds the epic,
 * naming the paths.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { GitHubStateStore, type GitHubRepo } from '../../adapters/github/index.js';
import type { RemoteGit } from '../../adapters/git/remote-git.js';
import { FileStateStore } from '../../adapters/state/file-store.js';
import { composeEpic } from '../../composition/epic.js';
import { landGitPort } from '../../adapters/git/port.js';
import { writeResultBundle } from '../../adapters/git/publish-git.js';
import { reclaimingLandTrees } from '../../composition/reclaiming-trees.js';
import type { EpicflowConfig } from '../../core/config/types.js';
import type { LeftToDetection } from '../../core/init/index.js';
import type { EpicDoc } from '../../core/epic/epic-doc.js';
import { failIfOwned, type LandJobRef } from '../../core/epic/index.js';
import { githubLandNextStep, LAND_DOC, landHalt } from '../../core/epic/landing.js';
import { readLandLog, withLand, type LandLog, type LandRecord } from '../../core/land/index.js';
import { epicBranchName, type Plan } from '../../core/model.js';
import { HANDOVER_VERSION, type LandHandover } from '../../core/publish/handover.js';
import { RESULT_FILES } from '../../core/publish/result.js';
import { bringIntoEpic, type LandFacts } from '../../engine/land.js';
import type { EngineEvent } from '../../engine/ports.js';
import { openEpic } from '../../engine/run-epic.js';
import { EPIC_DOC, updateEpicDoc } from '../../orchestrator/epic-doc.js';
import { readLanding } from '../../orchestrator/landing.js';
import {
  composedFrom,
  configAt,
  detachedCheckout,
  jobFolder,
  jobPlan,
  sayScrubbed,
  setupCacheFolder,
  type JobInput,
} from './job-shell.js';
import type { FoundRecord, RecordSteps } from './job-record.js';

export interface LandJobInput extends JobInput {
  /** `land-<n>`, as dispatched. */
  readonly job: string;
  readonly remote: RemoteGit;
  readonly onEvent?: (event: EngineEvent) => void;
}

/** The landing log with `record` in it, from the log as it is (`current`). */
export function withLanding(
  store: GitHubStateStore,
  record: LandRecord,
): (current: unknown) => unknown {
  return (current) => withLand(readLandLog(current, store.docPath(LAND_DOC)), record);
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
  const owned = failIfOwned<LandRecord>(job, (record) => ({
    ...record,
    outcome: 'not-landed',
    finishedAt: now.toISOString(),
    reason,
    nextStep: githubLandNextStep(record),
  }));
  owned.change(log.lands.find((l) => l.job === job.job) ?? null);
  const failed = owned.failed();
  if (failed === undefined) return;
  await store.updateJson<unknown>(LAND_DOC, withLanding(store, failed));
  await hold(store, failed);
}

export async function hold(store: GitHubStateStore, record: LandRecord): Promise<void> {
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
  /** The landing log it was read in, and its blob sha: the compare-and-swap token of its save. */
  readonly log: LandLog;
  readonly logSha: string;
}

/** What a landing's job reads to find its record: the plan, and the landing log it is in. */
interface LandFound extends FoundRecord<LandRecord> {
  readonly plan: Plan;
  readonly log: LandLog;
}

/**
 * A landing's record steps: the plan, then the landing's record in the landing log (this
 * job must be the one epicflow dispatched); any mismatch refused clearly. A lost save of the
 * log is made again on the log as it is now.
 */
export const landingRecord: RecordSteps<LandJobInput, LandRecord, LandFound, PreparedLanding> = {
  find: async (input, opened) => {
    const plan = await jobPlan(input, opened);
    const { log, sha } = await readLanding(opened.store);
    const record = log.lands.find((l) => l.job === input.job);
    return {
      facts: { kind: 'land', record },
      found: record === undefined || sha === null ? undefined : { record, sha },
      plan,
      log,
    };
  },
  prepare: async (_input, opened, found, fresh) => {
    const { config, left, store, defaultBranch } = opened;
    const { plan, log } = found;
    return {
      config,
      left,
      plan,
      store,
      defaultBranch,
      started: fresh.record,
      log,
      logSha: fresh.sha,
    };
  },
  lostSave: 'again',
};

/**
 * The work job's part (a token that can only read): the default branch is brought into the
 * epic head in trees of the job's own (`bringIntoEpic`: gates, coder rounds, the land
 * perimeter); what came of it is handed over for the publish job (land-publish.ts): the
 * landed merge as a bundle in `resultDir`, and the facts.
 */
export async function landWorkJob(
  input: LandJobInput,
  prepared: PreparedLanding,
  resultDir: string,
): Promise<LandHandover> {
  const { remote, epic } = input;
  const { plan, defaultBranch, started } = prepared;
  const epicBranch = epicBranchName(String(epic));

  const git = await detachedCheckout(input);
  const scratch = new FileStateStore(jobFolder(input, 'state'));
  const heads = await remote.fetch([epicBranch, defaultBranch]);
  const epicHead = heads.get(epicBranch);
  const intoHead = heads.get(defaultBranch);
  const handover = (
    facts: Partial<LandFacts> & Pick<LandHandover, 'epicHead' | 'branchHead' | 'outcome'>,
  ): LandHandover => ({
    version: HANDOVER_VERSION,
    job: 'land',
    epic: String(epic),
    attempt: 1,
    land: input.job,
    conflicts: facts.conflicts ?? [],
    failingGates: facts.failingGates ?? [],
    rounds: facts.rounds ?? 0,
    executors: facts.executors ?? [],
    usage: facts.usage ?? [],
    notes: facts.notes ?? [],
    epicHead: facts.epicHead,
    branchHead: facts.branchHead,
    outcome: facts.outcome,
  });
  if (epicHead === undefined || intoHead === undefined) {
    return handover({
      epicHead: started.epicHeadBefore,
      branchHead: started.intoHeadBefore,
      outcome: {
        kind: 'failed',
        reason: `${epicHead === undefined ? epicBranch : defaultBranch} does not exist on GitHub`,
      },
    });
  }
  for (const [branch, sha] of [
    [epicBranch, epicHead],
    [defaultBranch, intoHead],
  ] as const) {
    await git.read(`cannot set ${branch}`, ['update-ref', `refs/heads/${branch}`, sha]);
  }
  // The epic's stories made its head: its files say what the config leaves out.
  const config = await configAt(prepared.config, prepared.left, git, epicHead);
  const { ports, settings } = await composeEpic({
    repo: git,
    epic: String(epic),
    plan,
    config,
    ...composedFrom(input, config),
    state: scratch,
    folders: {
      worktrees: jobFolder(input, 'worktrees'),
      homes: jobFolder(input, 'homes'),
      setupCache: setupCacheFolder(input),
    },
    onEvent: (event) => input.onEvent?.(event),
  });
  const ctx = await openEpic({ ...settings, config }, ports);
  ctx.stopOn(input.interrupt);
  sayScrubbed(input.scrubbed, (message) => ctx.emit('epic', message));
  // The head the dispatch named is landed (a newer one is the next landing's).
  const branchHead = (await git.isAncestor(started.intoHeadBefore, intoHead))
    ? started.intoHeadBefore
    : intoHead;
  const brought = await bringIntoEpic(
    ctx,
    reclaimingLandTrees(landGitPort(git, input.untrusted?.writer), input.untrusted),
    {
      job: input.job,
      branch: defaultBranch,
      branchHead,
      treePath: jobFolder(input, 'land'),
    },
  );
  const { ok: _ok, ...facts } = brought;
  if (!brought.ok) {
    return handover({
      ...facts,
      epicHead,
      branchHead,
      outcome: { kind: 'failed', reason: brought.reason },
    });
  }
  if (!brought.merged)
    return handover({ ...facts, epicHead, branchHead, outcome: { kind: 'unchanged' } });
  await mkdir(resultDir, { recursive: true });
  await writeResultBundle(git, join(resultDir, RESULT_FILES.bundle), {
    base: branchHead,
    epicHead,
    storyCommit: brought.epicHead,
    gated: null,
  });
  return handover({
    ...facts,
    epicHead,
    branchHead,
    outcome: { kind: 'merged', commit: brought.epicHead },
  });
}

/** The record of a landing that did not land: the reason, and what to do next. */
export function notLanded(record: LandRecord, reason: string): LandRecord {
  const base = { ...record, outcome: 'not-landed' as const, reason };
  return { ...base, finishedAt: new Date().toISOString(), nextStep: githubLandNextStep(base) };
}

/** The record of a landing that landed (`epicHeadAfter`: the merge pushed, when one was). */
export function landedRecord(record: LandRecord, epicHeadAfter: string | undefined): LandRecord {
  const { reason: _r, nextStep: _n, ...rest } = record;
  return {
    ...rest,
    outcome: 'landed',
    finishedAt: new Date().toISOString(),
    ...(epicHeadAfter === undefined ? {} : { epicHeadAfter }),
  };
}
