/**
 * Labels and assignees of one issue, as idempotent ensures: read the issue once, then add only
 * what it lacks and remove only what it has. An empty list asks for nothing and sends nothing
 * (GitHub's label endpoint would read an empty list as "remove them all").
 */
import { attempt, statusOf, githubError } from '../errors.js';
import { Resource } from './resource.js';

interface LabelChanges {
  /** Labels added, as asked (the issue had none of these names, compared without case). */
  readonly added: readonly string[];
  /** Labels removed, as the issue spelled them. */
  readonly removed: readonly string[];
}

const has = (list: readonly string[], name: string): string | undefined =>
  list.find((n) => n.toLowerCase() === name.toLowerCase());

export class IssueTools extends Resource {
  private async current(issue: number): Promise<{ labels: string[]; assignees: string[] }> {
    const { data } = await attempt(`read ${this.fullName}#${issue}`, 'Issues: read and write', () =>
      this.octokit.rest.issues.get({ ...this.base, issue_number: issue }),
    );
    return {
      labels: data.labels.map((l) => (typeof l === 'string' ? l : (l.name ?? ''))),
      assignees: (data.assignees ?? []).map((a) => a.login),
    };
  }

  /** Adds `add` and removes `remove` on `issue`; a label already there or already gone changes nothing. */
  async ensureIssueLabels(
    issue: number,
    change: { readonly add: readonly string[]; readonly remove: readonly string[] },
  ): Promise<LabelChanges> {
    if (change.add.length === 0 && change.remove.length === 0) return { added: [], removed: [] };
    const { labels } = await this.current(issue);
    const added = change.add.filter((n) => has(labels, n) === undefined);
    if (added.length > 0) {
      await attempt(
        `add the labels ${added.join(', ')} to ${this.fullName}#${issue}`,
        'Issues: read and write',
        () =>
          this.octokit.rest.issues.addLabels({ ...this.base, issue_number: issue, labels: added }),
      );
    }
    const removed: string[] = [];
    for (const name of change.remove) {
      const there = has(labels, name);
      if (there === undefined) continue;
      try {
        await this.octokit.rest.issues.removeLabel({
          ...this.base,
          issue_number: issue,
          name: there,
        });
        removed.push(there);
      } catch (e) {
        // Someone removed it between our read and our write: gone is what was asked.
        if (statusOf(e) === 404) continue;
        throw githubError(
          `remove the label ${there} from ${this.fullName}#${issue}`,
          e,
          'Issues: read and write',
        );
      }
    }
    return { added, removed };
  }

  /**
   * Assigns `logins` to `issue` unless assigned already: `assigned` those now assigned that
   * were not before, `refused` those GitHub left out (it cannot assign a login without access,
   * and says so by leaving it out, not with an error).
   */
  async ensureAssignees(
    issue: number,
    logins: readonly string[],
  ): Promise<{ readonly assigned: readonly string[]; readonly refused: readonly string[] }> {
    if (logins.length === 0) return { assigned: [], refused: [] };
    const before = (await this.current(issue)).assignees;
    const wanted = logins.filter((l) => has(before, l) === undefined);
    if (wanted.length === 0) return { assigned: [], refused: [] };
    const { data } = await attempt(
      `assign ${wanted.join(', ')} to ${this.fullName}#${issue}`,
      'Issues: read and write',
      () =>
        this.octokit.rest.issues.addAssignees({
          ...this.base,
          issue_number: issue,
          assignees: wanted,
        }),
    );
    const after = (data.assignees ?? []).map((a) => a.login);
    const assigned: string[] = [];
    const refused: string[] = [];
    for (const login of wanted) {
      const now = has(after, login);
      if (now === undefined) refused.push(login);
      else assigned.push(now);
    }
    return { assigned, refused };
  }
}
