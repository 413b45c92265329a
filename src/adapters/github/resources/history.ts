/**
 * The epic branch's history through the git data API: which stories merged (no
 * clone: the App may run serverless without git).
 */
import { EpicflowError } from '../../../core/errors.js';
import { LAND_TRAILER, STORY_TRAILER, trailerValues } from '../../../core/merge-message.js';
import { attempt } from '../errors.js';
import type { Branches } from './branches.js';
import { readCommits, type CommitFacts, type CommitsRead } from './commits.js';
import { Resource, type RepoScope } from './resource.js';

/** The epic branch's head commit, as the epic view reads it. */
export interface HeadCommit {
  readonly sha: string;
  readonly message: string;
  readonly parents: readonly string[];
  /** The parents' messages, by sha (read with the head: no connection more). */
  readonly parentMessages?: ReadonlyMap<string, string>;
}

export class History extends Resource {
  constructor(
    scope: RepoScope,
    private readonly branches: Branches,
  ) {
    super(scope);
  }

  /**
   * Story id → merge commit, from merge commits with an `Epicflow-Story` trailer on the
   * epic branch's first-parent history, read through the git data API (no clone: the
   * App may run serverless without git). The walk stops at `base` (the commit the epic
   * branch started from) or, without it, at the first commit that is neither a story merge
   * nor a landing — only epicflow moves the epic branch, so that commit is where the branch
   * began.
   *
   * `hints` are commits the caller expects on the way (the merge commits its records
   * name): those not remembered are read in one GraphQL request before the walk, which
   * then asks GitHub one by one only for the commits no hint named. Hints only choose
   * what is read: the walk follows the parents GitHub answers, so a wrong hint costs a
   * read, never a wrong answer.
   */
  async mergedStories(
    epicBranch: string,
    options: {
      base?: string;
      maxCommits?: number;
      /** The branch head as the caller just read it (null: no branch), sparing two reads. */
      head?: HeadCommit | null;
      hints?: Iterable<string>;
    } = {},
  ): Promise<Map<string, string>> {
    const given = options.head;
    const head =
      given === undefined ? await this.branches.getBranchSha(epicBranch) : (given?.sha ?? null);
    if (head === null) return new Map();
    // What lies below a commit never changes: walk only the commits new since the last
    // decision, then take the rest from the walk remembered at the first known one.
    const key = (sha: string): string => `${options.base ?? ''}:${sha}`;
    const cached = this.cache.merged.get(key(head));
    if (cached !== undefined) return new Map(cached);
    const read = await this.prefetch(given?.sha, options.hints, key);
    const walked: { sha: string; stories: string[] }[] = [];
    let below: ReadonlyMap<string, string> = new Map();
    let sha: string | null = head;
    const max = options.maxCommits ?? 1000;
    for (let seen = 0; sha !== null && sha !== options.base; seen++) {
      const known = this.cache.merged.get(key(sha));
      if (known !== undefined) {
        below = known;
        break;
      }
      if (seen >= max) {
        throw new EpicflowError(
          'github',
          `GitHub: ${epicBranch} in ${this.fullName} has more than ${max} first-parent commits ` +
            'without reaching its base; is it really an epic branch?',
        );
      }
      const at: string = sha;
      const facts: CommitFacts | undefined =
        given != null && given.sha === at ? given : read.commits.get(at);
      const message =
        facts === undefined
          ? (read.parentMessages.get(at) ?? given?.parentMessages?.get(at))
          : undefined;
      if (message !== undefined && !fromEpicflow(message) && options.base === undefined) {
        // Neither a story merge nor a landing, whatever its parents (a hinted merge's parent,
        // read with it: the start commit above all): where the branch began, as below.
        this.cache.merged.set(key(at), new Map());
        break;
      }
      const data =
        facts !== undefined
          ? { message: facts.message, parents: facts.parents.map((p) => ({ sha: p })) }
          : (
              await attempt(
                `read commit ${at} of ${epicBranch} in ${this.fullName}`,
                'Contents: read',
                () => this.octokit.rest.git.getCommit({ ...this.base, commit_sha: at }),
              )
            ).data;
      const stories = data.parents.length > 1 ? trailerValues(data.message, STORY_TRAILER) : [];
      // A landing (the default branch merged in, docs/landing.md) has stories merged below it.
      const landing =
        data.parents.length > 1 && trailerValues(data.message, LAND_TRAILER).length > 0;
      if (stories.length === 0 && !landing && options.base === undefined) {
        // Where the branch began: nothing merged below it, now or ever.
        this.cache.merged.set(key(at), new Map());
        break;
      }
      walked.push({ sha: at, stories });
      sha = data.parents[0]?.sha ?? null;
    }
    // Oldest first, so each commit's map is remembered and the newest merge of a story wins.
    let merged = new Map(below);
    for (const { sha: at, stories } of walked.reverse()) {
      merged = new Map(merged);
      for (const story of stories) merged.set(story, at);
      this.cache.merged.set(key(at), merged);
    }
    return new Map(merged);
  }

  /** The hinted commits the walk from `head` may need and nobody remembers, read at once. */
  private async prefetch(
    /** The head the caller gave (no need to read it again). */
    head: string | undefined,
    hints: Iterable<string> | undefined,
    key: (sha: string) => string,
  ): Promise<CommitsRead> {
    const none: CommitsRead = { commits: new Map(), parentMessages: new Map() };
    if (hints === undefined) return none;
    const unknown = [...hints].filter(
      (s) => s !== head && this.cache.merged.get(key(s)) === undefined,
    );
    return unknown.length === 0 ? none : readCommits(this.scope, unknown);
  }
}

/** Whether a commit message carries a story's or a landing's trailer. */
function fromEpicflow(message: string): boolean {
  return (
    trailerValues(message, STORY_TRAILER).length > 0 ||
    trailerValues(message, LAND_TRAILER).length > 0
  );
}
