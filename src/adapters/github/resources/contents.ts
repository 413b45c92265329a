/** Contents: files at a ref, and the configuration file on the default branch. */
import { EpicflowError } from '../../../core/errors.js';
import { githubError, statusOf } from '../errors.js';
import { Resource } from './resource.js';

export const CONFIG_PATH = '.github/epicflow.yml';

export class Contents extends Resource {
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
