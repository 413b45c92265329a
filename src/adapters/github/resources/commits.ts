/**
 * Many commits in one GraphQL request: their messages and parents, by sha, and their
 * parents' messages. A decision that knows which commits it will walk (the merge commits
 * its records name) reads them at once instead of one `git/get-commit` each.
 */
import { attempt } from '../errors.js';
import type { RepoScope } from './resource.js';

export interface CommitFacts {
  readonly message: string;
  readonly parents: readonly string[];
}

/** Commits asked for in one request (each costs one connection: 100 are one point). */
const PER_REQUEST = 100;

interface Answer {
  readonly repository: Record<
    string,
    {
      readonly oid?: string;
      readonly message?: string;
      readonly parents?: {
        readonly nodes: readonly { readonly oid: string; readonly message?: string }[];
      };
    } | null
  > | null;
}

const SHA = /^[0-9a-f]{40}$/;

export interface CommitsRead {
  /** The commits asked for that exist, by sha. */
  readonly commits: ReadonlyMap<string, CommitFacts>;
  /**
   * The messages of their parents, by sha (no connection more: a message costs nothing in
   * GitHub's formula): enough to tell that a parent is no merge of epicflow's.
   */
  readonly parentMessages: ReadonlyMap<string, string>;
}

/**
 * The commits among `shas` that exist, by sha; a sha that is no commit here is left out
 * (the caller reads what it still needs one by one, or never needs it).
 */
export async function readCommits(scope: RepoScope, shas: Iterable<string>): Promise<CommitsRead> {
  const wanted = [...new Set(shas)].filter((s) => SHA.test(s));
  const out = new Map<string, CommitFacts>();
  const parentMessages = new Map<string, string>();
  for (let i = 0; i < wanted.length; i += PER_REQUEST) {
    const chunk = wanted.slice(i, i + PER_REQUEST);
    const variables: Record<string, string> = {};
    const fields = chunk.map((sha, n) => {
      variables[`c${n}`] = sha;
      return `c${n}: object(oid: $c${n}) { ... on Commit { oid message parents(first: 2) { nodes { oid message } } } }`;
    });
    const query =
      `query EpicflowCommits($owner: String!, $name: String!, ` +
      `${chunk.map((_, n) => `$c${n}: GitObjectID!`).join(', ')}) ` +
      `{ repository(owner: $owner, name: $name) { ${fields.join(' ')} } }`;
    const data = await attempt(
      `read ${chunk.length} commits of ${scope.fullName}`,
      'Contents: read',
      () =>
        scope.octokit.graphql<Answer>(query, {
          owner: scope.owner,
          name: scope.repo,
          ...variables,
        }),
    );
    for (const [n, sha] of chunk.entries()) {
      const c = data.repository?.[`c${n}`];
      if (c?.oid !== sha || typeof c.message !== 'string') continue;
      const parents = c.parents?.nodes ?? [];
      out.set(sha, { message: c.message, parents: parents.map((p) => p.oid) });
      for (const p of parents) {
        if (typeof p.message === 'string') parentMessages.set(p.oid, p.message);
      }
    }
  }
  return { commits: out, parentMessages };
}
