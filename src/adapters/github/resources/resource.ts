/**
 * What every resource of one repository shares: its name, the client, the
 * cache of a long-lived process, and who counts as epicflow there. The
 * repository facade (`GitHubRepo`, repo.ts) is that scope and composes them.
 */
import type { Octokit } from '@octokit/rest';
import type { GitHubCache } from '../cache.js';

/** What epicflow needs of an Octokit: the REST methods, `request`, `paginate`, `graphql`. */
export type GitHubClient = Pick<Octokit, 'rest' | 'request' | 'paginate' | 'graphql'>;

export type EnsureAction = 'created' | 'updated' | 'unchanged';

export interface RepoScope {
  readonly owner: string;
  readonly repo: string;
  readonly octokit: GitHubClient;
  readonly botLogin: string;
  readonly cache: GitHubCache;
  readonly fullName: string;
  /** Whether `login` wrote as epicflow here: our own login or a peer's. */
  isOurs(login: string | undefined): boolean;
}

/** One kind of GitHub resource of a repository, reached through its scope. */
export abstract class Resource {
  constructor(protected readonly scope: RepoScope) {}

  protected get owner(): string {
    return this.scope.owner;
  }

  protected get octokit(): GitHubClient {
    return this.scope.octokit;
  }

  protected get botLogin(): string {
    return this.scope.botLogin;
  }

  protected get cache(): GitHubCache {
    return this.scope.cache;
  }

  protected get fullName(): string {
    return this.scope.fullName;
  }

  protected get base(): { owner: string; repo: string } {
    return { owner: this.scope.owner, repo: this.scope.repo };
  }

  protected isOurs(login: string | undefined): boolean {
    return this.scope.isOurs(login);
  }
}
