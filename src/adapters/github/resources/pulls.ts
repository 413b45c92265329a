/** Pull requests: the epic's draft pull request, kept current and marked ready at the end. */
import { attempt, githubError, statusOf } from '../errors.js';
import { Resource, type EnsureAction } from './resource.js';

type EnsurePrResult =
  | {
      readonly action: EnsureAction;
      readonly number: number;
      readonly nodeId: string;
      readonly draft: boolean;
      readonly url: string;
    }
  /** GitHub refuses a pull request without commits; retry once the epic branch moved. */
  | { readonly action: 'no-commits' };

export class Pulls extends Resource {
  /** A pull request's head: its branch, and the repository it lives in (null: deleted). */
  async headOf(prNumber: number): Promise<{ ref: string; repository: string | null }> {
    const { data } = await this.octokit.rest.pulls.get({ ...this.base, pull_number: prNumber });
    return { ref: data.head.ref, repository: data.head.repo?.full_name ?? null };
  }

  /** The open pull request from `head` (a branch of this repository) into `base`. */
  async findOpenPr(head: string, base: string) {
    const { data } = await attempt(
      `list pull requests from ${head} in ${this.fullName}`,
      'Pull requests: read and write',
      () =>
        this.octokit.rest.pulls.list({
          ...this.base,
          head: `${this.owner}:${head}`,
          base,
          state: 'open',
          per_page: 100,
        }),
    );
    return data[0] ?? null;
  }

  /** The epic's draft pull request, found by its head branch; title and body kept current. */
  async ensureDraftPr(input: {
    head: string;
    base: string;
    title: string;
    body: string;
    /** The caller just read that no pull request is open (spares a read). */
    missing?: boolean;
  }): Promise<EnsurePrResult> {
    const where = `the pull request ${input.head} → ${input.base} in ${this.fullName}`;
    const existing = input.missing === true ? null : await this.findOpenPr(input.head, input.base);
    if (existing) {
      const result = {
        number: existing.number,
        nodeId: existing.node_id,
        draft: existing.draft === true,
        url: existing.html_url,
      };
      if (existing.title === input.title && (existing.body ?? '') === input.body)
        return { ...result, action: 'unchanged' };
      await attempt(`update ${where}`, 'Pull requests: read and write', () =>
        this.octokit.rest.pulls.update({
          ...this.base,
          pull_number: existing.number,
          title: input.title,
          body: input.body,
        }),
      );
      return { ...result, action: 'updated' };
    }
    try {
      const { data } = await this.octokit.rest.pulls.create({
        ...this.base,
        head: input.head,
        base: input.base,
        title: input.title,
        body: input.body,
        draft: true,
      });
      return {
        action: 'created',
        number: data.number,
        nodeId: data.node_id,
        draft: data.draft === true,
        url: data.html_url,
      };
    } catch (e) {
      const message = String(
        (e as { response?: { data?: { message?: unknown } } }).response?.data?.message ?? '',
      );
      if (statusOf(e) === 422 && /no commits between/i.test(message))
        return { action: 'no-commits' };
      if (statusOf(e) === 422 && /already exists/i.test(message)) {
        const raced = await this.findOpenPr(input.head, input.base);
        if (raced)
          return {
            action: 'unchanged',
            number: raced.number,
            nodeId: raced.node_id,
            draft: raced.draft === true,
            url: raced.html_url,
          };
      }
      throw githubError(`create ${where}`, e, 'Pull requests: read and write');
    }
  }

  /** Marks a draft ready for review (GraphQL only); false when it was not a draft. */
  async markReadyForReview(
    prNumber: number,
    /** The pull request's node id, when the caller just read it as a draft (spares a read). */
    knownDraftNodeId?: string,
  ): Promise<boolean> {
    const where = `${this.fullName}#${prNumber}`;
    const data =
      knownDraftNodeId !== undefined
        ? { draft: true, node_id: knownDraftNodeId }
        : (
            await attempt(`read pull request ${where}`, 'Pull requests: read and write', () =>
              this.octokit.rest.pulls.get({ ...this.base, pull_number: prNumber }),
            )
          ).data;
    if (data.draft !== true) return false;
    await attempt(`mark ${where} ready for review`, 'Pull requests: read and write', () =>
      this.octokit.graphql(
        `mutation MarkReady($id: ID!) {
          markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } }
        }`,
        { id: data.node_id },
      ),
    );
    return true;
  }

  /** Converts a pull request back to a draft (GraphQL only), by its node id. */
  async convertToDraft(prNumber: number, nodeId: string): Promise<void> {
    await attempt(
      `convert ${this.fullName}#${prNumber} to a draft`,
      'Pull requests: read and write',
      () =>
        this.octokit.graphql(
          `mutation ConvertToDraft($id: ID!) {
            convertPullRequestToDraft(input: { pullRequestId: $id }) { pullRequest { isDraft } }
          }`,
          { id: nodeId },
        ),
    );
  }
}
