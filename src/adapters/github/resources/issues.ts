/** Issues and sub-issues: the epic, its stories' sub-issues and their dependencies. */
import { EpicflowError } from '../../../core/errors.js';
import { attempt } from '../errors.js';
import {
  epicMarker,
  hasMarker,
  storyMarker as storyMarkerOf,
  withMarkers,
} from '../../../core/epic/markers.js';
import { Resource, type EnsureAction } from './resource.js';

export interface IssueSummary {
  readonly number: number;
  /** Database id (what the sub-issue and dependency endpoints take). */
  readonly id: number;
  readonly nodeId: string;
  readonly title: string;
  readonly body: string;
  readonly state: 'open' | 'closed';
  readonly author: string;
}

interface RawIssue {
  readonly number: number;
  readonly id: number;
  readonly node_id: string;
  readonly title: string;
  readonly body?: string | null;
  readonly state: string;
  readonly user: { readonly login: string } | null;
  readonly pull_request?: unknown;
}

function summary(i: RawIssue): IssueSummary {
  return {
    number: i.number,
    id: i.id,
    nodeId: i.node_id,
    title: i.title,
    body: i.body ?? '',
    state: i.state === 'closed' ? 'closed' : 'open',
    author: i.user?.login ?? '',
  };
}

/** An issue or pull request with its labels, as a webhook payload carries one. */
interface LabelledIssue {
  readonly number: number;
  readonly title: string;
  readonly body: string;
  readonly labels: readonly string[];
  readonly isPullRequest: boolean;
}

export class Issues extends Resource {
  /** An issue (or pull request) with its labels (the summary has none). */
  async labelledIssue(number: number): Promise<LabelledIssue> {
    try {
      const { data } = await this.octokit.rest.issues.get({ ...this.base, issue_number: number });
      return {
        number: data.number,
        title: data.title,
        body: data.body ?? '',
        labels: data.labels.map((l) => (typeof l === 'string' ? l : (l.name ?? ''))),
        isPullRequest: data.pull_request !== undefined,
      };
    } catch (e) {
      if (e instanceof EpicflowError) throw e;
      throw new EpicflowError('github', `GitHub: cannot read ${this.fullName}#${number}`, {
        cause: e,
      });
    }
  }

  async getIssue(issueNumber: number): Promise<IssueSummary> {
    const { data } = await attempt(
      `read ${this.fullName}#${issueNumber}`,
      'Issues: read and write',
      () => this.octokit.rest.issues.get({ ...this.base, issue_number: issueNumber }),
    );
    return summary(data);
  }

  async listSubIssues(parent: number): Promise<IssueSummary[]> {
    const subs = await attempt(
      `list the sub-issues of ${this.fullName}#${parent}`,
      'Issues: read and write',
      () =>
        this.octokit.paginate(this.octokit.rest.issues.listSubIssues, {
          ...this.base,
          issue_number: parent,
          per_page: 100,
        }),
    );
    return subs.map(summary);
  }

  /** Issues that block this one (GitHub's issue dependencies). */
  async blockedBy(issueNumber: number): Promise<IssueSummary[]> {
    const list = await attempt(
      `list the issues blocking ${this.fullName}#${issueNumber}`,
      'Issues: read and write',
      () =>
        this.octokit.paginate(this.octokit.rest.issues.listDependenciesBlockedBy, {
          ...this.base,
          issue_number: issueNumber,
          per_page: 100,
        }),
    );
    return list.map(summary);
  }

  /**
   * The story's sub-issue of `parent`, found by its marker: created and linked when
   * missing, its title and body brought up to date when they differ. An issue we
   * created whose link was lost (crash between the two calls) is linked, not duplicated.
   */
  async ensureSubIssue(input: {
    parent: number;
    storyId: string;
    title: string;
    body: string;
    /**
     * What the caller already read in this decision, sparing a request per story: the
     * parent's sub-issues, and (lazily, shared by the stories) our recent issues.
     */
    known?: {
      readonly subIssues: readonly IssueSummary[];
      readonly recent: () => Promise<readonly IssueSummary[]>;
    };
  }): Promise<IssueSummary & { action: EnsureAction | 'linked' }> {
    const storyMarker = storyMarkerOf(input.storyId);
    const epicOf = epicMarker(input.parent);
    const body = withMarkers(input.body, [storyMarker, epicOf]);
    const ours = (i: IssueSummary): boolean =>
      this.isOurs(i.author) && hasMarker(i.body, storyMarker);

    const subs = input.known?.subIssues ?? (await this.listSubIssues(input.parent));
    const linked = subs.find(ours);
    if (linked) return this.syncIssue(linked, input.title, body);

    const recent = await (input.known?.recent ?? (() => this.recentIssues()))();
    const orphan = recent.find((i) => ours(i) && hasMarker(i.body, epicOf)) ?? null;
    const issue =
      orphan ??
      (await this.createIssue(
        input.title,
        body,
        `create the sub-issue for story ${input.storyId} of ${this.fullName}#${input.parent}`,
      ));
    await attempt(
      `add #${issue.number} as a sub-issue of ${this.fullName}#${input.parent}`,
      'Issues: read and write',
      () =>
        this.octokit.rest.issues.addSubIssue({
          ...this.base,
          issue_number: input.parent,
          sub_issue_id: issue.id,
        }),
    );
    if (!orphan) return { ...issue, action: 'created' };
    const synced = await this.syncIssue(orphan, input.title, body);
    return { ...synced, action: 'linked' };
  }

  private async createIssue(title: string, body: string, action: string): Promise<IssueSummary> {
    const { data } = await attempt(action, 'Issues: read and write', () =>
      this.octokit.rest.issues.create({ ...this.base, title, body }),
    );
    return summary(data);
  }

  /** Our 100 most recent issues (a crash can leave one created but not linked). */
  async recentIssues(): Promise<IssueSummary[]> {
    const { data } = await attempt(
      `list recent issues of ${this.botLogin} in ${this.fullName}`,
      'Issues: read and write',
      () =>
        this.octokit.rest.issues.listForRepo({
          ...this.base,
          creator: this.botLogin,
          state: 'all',
          sort: 'created',
          direction: 'desc',
          per_page: 100,
        }),
    );
    return data.filter((i) => i.pull_request === undefined).map(summary);
  }

  private async syncIssue(
    issue: IssueSummary,
    title: string,
    body: string,
  ): Promise<IssueSummary & { action: EnsureAction }> {
    if (issue.title === title && issue.body === body) return { ...issue, action: 'unchanged' };
    await attempt(`update ${this.fullName}#${issue.number}`, 'Issues: read and write', () =>
      this.octokit.rest.issues.update({ ...this.base, issue_number: issue.number, title, body }),
    );
    return { ...issue, title, body, action: 'updated' };
  }

  /**
   * Closes the issue unless it is closed already; true when it changed. `known` is its
   * state as the caller just read it (spares the read).
   */
  closeIssue(issueNumber: number, known?: 'open' | 'closed'): Promise<boolean> {
    return this.setIssueState(issueNumber, 'closed', known);
  }

  reopenIssue(issueNumber: number, known?: 'open' | 'closed'): Promise<boolean> {
    return this.setIssueState(issueNumber, 'open', known);
  }

  private async setIssueState(
    issueNumber: number,
    state: 'open' | 'closed',
    known: 'open' | 'closed' | undefined,
  ): Promise<boolean> {
    const current = known ?? (await this.getIssue(issueNumber)).state;
    if (current === state) return false;
    await attempt(
      `${state === 'closed' ? 'close' : 'reopen'} ${this.fullName}#${issueNumber}`,
      'Issues: read and write',
      () =>
        this.octokit.rest.issues.update({
          ...this.base,
          issue_number: issueNumber,
          state,
          ...(state === 'closed' ? { state_reason: 'completed' as const } : {}),
        }),
    );
    return true;
  }
}
