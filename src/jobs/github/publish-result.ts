/**
 * The publish side of a story (docs/security.md, "The publish side"): the job that holds the
 * write credential and runs nothing the agent wrote. It reads the work job's result (a record
 * and a bundle of the story's commits), re-derives from the objects what it must trust — the
 * commits are the ones the record names and descend from the epic, the perimeter, no new
 * gitlink or link leaving the repository, the existing tests, no credential — merges without a
 * work tree and pushes the merge with a lease on the epic head it read. What it takes on trust
 * is what epicflow's own process measured in the work job: gate runs, the verdict, usage.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PublishGit } from '../../adapters/git/publish-git.js';
import type { PushResult } from '../../adapters/git/remote-git.js';
import { EpicflowError } from '../../core/errors.js';
import { buildMergeMessage } from '../../core/merge-message.js';
import { epicBranchName, type Story, type StoryRecord } from '../../core/model.js';
import { publishRefusal } from '../../core/publish/checks.js';
import {
  DEFAULT_MAX_BUNDLE_BYTES,
  MAX_RECORD_BYTES,
  MAX_RESULT_COMMITS,
  parseResultRecord,
  RESULT_FILES,
  ResultRefusal,
  type ResultRecord,
} from '../../core/publish/result.js';
import { commitLinks } from '../../engine/story/checks.js';

interface PublishPorts {
  /** The publish job's bare repository, holding the epic branch's head. */
  readonly git: PublishGit;
  /** Pushes `sha` to `branch` only while GitHub has it at `expected` (`RemoteGit.push`). */
  readonly push: (sha: string, branch: string, expected: string | null) => Promise<PushResult>;
}

export interface PublishInput {
  /** The folder the work job's artifact was downloaded to (`result.json`, `result.bundle`). */
  readonly artifact: string;
  readonly epic: string;
  /** The story as the approved plan has it, read by the publish job (never from the result). */
  readonly story: Story;
  readonly attempt: number;
  /** The epic branch's head on GitHub as the publish job fetched it into `git`. */
  readonly epicHead: string;
  /** The epicflow config file(s) and `allowWorkflowChanges`, from the trusted config. */
  readonly configPaths: readonly string[];
  readonly allowWorkflowChanges: boolean;
  /** Values of the secrets the publish job holds (its token, the App key, model keys). */
  readonly secrets: readonly string[];
  readonly maxBundleBytes?: number;
  /** The most commits the result may bring (`MAX_RESULT_COMMITS` unless set). */
  readonly maxCommits?: number;
}

export type PublishOutcome =
  /** Merged and pushed: `record` is the story's record with its merge commit. */
  | {
      readonly kind: 'merged';
      readonly result: ResultRecord;
      readonly merge: string;
      readonly record: StoryRecord;
      /** The merged tree is the one the work job's gates ran on (the epic did not move since). */
      readonly gatedTree: boolean;
    }
  /** The story did not pass in the work job (or has no commit): nothing to merge. */
  | { readonly kind: 'not-merged'; readonly result: ResultRecord }
  /** The story conflicts with the epic head: it goes back for a merge revision. */
  | {
      readonly kind: 'conflict';
      readonly result: ResultRecord;
      readonly conflicts: readonly string[];
      readonly reason: string;
    }
  /** GitHub refused the push (`stale`: the epic branch moved since it was read). */
  | {
      readonly kind: 'push-refused';
      readonly result: ResultRecord;
      readonly merge: string;
      readonly refused: Exclude<PushResult, { ok: true }>;
    };

/**
 * Reads, checks, merges and pushes one work job's result. A result that fails a check is
 * refused (`ResultRefusal`, tag `result`) with nothing merged or pushed and no ref moved.
 */
export async function publishResult(
  ports: PublishPorts,
  input: PublishInput,
): Promise<PublishOutcome> {
  const result = await readResult(ports.git, input);
  if (!isDone(result)) return { kind: 'not-merged', result };
  return mergeResult(ports, input, result);
}

/** The work job measured the story passing, with a commit to merge. */
export function isDone(result: ResultRecord): boolean {
  return result.record.status === 'done' && result.record.storyCommit !== undefined;
}

/**
 * Reads one work job's result and re-derives from its objects everything the publish job
 * must trust before it pushes any of it (the story branch or the merge): the commits are the
 * record's and grow from the epic branch, and every commit they bring passes the perimeter,
 * the existing-tests guard and the secret scan. The objects stay in `git` (unreferenced) for
 * the pushes; a result that fails a check is refused (`ResultRefusal`).
 */
export async function readResult(git: PublishGit, input: PublishInput): Promise<ResultRecord> {
  const { story } = input;
  const epicBranch = epicBranchName(input.epic);
  if ((await git.commitOf(input.epicHead)) !== input.epicHead) {
    throw new EpicflowError(
      'git',
      `the epic head ${input.epicHead} is not a commit of ${git.gitDir}`,
      { details: [`fetch ${epicBranch} into it before publishing`] },
    );
  }
  const result = parseResultRecord(
    await readRecord(input.artifact, (path) => `the work job's result record is missing: ${path}`),
    {
      epic: input.epic,
      story: story.id,
      attempt: input.attempt,
    },
  );
  // A story without commits of its own brings no bundle; one with them always does.
  if (result.storyCommit === result.base && result.gated === null && !isDone(result)) {
    return result;
  }
  // Whatever an earlier publish of this repository left in the quarantine goes first.
  await git.dropQuarantine();
  try {
    const imported = await git.importBundle(join(input.artifact, RESULT_FILES.bundle), {
      maxBytes: input.maxBundleBytes ?? DEFAULT_MAX_BUNDLE_BYTES,
      withGated: result.gated !== null,
    });
    await checkLineage(git, result, imported, input.epicHead);
    await checkCommits(git, input, result.storyCommit);
    return result;
  } finally {
    await git.dropQuarantine();
  }
}

/**
 * The text of the result record in the downloaded artifact `artifact`, refused when it is
 * missing (`missing` says so, given the path) or larger than `MAX_RECORD_BYTES`.
 */
export async function readRecord(
  artifact: string,
  missing: (path: string) => string,
): Promise<string> {
  const path = join(artifact, RESULT_FILES.record);
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    throw new ResultRefusal('missing', missing(path));
  }
  if (size > MAX_RECORD_BYTES) {
    throw new ResultRefusal(
      'too-large',
      `the result record is ${size} bytes, more than the ${MAX_RECORD_BYTES} allowed`,
    );
  }
  return readFile(path, 'utf8');
}

/** The bundle holds the commits the record names, and they grow from the epic branch. */
async function checkLineage(
  git: PublishGit,
  result: ResultRecord,
  imported: { readonly story: string; readonly gated: string | null },
  epicHead: string,
): Promise<void> {
  const lacks = (field: string, sha: string, holds: string | null): ResultRefusal =>
    new ResultRefusal(
      'missing-objects',
      `the result record's ${field} ${sha} is not in the result bundle`,
      [`the bundle holds ${holds ?? 'no such commit'}`],
    );
  if (imported.story !== result.storyCommit) {
    throw lacks('storyCommit', result.storyCommit, imported.story);
  }
  if (result.gated !== null && imported.gated !== result.gated) {
    throw lacks('gated', result.gated, imported.gated);
  }
  const onEpic = async (field: string, sha: string): Promise<void> => {
    if ((await git.commitOf(sha)) !== sha || !(await git.isAncestor(sha, epicHead))) {
      throw new ResultRefusal(
        'not-descended',
        `the result record's ${field} ${sha} is not on the epic branch (at ${epicHead})`,
      );
    }
  };
  await onEpic('base', result.base);
  await onEpic('epicHead', result.epicHead);
  if (!(await git.isAncestor(result.base, result.storyCommit))) {
    throw new ResultRefusal(
      'not-descended',
      `the story commit ${result.storyCommit} does not descend from the epic base ${result.base}`,
    );
  }
  if (result.gated !== null) {
    const parents = await git.parentsOf(result.gated);
    const expected = [result.epicHead, result.storyCommit];
    if (parents.join(' ') !== expected.join(' ')) {
      throw new ResultRefusal(
        'malformed',
        `the result record's gated ${result.gated} is not the merge of storyCommit into epicHead`,
        [`its parents: ${parents.join(', ') || 'none'}`, `expected: ${expected.join(', ')}`],
      );
    }
  }
}

/** What the story commit brings over the epic head passes every check, or is refused. */
async function checkCommits(git: PublishGit, input: PublishInput, commit: string): Promise<void> {
  const { story, epicHead } = input;
  const count = await git.countCommits(epicHead, commit);
  const most = input.maxCommits ?? MAX_RESULT_COMMITS;
  if (count > most) {
    throw new ResultRefusal(
      'too-large',
      `the result brings ${count} commits, more than the ${most} allowed`,
    );
  }
  const changes = await git.changedPaths(epicHead, commit);
  const refusal = publishRefusal({
    story,
    configPaths: input.configPaths,
    allowWorkflowChanges: input.allowWorkflowChanges,
    changes,
    links: await commitLinks(git, commit, changes),
    diff: changes.length === 0 ? '' : await git.diff(epicHead, commit),
    commits: await git.commitsBetween(epicHead, commit),
    secrets: input.secrets,
  });
  if (refusal !== null) throw refusal;
}

/**
 * Merges a checked result (`readResult`) into the epic head without a work tree and pushes
 * the merge with a lease on that head. A head that moved since the result was read is
 * merged the same way (its new commits are the epic's own, already checked when they came).
 */
async function mergeResult(
  ports: PublishPorts,
  input: PublishInput,
  result: ResultRecord,
): Promise<Exclude<PublishOutcome, { kind: 'not-merged' }>> {
  const { git } = ports;
  const epicBranch = epicBranchName(input.epic);
  const made = await mergeOnEpic(git, input, result);
  if (made.kind === 'conflict') return made;
  const { merge, gatedTree } = made;
  const pushed = await ports.push(merge, epicBranch, input.epicHead);
  if (!pushed.ok) return { kind: 'push-refused', result, merge, refused: pushed };
  await followPush(git, epicBranch, input.epicHead, merge);
  return {
    kind: 'merged',
    result,
    merge,
    record: { ...result.record, mergeCommit: merge, storyCommit: result.storyCommit },
    gatedTree,
  };
}

/**
 * The merge of a checked result (`readResult`) into `input.epicHead`, made without a work
 * tree and not pushed: the merge commit, and whether its tree is the one the work job's
 * gates ran on; or the paths it conflicts on.
 */
export async function mergeOnEpic(
  git: PublishGit,
  input: PublishInput,
  result: ResultRecord,
): Promise<
  | Extract<PublishOutcome, { kind: 'conflict' }>
  | { readonly kind: 'made'; readonly merge: string; readonly gatedTree: boolean }
> {
  const { story, epicHead } = input;
  const epicBranch = epicBranchName(input.epic);
  const commit = result.storyCommit;
  const message = buildMergeMessage({
    story: story.id,
    title: story.title,
    chain: result.record.executors,
  });
  const merged = await mergeOnto(git, epicHead, commit, message);
  if (!merged.ok) {
    return {
      kind: 'conflict',
      result,
      conflicts: merged.conflicts,
      // As the merge in the work job says it.
      reason: `merge conflict with ${epicBranch}: ${merged.conflicts.join(', ')}`,
    };
  }
  const gatedTree = result.gated !== null && (await git.treeOf(result.gated)) === merged.tree;
  return { kind: 'made', merge: merged.merge, gatedTree };
}

/**
 * `commit` merged onto `head` without a work tree: the merge commit (parents `head`, then
 * `commit`, with `message`) and its tree; or the paths the two conflict on.
 */
export async function mergeOnto(
  git: PublishGit,
  head: string,
  commit: string,
  message: string,
): Promise<
  | { readonly ok: true; readonly merge: string; readonly tree: string }
  | { readonly ok: false; readonly conflicts: readonly string[] }
> {
  const merged = await git.mergeTree(head, commit);
  if (!merged.ok) return merged;
  const merge = await git.commitTree(merged.tree, [head, commit], message);
  return { ok: true, merge, tree: merged.tree };
}

/**
 * After `merge` was pushed onto `epicHead`, the local epic branch follows GitHub's
 * (compare-and-swap: only when absent or at the head it read).
 */
export async function followPush(
  git: PublishGit,
  epicBranch: string,
  epicHead: string,
  merge: string,
): Promise<void> {
  const ref = `refs/heads/${epicBranch}`;
  const local = await git.commitOf(ref);
  if (local === null || local === epicHead) await git.updateRef(ref, merge, local);
}
