/** Contents: folders, trees, blobs and files at a ref (blobs and trees remembered by sha). */
import { EpicflowError } from '../../../core/errors.js';
import type { FolderEntry } from '../cache.js';
import { attempt, githubError, statusOf } from '../errors.js';
import { Resource } from './resource.js';

export const CONFIG_PATH = '.github/epicflow.yml';

export class Contents extends Resource {
  /** Entries of a folder at `ref` (one request); null when the folder or the ref is missing. */
  async listFolder(ref: string, path: string): Promise<FolderEntry[] | null> {
    let data: unknown;
    try {
      ({ data } = await this.octokit.rest.repos.getContent({ ...this.base, path, ref }));
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw githubError(`list ${path} at ${ref} in ${this.fullName}`, e, 'Contents: read');
    }
    if (!Array.isArray(data)) {
      throw new EpicflowError('github', `${this.fullName}: ${path} at ${ref} is not a folder`);
    }
    return (data as { type?: string; name?: string; sha?: string }[]).flatMap((e) =>
      (e.type === 'file' || e.type === 'dir') && e.name !== undefined && e.sha !== undefined
        ? [{ name: e.name, type: e.type, sha: e.sha }]
        : [],
    );
  }

  /** A tree's entries by tree sha (remembered: a sha names one content forever). */
  async readTree(sha: string): Promise<readonly FolderEntry[]> {
    const cached = this.cache.trees.get(sha);
    if (cached !== undefined) return cached;
    const { data } = await attempt(`read tree ${sha} of ${this.fullName}`, 'Contents: read', () =>
      this.octokit.rest.git.getTree({ ...this.base, tree_sha: sha }),
    );
    const entries = data.tree.flatMap((e): FolderEntry[] =>
      (e.type === 'blob' || e.type === 'tree') && e.path !== undefined && e.sha !== undefined
        ? [{ name: e.path, type: e.type === 'tree' ? 'dir' : 'file', sha: e.sha }]
        : [],
    );
    this.cache.trees.set(sha, entries);
    return entries;
  }

  /** A blob's text by sha (remembered). */
  async readBlob(sha: string): Promise<string> {
    const cached = this.cache.blobs.get(sha);
    if (cached !== undefined) return cached;
    const { data } = await attempt(`read blob ${sha} of ${this.fullName}`, 'Contents: read', () =>
      this.octokit.rest.git.getBlob({ ...this.base, file_sha: sha }),
    );
    const text =
      data.encoding === 'base64'
        ? Buffer.from(data.content, 'base64').toString('utf8')
        : data.content;
    this.cache.blobs.set(sha, text);
    return text;
  }

  /** A file's text at `ref` (default branch when omitted); null when missing. */
  async readFile(ref: string | undefined, path: string): Promise<string | null> {
    const file = await this.readFileWithSha(ref, path);
    return file?.text ?? null;
  }

  /** A file's text and blob sha (the compare-and-swap token of the contents API). */
  async readFileWithSha(
    ref: string | undefined,
    path: string,
  ): Promise<{ text: string; sha: string } | null> {
    let data: unknown;
    try {
      ({ data } = await this.octokit.rest.repos.getContent({
        ...this.base,
        path,
        ...(ref === undefined ? {} : { ref }),
      }));
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw githubError(
        `read ${path}${ref ? ` at ${ref}` : ''} in ${this.fullName}`,
        e,
        'Contents: read',
      );
    }
    const file = data as { type?: string; content?: string; encoding?: string; sha?: string };
    if (Array.isArray(data) || file.type !== 'file' || typeof file.sha !== 'string') {
      throw new EpicflowError('github', `${this.fullName}: ${path} is not a file`);
    }
    const text =
      file.encoding === 'base64'
        ? Buffer.from(file.content ?? '', 'base64').toString('utf8')
        : (file.content ?? '');
    return { text, sha: file.sha };
  }

  /** `.github/epicflow.yml` on the default branch; null when the repository has none. */
  loadConfigText(): Promise<string | null> {
    return this.readFile(undefined, CONFIG_PATH);
  }
}
