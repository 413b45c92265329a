/**
 * An issue's body edited by epicflow: the plan section the planner drafted, written
 * below the author's text. GitHub has no conditional write for an issue body, so the
 * edit is an ensure on what is there now: the body is read, `edit` says what it must
 * become, and it is written only when that differs (a repeated edit writes nothing).
 * The caller's compare-and-swap is on its own record, written before.
 */
import { attempt } from '../errors.js';
import type { EnsureAction } from './resource.js';
import { Resource } from './resource.js';

export class IssueBodies extends Resource {
  /** Reads the body, writes `edit(body)` when it differs; what was done. */
  async ensureIssueBody(
    issueNumber: number,
    edit: (body: string) => string,
  ): Promise<Exclude<EnsureAction, 'created'>> {
    const { data } = await attempt(
      `read ${this.fullName}#${issueNumber}`,
      'Issues: read and write',
      () => this.octokit.rest.issues.get({ ...this.base, issue_number: issueNumber }),
    );
    const current = data.body ?? '';
    const next = edit(current);
    if (next === current) return 'unchanged';
    await attempt(
      `edit the body of ${this.fullName}#${issueNumber}`,
      'Issues: read and write',
      () =>
        this.octokit.rest.issues.update({ ...this.base, issue_number: issueNumber, body: next }),
    );
    return 'updated';
  }
}
