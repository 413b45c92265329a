/**
 * Issue and pull request comments: epicflow's sticky comments, one per marker,
 * found again by marker and author and updated in place; plain replies.
 */
import { attempt, githubError, statusOf } from '../errors.js';
import { hasMarker, markerNames, withMarkers } from '../../../core/epic/markers.js';
import { Resource, type EnsureAction } from './resource.js';

export class Comments extends Resource {
  /**
   * The latest listing of each issue's comments by this port: our marked comments
   * in it, and the markers asked about since. A listing answers once for each
   * marker (one decision asks about several: the status, an error, the
   * violations), so a second marker costs no request; asked again, a marker is
   * looked up anew (a person may have deleted the comment since).
   */
  private readonly listings = new Map<
    number,
    { readonly found: Map<string, { id: number; body: string }>; readonly asked: Set<string> }
  >();

  /**
   * Listings someone else read (the epic view's first comments of an issue): our marked
   * comments in them, answered once per marker like a listing of our own; a marker not
   * in an incomplete one is looked up as usual.
   */
  private readonly given = new Map<
    number,
    {
      readonly found: Map<string, { id: number; body: string }>;
      readonly complete: boolean;
      readonly asked: Set<string>;
    }
  >();

  /** Takes the first comments of an issue as read elsewhere (oldest first). */
  knowComments(
    issueNumber: number,
    listing: {
      readonly complete: boolean;
      readonly comments: readonly { id: number; body: string; author: string }[];
    },
  ): void {
    const found = new Map<string, { id: number; body: string }>();
    for (const c of listing.comments) {
      if (!this.isOurs(c.author)) continue;
      for (const name of markerNames(c.body)) {
        if (found.has(name)) continue;
        found.set(name, { id: c.id, body: c.body });
        // Fresher than what this process last wrote: another writer (a story job) may have
        // written the same body since, which then needs no write.
        this.cache.comments.set(this.commentKey(issueNumber, name), { id: c.id, body: c.body });
      }
    }
    this.given.set(issueNumber, { found, complete: listing.complete, asked: new Set() });
  }

  private commentKey(issueNumber: number, markerName: string): string {
    return `${this.fullName}#${issueNumber}:${markerName}`;
  }

  /** Our marked comment as just written, wherever it is remembered. */
  private rememberComment(
    issueNumber: number,
    markerName: string,
    comment: { id: number; body: string },
  ): void {
    this.cache.comments.set(this.commentKey(issueNumber, markerName), comment);
    this.listings.get(issueNumber)?.found.set(markerName, comment);
  }

  /** A comment found gone (deleted by someone): forgotten wherever it is remembered. */
  private forgetComment(issueNumber: number, markerName: string, id: number): void {
    this.cache.comments.delete(this.commentKey(issueNumber, markerName));
    const found = this.listings.get(issueNumber)?.found;
    if (found?.get(markerName)?.id === id) found.delete(markerName);
  }

  /**
   * Our comment carrying the marker (author = the bot or a peer: users cannot hijack a marker).
   * A marker not yet asked about since this port listed the issue is answered from
   * that listing; a comment remembered from an earlier event is checked with one
   * read of it; the comments of the issue are listed only when it is unknown or gone.
   */
  async findComment(
    issueNumber: number,
    markerName: string,
  ): Promise<{ id: number; body: string } | null> {
    const given = this.given.get(issueNumber);
    if (given !== undefined && !given.asked.has(markerName)) {
      given.asked.add(markerName);
      const found = given.found.get(markerName);
      if (found !== undefined) return found;
      if (given.complete) return null;
    }
    const listing = this.listings.get(issueNumber);
    if (listing !== undefined && !listing.asked.has(markerName)) {
      listing.asked.add(markerName);
      return listing.found.get(markerName) ?? null;
    }
    const key = this.commentKey(issueNumber, markerName);
    const known = this.cache.comments.get(key);
    if (known !== undefined) {
      const current = await this.readComment(known.id);
      if (current !== null && hasMarker(current.body, markerName)) {
        this.cache.comments.set(key, current);
        return current;
      }
      this.cache.comments.delete(key);
    }
    return this.listForMarker(issueNumber, markerName);
  }

  /** One comment of ours by id; null when it was deleted (or is not ours: remembered for a peer). */
  private async readComment(id: number): Promise<{ id: number; body: string } | null> {
    try {
      const { data } = await this.octokit.rest.issues.getComment({ ...this.base, comment_id: id });
      return this.isOurs(data.user?.login) ? { id: data.id, body: data.body ?? '' } : null;
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw githubError(`read comment ${id} in ${this.fullName}`, e, 'Issues: read and write');
    }
  }

  /** Lists the issue's comments, remembering every marked comment of ours on it. */
  private async listForMarker(
    issueNumber: number,
    markerName: string,
  ): Promise<{ id: number; body: string } | null> {
    const comments = await attempt(
      `list the comments of ${this.fullName}#${issueNumber}`,
      'Issues: read and write',
      () =>
        this.octokit.paginate(this.octokit.rest.issues.listComments, {
          ...this.base,
          issue_number: issueNumber,
          per_page: 100,
        }),
    );
    const found = new Map<string, { id: number; body: string }>();
    for (const c of comments) {
      if (!this.isOurs(c.user?.login)) continue;
      const body = c.body ?? '';
      for (const name of markerNames(body)) {
        // The first comment per marker is the one epicflow keeps.
        if (found.has(name)) continue;
        found.set(name, { id: c.id, body });
        this.cache.comments.set(this.commentKey(issueNumber, name), { id: c.id, body });
      }
    }
    // "No such comment" is remembered for this listing only: another instance of the
    // App may create it meanwhile.
    this.listings.set(issueNumber, { found, asked: new Set([markerName]) });
    return found.get(markerName) ?? null;
  }

  /**
   * One comment per marker, updated in place. `fullTextUrl` is linked when the body
   * has to be truncated to GitHub's limit.
   */
  async ensureComment(input: {
    issueNumber: number;
    marker: string;
    body: string;
    fullTextUrl?: string;
    /**
     * Whether the comment's current body already says what `body` says (default: the
     * same text); then nothing is written.
     */
    same?: (current: string, wanted: string) => boolean;
  }): Promise<{ id: number; action: EnsureAction }> {
    const body = withMarkers(input.body, [input.marker], input.fullTextUrl);
    const same = input.same ?? ((current: string, wanted: string) => current === wanted);
    const where = `${this.fullName}#${input.issueNumber}`;
    const known = this.cache.comments.get(this.commentKey(input.issueNumber, input.marker));
    // A remembered comment whose body changes is written straight away (the write
    // itself tells when the comment is gone); an unchanged one is checked by `findComment`.
    if (known !== undefined && !same(known.body, body)) {
      const updated = await this.updateComment(input.issueNumber, known.id, body, input.marker);
      if (updated) return { id: known.id, action: 'updated' };
    }
    const existing = await this.findComment(input.issueNumber, input.marker);
    if (existing && same(existing.body, body)) return { id: existing.id, action: 'unchanged' };
    if (existing) {
      if (await this.updateComment(input.issueNumber, existing.id, body, input.marker)) {
        return { id: existing.id, action: 'updated' };
      }
    }
    const { data } = await attempt(
      `create the ${input.marker} comment on ${where}`,
      'Issues: read and write',
      () =>
        this.octokit.rest.issues.createComment({
          ...this.base,
          issue_number: input.issueNumber,
          body,
        }),
    );
    this.rememberComment(input.issueNumber, input.marker, { id: data.id, body });
    return { id: data.id, action: 'created' };
  }

  /** Writes a comment's body; false (and forgotten) when the comment no longer exists. */
  private async updateComment(
    issueNumber: number,
    id: number,
    body: string,
    markerName: string,
  ): Promise<boolean> {
    try {
      await this.octokit.rest.issues.updateComment({ ...this.base, comment_id: id, body });
    } catch (e) {
      if (statusOf(e) === 404) {
        this.forgetComment(issueNumber, markerName, id);
        return false;
      }
      throw githubError(
        `update the ${markerName} comment on ${this.fullName}#${issueNumber}`,
        e,
        'Issues: read and write',
      );
    }
    this.rememberComment(issueNumber, markerName, { id, body });
    return true;
  }

  /** A plain reply (e.g. why a command was ignored). */
  async reply(issueNumber: number, body: string): Promise<number> {
    const { data } = await attempt(
      `comment on ${this.fullName}#${issueNumber}`,
      'Issues: read and write',
      () =>
        this.octokit.rest.issues.createComment({
          ...this.base,
          issue_number: issueNumber,
          body: withMarkers(body, []),
        }),
    );
    return data.id;
  }
}
