/**
 * Git over HTTPS with a token that never touches disk, argv or a URL: the
 * `Authorization` header is given to each fetch, ls-remote and push through
 * git's environment-scoped configuration (`GIT_CONFIG_COUNT/KEY/VALUE`), scoped
 * to the GitHub server. A token source is asked again for every network command,
 * so a push after an agent ran longer than a token lives goes with a fresh one.
 * The job checkout's own config is scrubbed of any credential a checkout step
 * persisted, so the coding agent finds none while it runs.
 */
import { readFile } from 'node:fs/promises';
import { EpicflowError } from '../../core/errors.js';
import { spawnGit, type GitIdentity } from './run-git.js';
import type { ProcessResult } from '../process/run-process.js';

export interface RemoteGitOptions {
  /** The job checkout (`GITHUB_WORKSPACE`). */
  readonly cwd: string;
  /** `https://github.com` or the GitHub Enterprise host. */
  readonly serverUrl: string;
  /** `owner/name`. */
  readonly repository: string;
  /**
   * The token, or where to get one with time left: called before every network
   * command. Whoever hands tokens out masks them in logs; this class also keeps
   * every one it used out of its own error messages.
   */
  readonly token: string | (() => Promise<string>);
  readonly identity: GitIdentity;
}

/** What to do when GitHub refuses the credentials, whichever inputs gave them. */
export const TOKEN_REFUSED_HINT =
  'the github-token input is invalid or expired, or the app-id and app-private-key inputs do not ' +
  'belong to an App installed on this repository (installation tokens live one hour)';

/** The header form git sends: `Basic base64(x-access-token:<token>)`. */
export function basicCredential(token: string): string {
  return Buffer.from(`x-access-token:${token}`).toString('base64');
}

export type PushResult =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly reason: 'stale' | 'protected' | 'auth' | 'other';
      readonly detail: string;
    };

const NETWORK_TIMEOUT_MS = 10 * 60 * 1000;

export class RemoteGit {
  readonly url: string;
  private readonly headerKey: string;
  private readonly token: () => Promise<string>;
  /** Every token used so far and its header form: kept out of error messages. */
  private readonly used = new Set<string>();

  constructor(private readonly options: RemoteGitOptions) {
    const server = options.serverUrl.replace(/\/+$/, '');
    this.url = `${server}/${options.repository}.git`;
    this.headerKey = `http.${server}/.extraheader`;
    const { token } = options;
    this.token = typeof token === 'string' ? () => Promise.resolve(token) : token;
  }

  /** The same repository and credentials, for git run in another folder (a bare repository). */
  at(cwd: string): RemoteGit {
    return new RemoteGit({ ...this.options, cwd });
  }

  /** The `Authorization` header of a fresh token, remembered for redaction. */
  private async header(): Promise<string> {
    const token = await this.token();
    const basic = basicCredential(token);
    this.used.add(token);
    this.used.add(basic);
    return `Authorization: Basic ${basic}`;
  }

  private async git(args: readonly string[], withAuth: boolean): Promise<ProcessResult> {
    const env: Record<string, string> = {};
    if (withAuth) {
      env['GIT_CONFIG_COUNT'] = '1';
      env['GIT_CONFIG_KEY_0'] = this.headerKey;
      env['GIT_CONFIG_VALUE_0'] = await this.header();
    }
    // epicflow's git (no outside configuration, output read whole), plus the header.
    return spawnGit(args, {
      cwd: this.options.cwd,
      identity: this.options.identity,
      timeoutMs: NETWORK_TIMEOUT_MS,
      extraEnv: env,
    });
  }

  private fail(what: string, result: ProcessResult): never {
    const text = this.redact(`${result.stderr}\n${result.stdout}`);
    const lines = text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .slice(-8);
    if (
      /\b401\b|Authentication failed|could not read Username|Invalid username or token/i.test(text)
    ) {
      throw new EpicflowError('github', `GitHub refused the token while trying to ${what}`, {
        details: [TOKEN_REFUSED_HINT, ...lines],
      });
    }
    throw new EpicflowError('git', `cannot ${what}`, { details: lines });
  }

  /** Never let a token through into an error message. */
  private redact(text: string): string {
    let out = text;
    // Longest first: a token inside a longer secret leaves no tail of it behind.
    for (const s of [...this.used].sort((a, b) => b.length - a.length)) {
      if (s !== '') out = out.split(s).join('***');
    }
    return out;
  }

  /**
   * Fetches branches of the GitHub repository into `refs/remotes/origin/*`; a
   * branch that does not exist on GitHub is simply absent afterwards.
   */
  async fetch(branches: readonly string[]): Promise<Map<string, string>> {
    const heads = await this.lsRemote(branches);
    const present = branches.filter((b) => heads.has(b));
    if (present.length > 0) {
      const specs = present.map((b) => `+refs/heads/${b}:refs/remotes/origin/${b}`);
      const r = await this.git(
        ['fetch', '--quiet', '--no-tags', '--no-recurse-submodules', this.url, ...specs],
        true,
      );
      if (r.exitCode !== 0)
        this.fail(`fetch ${present.join(', ')} from ${this.options.repository}`, r);
    }
    return heads;
  }

  /** Heads of branches on GitHub (absent branches are left out). */
  async lsRemote(branches: readonly string[]): Promise<Map<string, string>> {
    const r = await this.git(
      ['ls-remote', '--heads', this.url, ...branches.map((b) => `refs/heads/${b}`)],
      true,
    );
    if (r.exitCode !== 0) this.fail(`read the branches of ${this.options.repository}`, r);
    const heads = new Map<string, string>();
    for (const line of r.stdout.split('\n')) {
      const [sha, ref] = line.trim().split(/\s+/);
      if (sha !== undefined && ref?.startsWith('refs/heads/') === true) {
        heads.set(ref.slice('refs/heads/'.length), sha);
      }
    }
    return heads;
  }

  /**
   * Pushes `sha` to a branch. Without `expected` the push is a plain
   * fast-forward (non-force); with it, the branch is replaced only if it is
   * still at `expected` (null: must not exist).
   */
  async push(sha: string, branch: string, expected?: string | null): Promise<PushResult> {
    const args = ['push', '--porcelain', '--no-verify', '--no-recurse-submodules'];
    if (expected !== undefined)
      args.push(`--force-with-lease=refs/heads/${branch}:${expected ?? ''}`);
    args.push(this.url, `${sha}:refs/heads/${branch}`);
    const r = await this.git(args, true);
    if (r.exitCode === 0) return { ok: true };
    const text = this.redact(`${r.stdout}\n${r.stderr}`);
    const detail = text
      .split('\n')
      .filter((l) => l.trim() !== '' && !/^(To |Done$)/.test(l.trim()))
      .slice(-6)
      .join('\n');
    if (/GH006|protected branch|refusing to allow|rule violations|ruleset/i.test(text)) {
      return { ok: false, reason: 'protected', detail };
    }
    if (
      /\b401\b|Authentication failed|could not read Username|Invalid username or token|\b403\b|denied to/i.test(
        text,
      )
    ) {
      return { ok: false, reason: 'auth', detail };
    }
    if (
      /\[rejected\]|fetch first|non-fast-forward|stale info|\[remote rejected\].*(cannot lock|failed to update)/i.test(
        text,
      )
    ) {
      return { ok: false, reason: 'stale', detail };
    }
    return { ok: false, reason: 'other', detail };
  }

  /**
   * Removes credentials a checkout step may have persisted in the repository
   * config (`http.<url>.extraheader`, as actions/checkout writes them), and any
   * user:password in remote URLs, so the agent cannot find them.
   */
  async scrubCredentials(): Promise<string[]> {
    const removed: string[] = [];
    const list = await this.git(
      [
        'config',
        '--local',
        '--name-only',
        '--get-regexp',
        '^http\\..*\\.extraheader$|^http\\.extraheader$',
      ],
      false,
    );
    for (const key of new Set(
      list.stdout
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== ''),
    )) {
      await this.git(['config', '--local', '--unset-all', key], false);
      removed.push(key);
    }
    // actions/checkout v6 keeps them in a file of its own, included from the local config.
    const includes = await this.git(
      ['config', '--local', '--get-regexp', '^includeif\\..*\\.path$'],
      false,
    );
    for (const line of includes.stdout.split('\n')) {
      const m = /^(\S+)\s+(.+)$/.exec(line.trim());
      if (m === null) continue;
      const [, key = '', path = ''] = m;
      let text = '';
      try {
        text = await readFile(path, 'utf8');
      } catch {
        continue; // nothing to include, nothing to leak
      }
      if (!/extraheader/i.test(text)) continue;
      await this.git(['config', '--local', '--unset-all', key], false);
      removed.push(key);
    }
    const remotes = await this.git(
      ['config', '--local', '--get-regexp', '^remote\\..*\\.url$'],
      false,
    );
    for (const line of remotes.stdout.split('\n')) {
      const m = /^(\S+)\s+(\S+)$/.exec(line.trim());
      if (m === null) continue;
      const [, key = '', url = ''] = m;
      const clean = url.replace(/^(https?:\/\/)[^/@]*@/, '$1');
      if (clean !== url) {
        await this.git(['config', '--local', key, clean], false);
        removed.push(key);
      }
    }
    return removed;
  }
}
