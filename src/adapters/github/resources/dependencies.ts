/**
 * The planner's stories as sub-issues (`planner.subIssues: true`): their "blocked by"
 * dependencies made exactly what the plan says, and a story the plan dropped unlinked
 * from the epic. Each an ensure: what is already so is not written again.
 */
import { attempt } from '../errors.js';
import { Resource } from './resource.js';

export class Dependencies extends Resource {
  /** Makes `blockers` (database ids) exactly the issues blocking `issueNumber`. */
  async ensureBlockedBy(issueNumber: number, blockers: readonly number[]): Promise<void> {
    const current = await attempt(
      `list the issues blocking ${this.fullName}#${issueNumber}`,
      'Issues: read and write',
      () =>
        this.octokit.paginate(this.octokit.rest.issues.listDependenciesBlockedBy, {
          ...this.base,
          issue_number: issueNumber,
          per_page: 100,
        }),
    );
    const have = new Set(current.map((i) => i.id));
    for (const id of blockers) {
      if (have.has(id)) continue;
      await attempt(`mark ${this.fullName}#${issueNumber} blocked`, 'Issues: read and write', () =>
        this.octokit.rest.issues.addBlockedByDependency({
          ...this.base,
          issue_number: issueNumber,
          issue_id: id,
        }),
      );
    }
    for (const id of have) {
      if (blockers.includes(id)) continue;
      await attempt(
        `remove a blocker of ${this.fullName}#${issueNumber}`,
        'Issues: read and write',
        () =>
          this.octokit.rest.issues.removeDependencyBlockedBy({
            ...this.base,
            issue_number: issueNumber,
            issue_id: id,
          }),
      );
    }
  }

  /** Takes the issue (database id) out of `parent`'s sub-issues. */
  async unlinkSubIssue(parent: number, subIssueId: number): Promise<void> {
    await attempt(
      `remove a sub-issue of ${this.fullName}#${parent}`,
      'Issues: read and write',
      () =>
        this.octokit.rest.issues.removeSubIssue({
          ...this.base,
          issue_number: parent,
          sub_issue_id: subIssueId,
        }),
    );
  }
}
