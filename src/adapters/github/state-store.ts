/**
 * Durable epic state in GitHub (ADR 0004): one pretty-printed JSON
 * file per story and one for the roster, on the branch `epicflow/state`, written
 * through the contents API with the file's blob sha as a compare-and-swap token.
 * A stale sha is a typed conflict; `update` re-reads and retries, so parallel
 * story jobs never lose each other's writes.
 */
import { createHash } from 'node:crypto';
import { StoryRecordSchema } from '../../core/record-schema.js';
import { EpicflowError } from '../../core/errors.js';
import type { StoryRecord } from '../../core/model.js';
import { attempt, githubError, statusOf } from './errors.js';
import type { GitHubRepo } from './repo.js';

export const STATE_BRANCH = 'epicflow/state';

type WriteResult =
  { readonly ok: true; readonly sha: string } | { readonly ok: false; readonly conflict: true };

const STORY_ID = /^[a-z0-9][a-z0-9-]*$/;
const EPIC_ID = /^[A-Za-z0-9._-]{1,100}$/;
const DOC_NAME = /^[a-z0-9][a-z0-9-]*$/;

interface GitHubStateStoreOptions {
  readonly repo: GitHubRepo;
  readonly epic: string;
  readonly branch?: string;
  /** Read-modify-write attempts before `update` gives up (default 8). */
  readonly maxAttempts?: number;
  /** Waits between attempts (jittered exponential backoff); injectable for benchmarks. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** The repository's default branch, when the caller knows it (spares a read). */
  readonly defaultBranch?: string;
}

const realSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class GitHubStateStore {
  readonly repo: GitHubRepo;
  readonly epic: string;
  readonly branch: string;
  private readonly maxAttempts: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly defaultBranch: string | undefined;

  constructor(options: GitHubStateStoreOptions) {
    if (!EPIC_ID.test(options.epic)) {
      throw new EpicflowError(
        'internal',
        `invalid epic id for GitHub state: ${JSON.stringify(options.epic)}`,
      );
    }
    this.repo = options.repo;
    this.epic = options.epic;
    this.branch = options.branch ?? STATE_BRANCH;
    this.maxAttempts = options.maxAttempts ?? 8;
    this.sleep = options.sleep ?? realSleep;
    this.defaultBranch = options.defaultBranch;
  }

  storyPath(id: string): string {
    if (!STORY_ID.test(id)) {
      throw new EpicflowError(
        'internal',
        `invalid story id for GitHub state: ${JSON.stringify(id)}`,
      );
    }
    return `epics/${this.epic}/stories/${id}.json`;
  }

  docPath(name: string): string {
    if (!DOC_NAME.test(name)) {
      throw new EpicflowError('internal', `invalid state document name: ${JSON.stringify(name)}`);
    }
    return `epics/${this.epic}/${name}.json`;
  }

  // ------------------------------------------------------------ stories

  async read(id: string): Promise<{ record: StoryRecord; sha: string } | null> {
    const path = this.storyPath(id);
    const doc = await this.readDoc(path);
    if (!doc) return null;
    return { record: this.checkRecord(path, id, doc.value), sha: doc.sha };
  }

  /** Writes the record if the file is still at `expectedSha` (null: must not exist yet). */
  write(record: StoryRecord, expectedSha: string | null): Promise<WriteResult> {
    const path = this.storyPath(record.story);
    if (record.epic !== this.epic) {
      throw new EpicflowError(
        'internal',
        `story record of epic ${record.epic} written to epic ${this.epic}`,
      );
    }
    const message = `epicflow: epic ${this.epic}, story ${record.story} ${record.status} (attempt ${record.attempt})`;
    return this.writeDoc(path, record, expectedSha, message);
  }

  /**
   * Read-modify-write with retry on conflict. `fn` gets the current record (null when
   * none) and may be called again with a newer one; returning the record unchanged
   * writes nothing.
   */
  async update(
    id: string,
    fn: (current: StoryRecord | null) => StoryRecord | Promise<StoryRecord>,
  ): Promise<StoryRecord> {
    const path = this.storyPath(id);
    return this.updateAt(
      path,
      async () => {
        const doc = await this.read(id);
        return { value: doc?.record ?? null, sha: doc?.sha ?? null };
      },
      async (current) => {
        const next = await fn(current);
        if (next.story !== id) {
          throw new EpicflowError(
            'internal',
            `update of story ${id} returned the record of ${next.story}`,
          );
        }
        return next;
      },
      (next, sha) => this.write(next, sha),
    );
  }

  /** A story record from its file's text (as a GraphQL read returns it), checked like `read`. */
  parseStory(id: string, text: string): StoryRecord {
    const path = this.storyPath(id);
    return this.checkRecord(path, id, this.parseDoc(path, text));
  }

  /** A JSON document (`name` without `.json`) from its text. */
  parseJson<T>(name: string, text: string): T {
    return this.parseDoc(this.docPath(name), text) as T;
  }

  /**
   * A text file in the epic's folder (e.g. `report.md`), written only when its content
   * differs from the blob `currentSha` (null: none yet); last writer wins.
   */
  async writeTextIfChanged(
    fileName: string,
    text: string,
    currentSha: string | null,
  ): Promise<{ written: boolean; sha: string }> {
    if (!/^[a-z0-9][a-z0-9-]*\.(md|txt)$/.test(fileName)) {
      throw new EpicflowError('internal', `invalid state file name ${JSON.stringify(fileName)}`);
    }
    const sha = gitBlobSha(text);
    if (sha === currentSha) return { written: false, sha };
    const path = `epics/${this.epic}/${fileName}`;
    const result = await this.writeRaw(
      path,
      text,
      currentSha,
      `epicflow: epic ${this.epic}, ${fileName}`,
    );
    if (result.ok) return { written: true, sha: result.sha };
    // Someone wrote it meanwhile: write over their version once (the newest decision wins).
    const now = await this.repo.readFileWithSha(this.branch, path);
    if (now?.sha === sha) return { written: false, sha };
    const again = await this.writeRaw(
      path,
      text,
      now?.sha ?? null,
      `epicflow: epic ${this.epic}, ${fileName}`,
    );
    if (!again.ok) {
      throw new EpicflowError(
        'state',
        `GitHub state: ${path} on ${this.branch} in ${this.repo.fullName} kept changing under us`,
      );
    }
    return { written: true, sha: again.sha };
  }

  /** Every story record of the epic. */
  async listStories(): Promise<StoryRecord[]> {
    const names = await this.listFolder(['epics', this.epic, 'stories']);
    const ids = names
      .filter((n) => n.endsWith('.json'))
      .map((n) => n.slice(0, -'.json'.length))
      .filter((id) => STORY_ID.test(id))
      .sort();
    const records = await Promise.all(ids.map((id) => this.read(id)));
    return records.flatMap((r) => (r ? [r.record] : []));
  }

  /**
   * File names in a folder of the state branch, walking trees from the branch head (the
   * git data API needs no directory support and reads only the folders on the way).
   */
  private async listFolder(segments: readonly string[]): Promise<string[]> {
    const head = await this.repo.getBranchSha(this.branch);
    if (head === null) return [];
    const { owner, repo } = this.repo;
    const action = `list ${segments.join('/')} on ${this.branch} in ${this.repo.fullName}`;
    let tree = head;
    for (const segment of [...segments, '']) {
      const at = tree;
      const { data } = await attempt(action, 'Contents: read', () =>
        this.repo.octokit.rest.git.getTree({ owner, repo, tree_sha: at }),
      );
      if (segment === '')
        return data.tree.filter((e) => e.type === 'blob').map((e) => e.path ?? '');
      const next = data.tree.find((e) => e.type === 'tree' && e.path === segment)?.sha;
      if (next === undefined) return [];
      tree = next;
    }
    return [];
  }

  // ------------------------------------------------------------ other documents (roster)

  async readJson<T>(name: string): Promise<{ value: T; sha: string } | null> {
    const doc = await this.readDoc(this.docPath(name));
    return doc ? { value: doc.value as T, sha: doc.sha } : null;
  }

  writeJson(name: string, value: unknown, expectedSha: string | null): Promise<WriteResult> {
    return this.writeDoc(
      this.docPath(name),
      value,
      expectedSha,
      `epicflow: epic ${this.epic}, ${name}`,
    );
  }

  /** Read-modify-write of a JSON document (e.g. `roster`: exclusions shared by all jobs). */
  updateJson<T>(name: string, fn: (current: T | null) => T | Promise<T>): Promise<T> {
    return this.updateAt(
      this.docPath(name),
      async () => {
        const doc = await this.readJson<T>(name);
        return { value: doc?.value ?? null, sha: doc?.sha ?? null };
      },
      fn,
      (next, sha) => this.writeJson(name, next, sha),
    );
  }

  // ------------------------------------------------------------ plumbing

  private checkRecord(path: string, id: string, value: unknown): StoryRecord {
    const parsed = StoryRecordSchema.safeParse(value);
    if (!parsed.success || parsed.data.story !== id || parsed.data.epic !== this.epic) {
      throw new EpicflowError(
        'state',
        `GitHub state: ${path} on branch ${this.branch} of ${this.repo.fullName} is not a ` +
          `version-1 story record of story ${id} in epic ${this.epic}; fix or delete the file`,
        {
          details: parsed.success
            ? []
            : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
        },
      );
    }
    return parsed.data;
  }

  private async updateAt<T>(
    path: string,
    read: () => Promise<{ value: T | null; sha: string | null }>,
    fn: (current: T | null) => T | Promise<T>,
    write: (next: T, sha: string | null) => Promise<WriteResult>,
  ): Promise<T> {
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      const current = await read();
      const next = await fn(current.value);
      if (current.value !== null && stableJson(next) === stableJson(current.value)) return next;
      const result = await write(next, current.sha);
      if (result.ok) return next;
      // Someone else wrote first: back off a little (jittered) and redo on their version.
      if (attempt < this.maxAttempts) await this.sleep(Math.random() * 50 * 2 ** attempt);
    }
    throw new EpicflowError(
      'state',
      `GitHub state: ${path} on ${this.branch} in ${this.repo.fullName} kept changing under us; ` +
        `gave up after ${this.maxAttempts} attempts`,
    );
  }

  private async readDoc(path: string): Promise<{ value: unknown; sha: string } | null> {
    const file = await this.repo.readFileWithSha(this.branch, path);
    if (!file) return null;
    return { value: this.parseDoc(path, file.text), sha: file.sha };
  }

  private parseDoc(path: string, text: string): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      throw new EpicflowError(
        'state',
        `GitHub state: ${path} on branch ${this.branch} of ${this.repo.fullName} is not valid JSON ` +
          `(${(e as Error).message}); fix or delete the file`,
      );
    }
  }

  private writeDoc(
    path: string,
    value: unknown,
    expectedSha: string | null,
    message: string,
  ): Promise<WriteResult> {
    // Pretty-printed: a person can read and fix the state on GitHub.
    return this.writeRaw(path, `${JSON.stringify(value, null, 2)}\n`, expectedSha, message);
  }

  private async writeRaw(
    path: string,
    text: string,
    expectedSha: string | null,
    message: string,
  ): Promise<WriteResult> {
    const putOnce = () =>
      this.repo.octokit.rest.repos.createOrUpdateFileContents({
        owner: this.repo.owner,
        repo: this.repo.repo,
        path,
        branch: this.branch,
        // The state branch starts from the default branch, so it carries its workflows:
        // `[skip ci]` keeps state commits from starting push-triggered runs.
        message: `${message} [skip ci]`,
        content: Buffer.from(text, 'utf8').toString('base64'),
        ...(expectedSha === null ? {} : { sha: expectedSha }),
        // A lost compare-and-swap (409) is answered by deciding again on fresh state: the
        // retry plugin repeating the same stale write would only lose again, seconds later.
        request: { retries: 0 },
      });
    // GitHub's 5xx are still tried again here (the plugin's rule: a few times, waiting longer
    // each time); a write that landed before its answer was lost then meets a 409, a conflict.
    const put = async (): ReturnType<typeof putOnce> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await putOnce();
        } catch (e) {
          const status = statusOf(e);
          if (status === undefined || status < 500 || attempt > SERVER_ERROR_RETRIES) throw e;
          await this.sleep(SERVER_ERROR_WAIT_MS * attempt ** 2);
        }
      }
    };
    const action = `write ${path} on ${this.branch} in ${this.repo.fullName}`;
    try {
      const { data } = await put().catch(async (e: unknown) => {
        // First write of the repository: create the state branch, then write again.
        const status = statusOf(e);
        if (status !== 404 && status !== 422) throw e;
        if ((await this.repo.getBranchSha(this.branch)) !== null) throw e;
        await this.createBranch();
        return put();
      });
      return { ok: true, sha: data.content?.sha ?? '' };
    } catch (e) {
      if (isConflict(e)) return { ok: false, conflict: true };
      throw githubError(action, e, 'Contents: read and write');
    }
  }

  /**
   * Creates the state branch, known to be missing, from the default branch's head (the
   * contents API cannot start an orphan branch; the state files live in their own
   * `epics/` folder and this branch is never merged). Someone racing us to it is fine.
   */
  private async createBranch(): Promise<void> {
    const defaultBranch = this.defaultBranch ?? (await this.repo.defaultBranch());
    const head = await this.repo.getBranchSha(defaultBranch);
    if (head === null) {
      throw new EpicflowError(
        'github',
        `GitHub: ${this.repo.fullName} has no commit on ${defaultBranch} to start ${this.branch} from`,
      );
    }
    await this.repo.createBranch(this.branch, head);
  }
}

/** A state write answered 5xx is tried again this many times, after 0.5, 2, 4.5 s. */
const SERVER_ERROR_RETRIES = 3;
const SERVER_ERROR_WAIT_MS = 500;

/** 409: the file (or the branch) moved; 422 "sha wasn't supplied": it was created meanwhile. */
function isConflict(e: unknown): boolean {
  const status = statusOf(e);
  if (status === 409) return true;
  const message = String(
    (e as { response?: { data?: { message?: unknown } } }).response?.data?.message ?? '',
  );
  return status === 422 && /\bsha\b/i.test(message);
}

/** The sha git gives a blob with this text (what the contents API reports as `sha`). */
export function gitBlobSha(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  return createHash('sha1')
    .update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes]))
    .digest('hex');
}

function stableJson(value: unknown): string {
  return JSON.stringify(value);
}
