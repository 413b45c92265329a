/**
 * A story's publish job (docs/security.md, "The publish side"): the job that holds the write
 * credential. It checks nothing out and runs nothing from the repository or the result: it
 * reads the work job's result from the artifact, fetches the epic and story branches into a
 * bare repository, re-derives from the objects what it must trust (`readResult`), pushes the
 * story branch, merges the checked commit into the epic head without a work tree and pushes
 * the merge with a lease — merging again on the new head when another story got there
 * first — and writes the story's record and the roster. A result it refuses fails the story
 * with the reason, with nothing pushed.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GitHubStateStore } from '../../adapters/github/index.js';
import { PublishGit } from '../../adapters/git/publish-git.js';
import type { RemoteGit } from '../../adapters/git/remote-git.js';
import { spawnGit } from '../../adapters/git/run-git.js';
import { botCommitIdentity, type PushRefusalReason } from '../../core/epic/index.js';
import { describeError, describeErrorLine, EpicflowError } from '../../core/errors.js';
import { epicBranchName, storyBranchName, type Story, type StoryRecord } from '../../core/model.js';
import {
  isResultRefusal,
  parseResultRecord,
  RESULT_FILES,
  type ResultRecord,
} from '../../core/publish/result.js';
import { mergeRoster, ROSTER_DOC, startingRoster } from '../../core/roster/sync.js';
import { applyIssueRequests } from './issue-requests.js';
import { saving, storyFile, type Saving } from './job-record.js';
import { pushing, type Pushing, type PushOutcome, type PushRound } from './job-push.js';
import {
  followPush,
  isDone,
  mergeOnEpic,
  readResult,
  type PublishInput,
} from './publish-result.js';
import type { GateLog } from './story-logs.js';
import type { PreparedStory } from './story-job.js';

/** Pushes of the epic head before giving up (each after merging again on the new head). */
const MAX_PUBLISH_ATTEMPTS = 5;

/** Why GitHub refused a push, as the git adapter tells it (never read from message text). */
export type PushRefusal = Exclude<PushRefusalReason, 'stale'>;

/** Why the merge of the epic head ended without a push: merged already, a conflict, no branch. */
type MergeStop =
  | { readonly kind: 'merged'; readonly merge: string }
  | Extract<Awaited<ReturnType<typeof mergeOnEpic>>, { kind: 'conflict' }>
  | { readonly kind: 'deleted' };

interface PublishJobInput {
  readonly epic: number;
  readonly story: string;
  readonly attempt: number;
  /** The folder the work job's artifact was downloaded to. */
  readonly resultDir: string;
  /** How the work job ended, as the workflow says (`needs.work.result`), when it says. */
  readonly workOutcome?: string | undefined;
  readonly configPath: string;
  /** The job's own folder: the bare repository lives there. */
  readonly tempDir: string;
  /** Git over HTTP with the write credential (run in the job's bare repository). */
  readonly remote: RemoteGit;
  readonly botLogin: string;
  /** Every secret the job holds: the diff may carry none of them. */
  readonly secrets: readonly string[];
  readonly onEvent?: (message: string) => void;
}

export interface PublishJobResult {
  /** The record as saved on GitHub. */
  readonly record: StoryRecord;
  /** The gates as the work job measured them (their output is in the work job's log). */
  readonly gates: readonly GateLog[];
  /** What the publish job did, line by line. */
  readonly events: readonly string[];
  /** Pushes of the epic head (1 when nobody else merged meanwhile; 0: none). */
  readonly pushes: number;
  /** Why GitHub refused a push of the epic head, when it did (the story then failed). */
  readonly refusedPush?: PushRefusal;
}

/**
 * The story's record, to be saved by the shell (`saveRecord`: the story's lost save is made
 * again, and a newer attempt's record is kept), then `after` with the record as saved.
 */
function savingStory(
  prepared: PreparedStory,
  record: StoryRecord,
  after: (saved: StoryRecord) => Promise<PublishJobResult>,
): Saving<PublishJobResult> {
  return saving(
    {
      file: storyFile(prepared.store, record.story),
      sha: prepared.priorSha,
      value: record,
      change: (current) =>
        current !== null && current.attempt > record.attempt ? current : record,
    },
    after,
    // Not reached: a story's lost save is made again.
    { record, gates: [], events: [], pushes: 0 },
  );
}

/**
 * Merges the work job's roster into the shared one with a compare-and-swap on the roster as
 * the publish job's view read it (`shared`); another job's write meanwhile means read, merge
 * and write again. Nothing new: nothing written.
 */
async function saveRoster(
  store: GitHubStateStore,
  ours: unknown,
  shared: PreparedStory['roster'],
): Promise<void> {
  const mine = startingRoster(ours);
  const merged = mergeRoster(shared?.value ?? null, mine);
  if (shared !== null && JSON.stringify(merged) === JSON.stringify(shared.value)) return;
  const wrote = await store.writeJson(ROSTER_DOC, merged, shared?.sha ?? null);
  if (!wrote.ok) {
    await store.updateJson(ROSTER_DOC, (current: unknown) => mergeRoster(current, mine));
  }
}

/** A bare repository of the job's own, holding only what is fetched into it. */
export async function bareRepository(dir: string, botLogin: string): Promise<PublishGit> {
  await mkdir(dir, { recursive: true });
  const identity = botCommitIdentity(botLogin);
  const init = await spawnGit(['init', '--quiet', '--bare', dir], { cwd: dir, identity });
  if (init.exitCode !== 0) {
    throw new EpicflowError('git', `cannot make a bare repository in ${dir}`, {
      details: init.stderr.split('\n').filter((l) => l.trim() !== ''),
    });
  }
  return PublishGit.open(dir, identity);
}

/**
 * The record of a story whose result was refused: failed, with the reason and its details,
 * built on the work job's record when it could be read (its usage was paid for) and the
 * dispatched one when not.
 */
function refused(
  prior: StoryRecord,
  e: unknown,
  workOutcome: string | undefined,
  work: StoryRecord | undefined,
): StoryRecord {
  const [first = '', ...details] = describeError(e).split('\n');
  const base = work ?? prior;
  const said =
    work?.reason === undefined
      ? []
      : [`the work job ended the story ${work.status}: ${work.reason}`];
  const lost =
    isResultRefusal(e, 'missing') && workOutcome !== undefined && workOutcome !== 'success'
      ? ` (the work job ${workOutcome === 'cancelled' ? 'was cancelled' : `ended with ${workOutcome}`} before it handed its result over: its log says why)`
      : '';
  const { mergeCommit: _m, ...rest } = base;
  return {
    ...rest,
    status: 'failed',
    reason: `the publish job refused the work job's result: ${first}${lost}`,
    notes: [...base.notes, ...said, ...details.map((d) => d.trim()).filter((d) => d !== '')],
    finishedAt: new Date().toISOString(),
  };
}

/** The story's record in the result, when the record file reads as one (else undefined). */
async function workRecord(dir: string, expected: { epic: string; story: string; attempt: number }) {
  try {
    return parseResultRecord(await readFile(join(dir, RESULT_FILES.record), 'utf8'), expected)
      .record;
  } catch {
    return undefined;
  }
}

/** How a story's push ended, on its record: merged, or failed with why. */
interface Merged {
  readonly record: StoryRecord;
  readonly pushes: number;
  readonly refusedPush: PushRefusal | undefined;
}

/**
 * A passed story's merge onto the epic branch as GitHub has it, pushed with a lease and made
 * again on a moved head: the push the shell makes (`Pushing`), and what came of it on the
 * record, handed to `then`.
 */
function mergeAndPush(
  ctx: {
    readonly git: PublishGit;
    readonly remote: RemoteGit;
    readonly epicBranch: string;
    readonly storyCommit: string;
    readonly result: ResultRecord;
    readonly story: Story;
    readonly say: (message: string) => void;
  },
  before: StoryRecord,
  fetchedHead: string,
  publishInput: (head: string) => PublishInput,
  then: (merged: Merged) => Promise<Saving<PublishJobResult>>,
): Pushing<PublishJobResult> {
  const { git, remote, epicBranch, storyCommit, result, say } = ctx;
  let epicHead = fetchedHead;
  let gatedTree = false;
  const round = async (n: number): Promise<PushRound<MergeStop>> => {
    if (n > 1) {
      say(`${epicBranch} moved on GitHub; merging again`);
      const moved = (await remote.fetch([epicBranch])).get(epicBranch);
      if (moved === undefined) return { stop: { kind: 'deleted' } };
      epicHead = moved;
    }
    // Another publish job of this attempt (a re-run racing this one) merged it already:
    // the same merge is recorded again, nothing is pushed twice.
    const merged = await git.mergeOf(storyCommit, epicHead);
    if (merged !== null) return { stop: { kind: 'merged', merge: merged } };
    const made = await mergeOnEpic(git, publishInput(epicHead), result);
    if (made.kind === 'conflict') return { stop: made };
    gatedTree = made.gatedTree;
    return { push: made.merge, lease: epicHead };
  };
  return pushing(remote, epicBranch, MAX_PUBLISH_ATTEMPTS, round, async (out) => {
    if (out.kind === 'pushed') await followPush(git, epicBranch, epicHead, out.sha);
    return then(mergedRecord(ctx, before, out, { epicHead, gatedTree }));
  });
}

/** The story's record from how its push ended. */
function mergedRecord(
  ctx: { readonly epicBranch: string; readonly story: Story; readonly say: (m: string) => void },
  before: StoryRecord,
  out: PushOutcome<MergeStop>,
  at: { readonly epicHead: string; readonly gatedTree: boolean },
): Merged {
  const { epicBranch, story, say } = ctx;
  let record = before;
  let refusedPush: PushRefusal | undefined;
  // A conflict ends the round its merge was tried in, as a push would have.
  const pushes = out.pushes + (out.kind === 'stopped' && out.value.kind === 'conflict' ? 1 : 0);
  const { mergeCommit: _m, ...unmerged } = record;
  if (out.kind === 'pushed') {
    record = { ...record, mergeCommit: out.sha };
    if (!at.gatedTree) {
      const note = `merged on ${epicBranch} at ${at.epicHead.slice(0, 12)}, which moved after the work job's gates ran on its merge: the gates of the next story and of the landing run on this tree`;
      record = { ...record, notes: [...record.notes, note] };
      say(note);
    }
    say(`merged into ${epicBranch} (${out.sha.slice(0, 12)})`);
  } else if (out.kind === 'stopped' && out.value.kind === 'merged') {
    record = { ...record, mergeCommit: out.value.merge };
    say(`already merged into ${epicBranch} (${out.value.merge.slice(0, 12)}): nothing to push`);
  } else if (out.kind === 'stopped' && out.value.kind === 'conflict') {
    record = {
      ...unmerged,
      status: 'failed',
      reason: `${out.value.reason} (merged on GitHub after the work job's merge); comment /retry ${story.id} to merge it again with a merge revision`,
    };
  } else if (out.kind === 'refused') {
    refusedPush = out.refused;
    record = { ...unmerged, status: 'failed', reason: out.reason };
  } else {
    record = {
      ...unmerged,
      status: 'failed',
      reason:
        out.kind === 'kept-moving'
          ? `${epicBranch} kept moving: ${MAX_PUBLISH_ATTEMPTS} pushes were rejected; comment /retry ${story.id}`
          : `${epicBranch} was deleted on GitHub while merging`,
    };
  }
  if (pushes > 1 && record.mergeCommit !== undefined) say(`published after ${pushes} pushes`);
  return { record, pushes, refusedPush };
}

/**
 * The publish job's work: the result checked, the story branch pushed; it ends with the merge
 * for the shell to push (a passed story) and the story's record for it to save, and the
 * roster saved after it.
 */
export async function publishStoryJob(
  input: PublishJobInput,
  prepared: PreparedStory,
): Promise<Saving<PublishJobResult> | Pushing<PublishJobResult>> {
  const { story, prior, store, config } = prepared;
  const epic = String(input.epic);
  const epicBranch = epicBranchName(epic);
  const branch = storyBranchName(epic, story.id);
  const events: string[] = [];
  const say = (message: string): void => {
    events.push(message);
    input.onEvent?.(message);
  };
  const bare = join(input.tempDir, 'publish.git');
  const git = await bareRepository(bare, input.botLogin);
  const remote = input.remote.at(bare);
  const heads = await remote.fetch([epicBranch, branch]);
  const fetched = heads.get(epicBranch);
  if (fetched === undefined) {
    throw new EpicflowError('github', `the epic branch ${epicBranch} does not exist on GitHub`, {
      details: ['epicflow creates it when the epic starts; comment /resume on the epic'],
    });
  }
  const epicHead = fetched;
  const storyOnGitHub = heads.get(branch) ?? null;
  const publishInput = (head: string): PublishInput => ({
    artifact: input.resultDir,
    epic,
    story,
    attempt: input.attempt,
    epicHead: head,
    configPaths: [input.configPath],
    allowWorkflowChanges: config.allowWorkflowChanges,
    secrets: input.secrets,
  });
  let result: ResultRecord;
  try {
    result = await readResult(git, publishInput(epicHead));
  } catch (e) {
    if (!isResultRefusal(e)) throw e;
    say(`refused the work job's result: ${describeErrorLine(e)}`);
    const work = await workRecord(input.resultDir, {
      epic,
      story: story.id,
      attempt: input.attempt,
    });
    // A story the work job did not pass keeps its own reason: its branch stays unpushed.
    const failed =
      work !== undefined && work.status !== 'done' && work.status !== 'active'
        ? {
            ...work,
            notes: [...work.notes, `${branch} was not pushed: ${describeErrorLine(e)}`],
          }
        : refused(prior, e, input.workOutcome, work);
    return savingStory(prepared, failed, async (record) => ({
      record,
      gates: [],
      events,
      pushes: 0,
    }));
  }
  const gates = result.gates.map((g) => ({ ...g, output: '' }));
  let record: StoryRecord = result.record;
  // Nothing is lost: the story branch goes to GitHub whatever the outcome, once checked.
  const storyCommit = result.storyCommit;
  if (storyCommit !== result.base && storyCommit !== storyOnGitHub) {
    const pushed = await remote.push(storyCommit, branch, storyOnGitHub);
    if (pushed.ok) {
      say(`pushed ${branch} at ${storyCommit.slice(0, 12)}`);
      // The old work is replaced on GitHub: the next attempt builds on this one.
      if (record.restart === 'fresh') {
        const { restart: _r, ...rest } = record;
        record = rest;
      }
    } else {
      say(`could not push ${branch}: ${pushed.detail}`);
      record = {
        ...record,
        notes: [...record.notes, `${branch} was not pushed: ${pushed.reason}`],
      };
    }
  } else if (record.restart === 'fresh' && storyOnGitHub === null) {
    const { restart: _r, ...rest } = record;
    record = rest;
  }
  // The coder's label and assignee requests, decided again here, on the story's sub-issue only.
  const finish = async (merged: Merged): Promise<Saving<PublishJobResult>> => {
    const { pushes, refusedPush } = merged;
    const requested = await applyIssueRequests(
      prepared.repo,
      config.issueTools,
      prepared.subIssue,
      merged.record,
      say,
    );
    return savingStory(prepared, requested, async (saved) => {
      await saveRoster(store, result.roster, prepared.roster);
      return {
        record: saved,
        gates,
        events,
        pushes,
        ...(refusedPush === undefined ? {} : { refusedPush }),
      };
    });
  };
  if (!isDone(result)) return finish({ record, pushes: 0, refusedPush: undefined });
  return mergeAndPush(
    { git, remote, epicBranch, storyCommit, result, story, say },
    record,
    epicHead,
    (head) => publishInput(head),
    finish,
  );
}
