/**
 * One story in one Actions job (docs/setup-actions.md): the job checkout is the
 * story's worktree and the epic branch lives on GitHub. Everything the job
 * needs is read from GitHub by id (config, plan, the record written at
 * dispatch) and checked before anything is changed; then the engine's own
 * lifecycle runs (`runStory`), and the merged epic head is published with
 * optimistic concurrency: a plain (non-force) push; when another story got
 * there first, fetch, merge again, re-run the gates and push again.
 */
import { notOnPath } from '../../adapters/process/on-path.js';
import { missingProgramMessage } from '../../core/doctor/index.js';
import { neededPrograms } from '../../core/doctor/toolchains.js';
import { storyScope } from '../../core/packages.js';
import { GitHubStateStore, type GitHubRepo } from '../../adapters/github/index.js';
import type { Git } from '../../adapters/git/index.js';
import { FileStateStore } from '../../adapters/state/file-store.js';
import type { FoundRecord, RecordSteps } from './job-record.js';
import { artifactLogs, recordingGates, type GateLog } from './story-logs.js';
import { requireCoder } from '../../core/config/index.js';
import type { EpicflowConfig } from '../../core/config/types.js';
import type { LeftToDetection } from '../../core/init/index.js';
import { EpicflowError } from '../../core/errors.js';
import {
  epicBranchName,
  storyBranchName,
  type Plan,
  type Story,
  type StoryRecord,
} from '../../core/model.js';
import { persistableRosterState } from '../../core/roster/index.js';
import {
  composedFrom,
  configAt,
  detachedCheckout,
  jobFolder,
  jobPlanWithIssues,
  sayScrubbed,
  setupCacheFolder,
  type JobInput,
} from './job-shell.js';
import { expectBoard } from '../../orchestrator/load.js';
import { epicDocOf, epicRepo } from '../../orchestrator/owner.js';
import {
  cancelledRecord,
  failIfOwned,
  ownsRecord,
  preferredExecutor,
  type StoryJobRef,
} from '../../core/epic/index.js';
import { withReviewStories } from '../../core/epic/review.js';
import type { EngineEvent, TraceSpan } from '../../engine/ports.js';
import { openEpic } from '../../engine/run-epic.js';
import type { EpicContext } from '../../engine/context.js';
import { progressHandedOver } from './story-checkpoint.js';
import { writeWorkResult } from './work-result.js';
import { RESULT_VERSION, type ResultRecord } from '../../core/publish/result.js';
import { runStory } from '../../engine/story.js';
import { composeEpic } from '../../composition/epic.js';
import type { RemoteGit } from '../../adapters/git/remote-git.js';
import { ROSTER_DOC, startingRoster, type SharedRoster } from '../../core/roster/sync.js';

export interface StoryJobInput extends JobInput {
  readonly story: string;
  readonly attempt: number;
  readonly remote: RemoteGit;
  /**
   * Where the story's logs (setup, gates, agent turns, merge) are kept for the job to upload
   * as its artifact: outside the job's folder, which is removed when the job ends.
   */
  readonly logsDir?: string;
  /** The job's span: the story and its steps are traced inside it. None: not traced. */
  readonly trace?: TraceSpan;
  readonly onEvent?: (event: EngineEvent) => void;
  /** Where the story's result is written for the publish job (the workflow uploads it). */
  readonly resultDir: string;
}

export interface StoryJobResult {
  /** The record as the work job ended it (the publish job saves it on GitHub). */
  readonly record: StoryRecord;
  readonly story: Story;
  readonly gates: readonly GateLog[];
  readonly events: readonly EngineEvent[];
  /** What was handed over to the publish job. */
  readonly result: ResultRecord;
}

/** Everything read and checked before the job changes anything. */
export interface PreparedStory {
  /** As the file says (`configAt` adds what it leaves out, on the epic head). */
  readonly config: EpicflowConfig;
  /** What the configuration leaves to detection. */
  readonly left: LeftToDetection;
  readonly plan: Plan;
  readonly story: Story;
  readonly prior: StoryRecord;
  readonly store: GitHubStateStore;
  /** Blob sha of the record as read: the compare-and-swap token of the final write. */
  readonly priorSha: string;
  /** The shared roster as the view read it (null: none yet), with its blob sha. */
  readonly roster: { readonly value: unknown; readonly sha: string } | null;
  /** The repository as a decision writes to the epic (its owner's login counts as ours). */
  readonly repo: GitHubRepo;
  /** The story's own sub-issue, as the plan's load found it (undefined: it has none). */
  readonly subIssue: number | undefined;
}

/** What the story's job reads to find its record: the plan, its story and sub-issue. */
interface StoryFound extends FoundRecord<StoryRecord> {
  readonly plan: Plan;
  readonly story: Story;
  readonly repo: GitHubRepo;
  readonly subIssue: number | undefined;
}

/**
 * A story's record steps: the config (from the default branch), the plan and the dispatch
 * record read by id in the job's one GraphQL view; any mismatch refused clearly.
 */
export const storyRecord: RecordSteps<StoryJobInput, StoryRecord, StoryFound, PreparedStory> = {
  find: async (input, opened) => {
    const { epic } = input;
    const { config, view, store } = opened;
    requireCoder(config, input.configPath);
    // The decision after the story (`reconcileAfter`) then reads the board with its view.
    expectBoard(input.repo, config);
    const repo = epicRepo(input.repo, epicDocOf(store, view));
    const { plan: approved, subIssues } = await jobPlanWithIssues(input, opened, repo);
    // Review rounds' `review-<n>` stories join the plan (approval is of the plan's own).
    const plan = withReviewStories(approved, epicDocOf(store, view)?.review);
    const story = plan.stories.find((s) => s.id === input.story);
    if (story === undefined) {
      throw new EpicflowError(
        'usage',
        `story "${input.story}" is not in the plan of epic #${epic}`,
        {
          details: [`stories in the plan: ${plan.stories.map((s) => s.id).join(', ') || 'none'}`],
        },
      );
    }
    const read = view.stories.get(`${story.id}.json`);
    const record = read === undefined ? undefined : store.parseStory(story.id, read.text);
    return {
      facts: {
        kind: 'story',
        record,
        entryHash: plan.hashes[story.id],
        plan: approved,
        approvedPlan: epicDocOf(store, view)?.approvedPlan,
      },
      found: record === undefined || read === undefined ? undefined : { record, sha: read.sha },
      plan,
      story,
      repo,
      subIssue: subIssues[story.id],
    };
  },
  prepare: async (_input, opened, found, fresh) => {
    const { view, store } = opened;
    const roster =
      view.rosterDoc === undefined
        ? null
        : {
            value: store.parseJson<unknown>(ROSTER_DOC, view.rosterDoc.text),
            sha: view.rosterDoc.sha,
          };
    return {
      config: opened.config,
      left: opened.left,
      plan: found.plan,
      story: found.story,
      prior: fresh.record,
      store,
      priorSha: fresh.sha,
      roster,
      repo: found.repo,
      subIssue: found.subIssue,
    };
  },
  // A newer attempt's record wins over this one's; an older one is written over.
  lostSave: 'again',
};

/**
 * What the story's setup and gates (the root's, and the packages' its owns touch) call
 * that is not on the runner's PATH, said as `doctor` says it with where to set it up;
 * undefined when every program is there.
 */
async function missingToolchains(
  config: EpicflowConfig,
  configFile: string,
  story: Story,
  env: NodeJS.ProcessEnv,
  root: string,
): Promise<string | undefined> {
  const scope = storyScope(config, story.owns);
  const needed = neededPrograms([...scope.setup, ...scope.gates].map((c) => c.command));
  const missing = await notOnPath(needed, env, root);
  if (missing.length === 0) return undefined;
  return `not started: ${missing.map((p) => missingProgramMessage(config, configFile, p)).join('; ')} (set it up in the story workflow before the epicflow step)`;
}

/** Marks the dispatched record failed with a refusal's reason (same attempt only). */
export async function recordRefusal(
  repo: GitHubRepo,
  job: StoryJobRef,
  reason: string,
  now: Date,
): Promise<void> {
  const { story } = job;
  const store = new GitHubStateStore({ repo, epic: String(job.epic) });
  if (!ownsRecord(job, (await store.read(story))?.record)) return;
  // Someone moved the story on meanwhile (a retry, a cancel): their record is left alone.
  const owned = failIfOwned<StoryRecord>(job, (current) => ({
    ...current,
    status: 'failed',
    reason,
    finishedAt: now.toISOString(),
  }));
  await store.update(story, (current) => {
    if (current === null) {
      throw new EpicflowError('state', `the record of story ${story} disappeared while writing it`);
    }
    return owned.change(current);
  });
}

/**
 * The work job's end: what the story's commits are, for the publish job. A passed story
 * names its checked commit and the merge its gates ran on (the local epic head, whose
 * first parent is the epic head it merged into); any other names the story branch as it
 * stands (nothing is lost), against the epic head as GitHub last had it.
 */
async function workResult(
  repo: Git,
  input: {
    readonly epic: string;
    readonly record: StoryRecord;
    /** The story branch's head in the job (null: none). */
    readonly storyHead: string | null;
    /** The local epic head at the end (the gated merge of a passed story). */
    readonly localEpic: string;
    /** The epic branch's head on GitHub as the job last read it. */
    readonly remoteEpic: string;
    readonly gates: readonly GateLog[];
    readonly roster: SharedRoster;
  },
): Promise<ResultRecord> {
  const { record } = input;
  const parents = async (sha: string): Promise<string[]> =>
    (
      await repo.read(`cannot read the parents of ${sha}`, [
        'rev-list',
        '--parents',
        '-n',
        '1',
        sha,
      ])
    )
      .trim()
      .split(/\s+/)
      .slice(1);
  let storyCommit = input.storyHead ?? input.remoteEpic;
  let epicHead = input.remoteEpic;
  let gated: string | null = null;
  if (record.status === 'done' && record.storyCommit !== undefined) {
    storyCommit = record.storyCommit;
    const [first, second, ...more] = await parents(input.localEpic);
    if (first !== undefined && second === storyCommit && more.length === 0) {
      gated = input.localEpic;
      epicHead = first;
    } else {
      epicHead = input.localEpic;
    }
  }
  const base = (
    await repo.read(`cannot find where ${storyCommit} left the epic branch`, [
      'merge-base',
      storyCommit,
      epicHead,
    ])
  ).trim();
  return {
    version: RESULT_VERSION,
    epic: input.epic,
    story: record.story,
    attempt: record.attempt,
    base,
    epicHead,
    storyCommit,
    gated,
    gates: input.gates.map(({ command, ok, timedOut, where }) => ({
      command,
      ok,
      timedOut,
      where,
    })),
    record,
    roster: input.roster,
  };
}

/**
 * The job checkout as the story's work takes it (its credentials scrubbed by the shell
 * already): the epic and story branches fetched and set as local refs on a detached checkout.
 */
async function storyCheckout(
  input: StoryJobInput,
  prepared: PreparedStory,
  epicBranch: string,
  branch: string,
): Promise<{
  readonly repo: Git;
  readonly remoteEpic: string;
  readonly remoteStory: string | undefined;
  readonly restart: boolean;
}> {
  const { remote } = input;
  const { prior } = prepared;
  const heads = await remote.fetch([epicBranch, branch]);
  const remoteEpic = heads.get(epicBranch);
  if (remoteEpic === undefined) {
    throw new EpicflowError('github', `the epic branch ${epicBranch} does not exist on GitHub`, {
      details: ['epicflow creates it when the epic starts; comment /resume on the epic'],
    });
  }
  const repo = await detachedCheckout(input);
  await repo.read(`cannot set ${epicBranch}`, [
    'update-ref',
    `refs/heads/${epicBranch}`,
    remoteEpic,
  ]);
  const remoteStory = heads.get(branch);
  // A record marked `restart` (its plan entry changed after the story had started) must
  // not build on the old work: the story starts from the epic head, and the publish job
  // replaces the old branch on GitHub only by a push with a lease on the old head.
  const restart = prior.restart === 'fresh';
  if (remoteStory !== undefined && !restart) {
    await repo.read(`cannot set ${branch}`, ['update-ref', `refs/heads/${branch}`, remoteStory]);
  } else if ((await repo.revParse(`refs/heads/${branch}`)) !== null) {
    await repo.deleteBranch(branch);
  }

  return { repo, remoteEpic, remoteStory, restart };
}

/**
 * A story's work job (docs/security.md, "The publish side"): the agent's turns, the gates,
 * the judge and the merge with the epic head, with no write credential in the job. Its token
 * can only read: it fetches the branches and reads the plan and record, and writes nothing
 * to GitHub. It ends by writing the story's result (a record and a bundle of its commits)
 * into `resultDir`, which the workflow uploads for the publish job; each commit of the
 * story's progress writes it too, so a job that is cancelled or dies after a paid turn
 * still hands its work over.
 */
export async function runStoryJob(
  input: StoryJobInput,
  prepared: PreparedStory,
): Promise<StoryJobResult> {
  const { plan, story, prior } = prepared;
  const { remote, workspace } = input;
  const epic = String(input.epic);
  const epicBranch = epicBranchName(epic);
  const branch = storyBranchName(epic, story.id);
  const events: EngineEvent[] = [];
  const gates: GateLog[] = [];

  const checkout = await storyCheckout(input, prepared, epicBranch, branch);
  const { repo, remoteStory, restart } = checkout;
  let remoteEpic = checkout.remoteEpic;

  // The story starts from the epic head: its files say what the config leaves out.
  const config = await configAt(prepared.config, prepared.left, repo, remoteEpic);

  const scratch = new FileStateStore(jobFolder(input, 'state'));
  await scratch.writeStory(prior);
  // The shared roster as the job's view read it: no second read.
  await scratch.writeJson('roster.json', startingRoster(prepared.roster?.value ?? null));

  const worktrees = jobFolder(input, 'worktrees');
  const handOver = async (record: StoryRecord, localEpic: string): Promise<ResultRecord> => {
    const result = await workResult(repo, {
      epic,
      record,
      storyHead: await repo.revParse(`refs/heads/${branch}`),
      localEpic,
      remoteEpic: remoteEpic as string,
      gates,
      roster: persistableRosterState(ctx.roster.snapshot),
    });
    await writeWorkResult(repo, input.resultDir, result);
    return result;
  };
  const { ports, settings } = await composeEpic({
    repo,
    epic,
    plan,
    config,
    ...composedFrom(input, config),
    state: progressHandedOver(scratch, {
      story: story.id,
      write: async (record) => {
        await handOver(record, remoteEpic as string);
      },
      warn: (message) => ctx.emit('story', message, story.id),
    }),
    // The story's tree is a worktree of its own there, never the job checkout: the
    // checkout's `.git` (and the folder that holds it) stay out of untrusted reach.
    folders: {
      worktrees,
      homes: jobFolder(input, 'homes'),
      setupCache: setupCacheFolder(input),
    },
    onEvent: (event) => {
      events.push(event);
      input.onEvent?.(event);
    },
    adapt: { gates: (inner) => recordingGates(inner, gates, { worktrees, story: story.id }) },
    ...(input.logsDir === undefined ? {} : { logs: artifactLogs(input.logsDir) }),
    ...(input.trace === undefined ? {} : { trace: input.trace }),
    // Other stories' jobs merge meanwhile: the judge reads the story on GitHub's epic head.
    upstream: {
      epicHead: async () => {
        const head = (await remote.fetch([epicBranch])).get(epicBranch);
        if (head !== undefined) remoteEpic = head;
        return head;
      },
    },
  });
  const ctx = await openEpic(settings, ports);
  ctx.stopOn(input.interrupt);
  sayScrubbed(input.scrubbed, (message) => ctx.emit('epic', message));
  if (restart && remoteStory !== undefined) {
    // A review round restarts a story whose plan entry did not change.
    const why =
      prior.revision !== undefined && prior.planHash === plan.hashes[story.id]
        ? `review round ${prior.revision.round}`
        : `plan entry changed since ${branch} was created`;
    ctx.emit('story', `${why}: starting over from the epic head`, story.id);
  }
  // A toolchain the story's setup or gates call that the runner lacks fails the story
  // before any agent turn is paid for, as it stops `epicflow run` at its start.
  const missing = await missingToolchains(config, input.configPath, story, input.env, workspace);
  let record = await storyOutcome(ctx, {
    story,
    prior,
    missing,
    preferred: preferredExecutor(story, prior, plan.hashes[story.id] ?? ''),
  });
  // Stopped because the step was cancelled: a person stopped it, nothing runs it again by itself.
  if (input.interrupt?.aborted === true) {
    const cancelled = cancelledRecord(record);
    if (cancelled !== record) ctx.emit('story', `failed: ${cancelled.reason ?? ''}`, story.id);
    record = cancelled;
  }
  // The engine's records drop the marker once it restarted; GitHub's record keeps it until
  // the publish job replaces the old branch there, or the next job would resume the old work.
  if (restart) record = { ...record, restart: 'fresh' };
  const result = await handOver(record, ctx.epicHead);
  return { record, story, gates, events, result };
}

/**
 * The story's record as the engine ends it: failed before any turn when the runner lacks a
 * toolchain its checks call (`missing`), waiting when no executor can take the coder role,
 * else the story run by the executor the roster leases.
 */
async function storyOutcome(
  ctx: EpicContext,
  input: {
    readonly story: Story;
    readonly prior: StoryRecord;
    readonly missing: string | undefined;
    readonly preferred: string | undefined;
  },
): Promise<StoryRecord> {
  const { story, prior, missing } = input;
  if (missing !== undefined) {
    return { ...prior, status: 'failed', reason: missing, finishedAt: new Date().toISOString() };
  }
  const executor = await ctx.roster.lease(story.id, input.preferred);
  if (executor === null) {
    const exhausted = ctx.roster.exhausted();
    return {
      ...prior,
      status: 'waiting',
      reason: `not started: ${exhausted?.message ?? 'no executor can take the coder role'}`,
    };
  }
  const record = await runStory(ctx, { story, executor, prior });
  await ctx.roster.release(story.id);
  return record;
}
