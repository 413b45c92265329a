/**
 * What keeping epics mergeable and finishing them needs of GitHub: the open epic pull
 * requests into the default branch, one pull request as GitHub has it now (a webhook's
 * word is not taken for a merge), and listing and deleting story branches (an ensure: a branch already gone is fine).
 */
import { attempt, githubError, statusOf } from '../errors.js';
import { Resource } from './resource.js';

/** A pull request as the landing reads it. */
export interface PullFacts {
  readonly number: number;
  readonly state: 'open' | 'closed';
  readonly merged: boolean;
  readonly mergeCommit: string | null;
  readonly draft: boolean;
  readonly headRef: string;
  /** `owner/name` of the head's repository (null: deleted). */
  readonly headRepository: string | null;
  readonly baseRef: string;
}

const EPIC_HEAD = /^epic\/([1-9][0-9]*)$/;

export class Landings extends Resource {
  /** The epics with an open pull request from `epic/<n>` of this repository into `base`. */
  async openEpicPulls(base: string): Promise<{ epic: number; pr: number }[]> {
    const pulls = await attempt(
      `list the open pull requests into ${base} in ${this.fullName}`,
      'Pull requests: read and write',
      () =>
        this.octokit.paginate(this.octokit.rest.pulls.list, {
          ...this.base,
          base,
          state: 'open',
          per_page: 100,
        }),
    );
    const out: { epic: number; pr: number }[] = [];
    for (const p of pulls) {
      const m = EPIC_HEAD.exec(p.head.ref);
      if (m === null || p.head.repo?.full_name !== this.fullName) continue;
      out.push({ epic: Number(m[1]), pr: p.number });
    }
    return out.sort((a, b) => a.epic - b.epic);
  }

  async pull(prNumber: number): Promise<PullFacts> {
    const { data } = await attempt(
      `read pull request ${this.fullName}#${prNumber}`,
      'Pull requests: read and write',
      () => this.octokit.rest.pulls.get({ ...this.base, pull_number: prNumber }),
    );
    return {
      number: data.number,
      state: data.state === 'closed' ? 'closed' : 'open',
      merged: data.merged,
      mergeCommit: data.merge_commit_sha ?? null,
      draft: data.draft === true,
      headRef: data.head.ref,
      headRepository: data.head.repo?.full_name ?? null,
      baseRef: data.base.ref,
    };
  }

  /** How many commits of `branch` `into` does not have (0: `into` contains it). */
  async missingFrom(into: string, branch: string): Promise<number> {
    const { data } = await attempt(
      `compare ${into} with ${branch} in ${this.fullName}`,
      'Contents: read',
      () => this.octokit.rest.repos.compareCommits({ ...this.base, base: into, head: branch }),
    );
    return data.ahead_by;
  }

  /** Deletes a branch; false when it was already gone. */
  async deleteBranch(name: string): Promise<boolean> {
    try {
      await this.octokit.rest.git.deleteRef({ ...this.base, ref: `heads/${name}` });
      return true;
    } catch (e) {
      // GitHub answers 422 ("Reference does not exist") or 404 for a branch already gone.
      if (statusOf(e) === 404 || statusOf(e) === 422) return false;
      throw githubError(`delete branch ${name} of ${this.fullName}`, e, 'Contents: read and write');
    }
  }

  /** The branches whose names start with `prefix` (e.g. `story/12/`). */
  async branchesUnder(prefix: string): Promise<string[]> {
    const refs = await attempt(
      `list the branches ${prefix}* of ${this.fullName}`,
      'Contents: read',
      () =>
        this.octokit.paginate(this.octokit.rest.git.listMatchingRefs, {
          ...this.base,
          ref: `heads/${prefix}`,
          per_page: 100,
        }),
    );
    return refs.map((r) => r.ref.replace(/^refs\/heads\//, '')).sort();
  }
}
