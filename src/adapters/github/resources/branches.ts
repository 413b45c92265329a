/** Branches and refs: the default branch, the epic branch and its start commit. */
import { EpicflowError } from '../../../core/errors.js';
import { attempt, githubError, statusOf } from '../errors.js';
import { Resource } from './resource.js';

export class Branches extends Resource {
  async defaultBranch(): Promise<string> {
    const { data } = await attempt(`read ${this.fullName}`, 'Metadata: read', () =>
      this.octokit.rest.repos.get(this.base),
    );
    return data.default_branch;
  }

  /** The commit a branch points at; null when the branch does not exist. */
  async getBranchSha(name: string): Promise<string | null> {
    try {
      const { data } = await this.octokit.rest.git.getRef({ ...this.base, ref: `heads/${name}` });
      return data.object.sha;
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw githubError(`read branch ${name} of ${this.fullName}`, e, 'Contents: read');
    }
  }

  /** Creates the branch at `fromSha` unless it exists (then it is left where it is). */
  async ensureBranch(
    name: string,
    fromSha: string,
  ): Promise<{ sha: string; action: 'created' | 'unchanged' }> {
    const existing = await this.getBranchSha(name);
    if (existing) return { sha: existing, action: 'unchanged' };
    return this.createBranch(name, fromSha);
  }

  /** Creates a branch believed missing; when someone created it meanwhile, theirs stands. */
  async createBranch(
    name: string,
    fromSha: string,
  ): Promise<{ sha: string; action: 'created' | 'unchanged' }> {
    try {
      await this.octokit.rest.git.createRef({
        ...this.base,
        ref: `refs/heads/${name}`,
        sha: fromSha,
      });
      return { sha: fromSha, action: 'created' };
    } catch (e) {
      // Someone created it between our read and our write: theirs stands.
      const now = statusOf(e) === 422 ? await this.getBranchSha(name) : null;
      if (now) return { sha: now, action: 'unchanged' };
      throw githubError(
        `create branch ${name} at ${fromSha} in ${this.fullName}`,
        e,
        'Contents: read and write',
      );
    }
  }

  /**
   * The branch, created when missing with one empty commit on top of `fromBranch`
   * (GitHub refuses a pull request without commits between head and base, so the
   * start commit lets the epic's draft pull request open right away).
   */
  async ensureBranchWithCommit(input: {
    name: string;
    fromBranch: string;
    message: string;
    /** The caller just read that the branch does not exist (spares a read). */
    missing?: boolean;
  }): Promise<{ sha: string; action: 'created' | 'unchanged' }> {
    const existing = input.missing === true ? null : await this.getBranchSha(input.name);
    if (existing) return { sha: existing, action: 'unchanged' };
    const head = await this.getBranchSha(input.fromBranch);
    if (head === null) {
      throw new EpicflowError(
        'github',
        `GitHub: ${this.fullName} has no commit on ${input.fromBranch} to start ${input.name} from`,
      );
    }
    const where = `${input.name} in ${this.fullName}`;
    const { data: parent } = await attempt(
      `read commit ${head} of ${where}`,
      'Contents: read',
      () => this.octokit.rest.git.getCommit({ ...this.base, commit_sha: head }),
    );
    const { data: commit } = await attempt(
      `write the start commit of ${where}`,
      'Contents: read and write',
      () =>
        this.octokit.rest.git.createCommit({
          ...this.base,
          message: input.message,
          tree: parent.tree.sha,
          parents: [head],
        }),
    );
    // Nothing is merged below a start commit: a later merge walk stops here without a read.
    this.cache.merged.set(`:${commit.sha}`, new Map());
    return this.createBranch(input.name, commit.sha);
  }
}
