/** Git data (refs, commits, trees), branches, contents with sha compare-and-swap, merges. */
import { HttpError, param, str, type Json, type RestContext, type RouteTable } from '../context.js';
import type { RepoRec } from '../state.js';

function repoOf(ctx: RestContext): RepoRec {
  return ctx.double.repo(param(ctx, 'owner'), param(ctx, 'repo'));
}

/** `heads/x` → `refs/heads/x`; GitHub's ref parameters omit the `refs/` prefix. */
function fullRef(ref: string): string {
  return ref.startsWith('refs/') ? ref : `refs/${ref}`;
}

async function commitish(
  ctx: RestContext,
  repo: RepoRec,
  ref: string,
): Promise<string | undefined> {
  const git = ctx.double.git;
  if (/^[0-9a-f]{40}$/.test(ref))
    return (await git.objectType(repo.dir, ref)) === 'commit' ? ref : undefined;
  for (const candidate of [`refs/heads/${ref}`, `refs/tags/${ref}`, ref]) {
    const sha = await git.resolveRef(repo.dir, candidate);
    if (sha) return sha;
  }
  return undefined;
}

export const gitRoutes: RouteTable = {
  'GET /repos/{owner}/{repo}/git/ref/{ref}': async (ctx) => {
    const repo = repoOf(ctx);
    const ref = fullRef(param(ctx, 'ref'));
    const refs = await ctx.double.git.listRefs(repo.dir, ref);
    const exact = refs.find((r) => r.ref === ref);
    if (!exact) throw new HttpError(404, 'Not Found');
    return { status: 200, body: ctx.double.fixtures.ref(repo, exact.ref, exact.sha) };
  },
  'GET /repos/{owner}/{repo}/git/matching-refs/{ref}': async (ctx) => {
    const repo = repoOf(ctx);
    const prefix = fullRef(param(ctx, 'ref'));
    const all = await ctx.double.git.listRefs(repo.dir, 'refs/');
    return {
      status: 200,
      body: all
        .filter((r) => r.ref.startsWith(prefix))
        .map((r) => ctx.double.fixtures.ref(repo, r.ref, r.sha)),
    };
  },
  'POST /repos/{owner}/{repo}/git/refs': async (ctx) => {
    const repo = repoOf(ctx);
    ctx.double.requireWrite(repo, ctx.actor);
    const ref = String(ctx.body['ref']);
    const sha = String(ctx.body['sha']);
    if (!ref.startsWith('refs/') || ref.split('/').length < 3) {
      throw new HttpError(
        422,
        'Reference name must start with refs/ and have at least two slashes.',
      );
    }
    return ctx.double.withRepoLock(repo, async () => {
      if ((await ctx.double.git.objectType(repo.dir, sha)) === undefined)
        throw new HttpError(422, 'Object does not exist');
      if (!(await ctx.double.git.updateRef(repo.dir, ref, sha, null)))
        throw new HttpError(422, 'Reference already exists');
      return {
        status: 201,
        body: ctx.double.fixtures.ref(repo, ref, sha),
        headers: { location: `${ctx.double.fixtures.repoApi(repo)}/git/${ref}` },
      };
    });
  },
  'PATCH /repos/{owner}/{repo}/git/refs/{ref}': async (ctx) => {
    const repo = repoOf(ctx);
    ctx.double.requireWrite(repo, ctx.actor);
    const ref = fullRef(param(ctx, 'ref'));
    const sha = String(ctx.body['sha']);
    return ctx.double.withRepoLock(repo, async () => {
      const git = ctx.double.git;
      const current = await git.resolveRef(repo.dir, ref);
      if (!current) throw new HttpError(422, 'Reference does not exist');
      if ((await git.objectType(repo.dir, sha)) === undefined)
        throw new HttpError(422, 'Object does not exist');
      if (ctx.body['force'] !== true && !(await git.isAncestor(repo.dir, current, sha))) {
        throw new HttpError(422, 'Update is not a fast forward');
      }
      if (!(await git.updateRef(repo.dir, ref, sha, current)))
        throw new HttpError(409, 'Reference update failed');
      return { status: 200, body: ctx.double.fixtures.ref(repo, ref, sha) };
    });
  },
  'DELETE /repos/{owner}/{repo}/git/refs/{ref}': async (ctx) => {
    const repo = repoOf(ctx);
    ctx.double.requireWrite(repo, ctx.actor);
    const ref = fullRef(param(ctx, 'ref'));
    return ctx.double.withRepoLock(repo, async () => {
      if (!(await ctx.double.git.resolveRef(repo.dir, ref)))
        throw new HttpError(422, 'Reference does not exist');
      await ctx.double.git.deleteRef(repo.dir, ref);
      return { status: 204 };
    });
  },
  'GET /repos/{owner}/{repo}/git/commits/{commit_sha}': async (ctx) => {
    const repo = repoOf(ctx);
    const c = await ctx.double.git.readCommit(repo.dir, param(ctx, 'commit_sha'));
    if (!c) throw new HttpError(404, 'Not Found');
    return { status: 200, body: ctx.double.fixtures.gitCommit(repo, c) };
  },
  'GET /repos/{owner}/{repo}/git/trees/{tree_sha}': async (ctx) => {
    const repo = repoOf(ctx);
    const sha = param(ctx, 'tree_sha');
    const recursive = ctx.query.has('recursive');
    const resolved = (await commitish(ctx, repo, sha)) ?? sha;
    const treeSha = await ctx.double.git.revParse(repo.dir, `${resolved}^{tree}`);
    if (!treeSha) throw new HttpError(404, 'Not Found');
    const tree = await ctx.double.git.listTree(repo.dir, treeSha, recursive);
    const api = ctx.double.fixtures.repoApi(repo);
    return {
      status: 200,
      body: {
        sha: treeSha,
        url: `${api}/git/trees/${treeSha}`,
        truncated: false,
        tree: tree.map((e) => ({
          path: e.path,
          mode: e.mode,
          type: e.type,
          sha: e.sha,
          ...(e.size === undefined ? {} : { size: e.size }),
          url: `${api}/git/${e.type === 'tree' ? 'trees' : 'blobs'}/${e.sha}`,
        })),
      },
    };
  },
  'GET /repos/{owner}/{repo}/git/blobs/{file_sha}': async (ctx) => {
    const repo = repoOf(ctx);
    const sha = param(ctx, 'file_sha');
    const content = /^[0-9a-f]{40}$/.test(sha)
      ? await ctx.double.git.readBlob(repo.dir, sha)
      : undefined;
    if (!content) throw new HttpError(404, 'Not Found');
    return {
      status: 200,
      body: {
        sha,
        node_id: Buffer.from(`blob:${sha}`).toString('base64'),
        size: content.length,
        url: `${ctx.double.fixtures.repoApi(repo)}/git/blobs/${sha}`,
        content: content.toString('base64'),
        encoding: 'base64',
      },
    };
  },
  'POST /repos/{owner}/{repo}/git/trees': async (ctx) => {
    const repo = repoOf(ctx);
    ctx.double.requireWrite(repo, ctx.actor);
    const git = ctx.double.git;
    const base = str(ctx.body, 'base_tree');
    if (base !== undefined && (await git.objectType(repo.dir, base)) !== 'tree')
      throw new HttpError(422, 'base_tree is not a valid tree');
    const raw = Array.isArray(ctx.body['tree']) ? (ctx.body['tree'] as Json[]) : [];
    const entries: { path: string; mode: string; content?: string; sha?: string | null }[] = [];
    for (const e of raw) {
      const path = String(e['path']);
      const mode = String(e['mode']);
      // The double writes files only; subtrees and submodules are not needed by epicflow.
      if (e['type'] !== 'blob' || !/^100(644|755)$/.test(mode))
        throw new HttpError(422, `github-double supports blob entries only (${path})`);
      const content = str(e, 'content');
      const sha = e['sha'] === null ? null : str(e, 'sha');
      if (content === undefined && sha === undefined)
        throw new HttpError(422, `tree entry ${path} needs content or sha`);
      if (typeof sha === 'string' && (await git.objectType(repo.dir, sha)) !== 'blob')
        throw new HttpError(422, `tree entry ${path}: ${sha} is not a blob`);
      entries.push(
        content === undefined ? { path, mode, sha: sha ?? null } : { path, mode, content },
      );
    }
    const tree = await git.writeTree(repo.dir, base, entries);
    const listed = await git.listTree(repo.dir, tree, true);
    const api = ctx.double.fixtures.repoApi(repo);
    return {
      status: 201,
      body: {
        sha: tree,
        url: `${api}/git/trees/${tree}`,
        truncated: false,
        tree: listed.map((e) => ({
          path: e.path,
          mode: e.mode,
          type: e.type,
          sha: e.sha,
          ...(e.size === undefined ? {} : { size: e.size }),
          url: `${api}/git/${e.type === 'tree' ? 'trees' : 'blobs'}/${e.sha}`,
        })),
      },
      headers: { location: `${api}/git/trees/${tree}` },
    };
  },
  'POST /repos/{owner}/{repo}/git/commits': async (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const git = ctx.double.git;
    const tree = String(ctx.body['tree']);
    if ((await git.objectType(repo.dir, tree)) !== 'tree')
      throw new HttpError(422, 'Tree SHA does not exist');
    const parents = Array.isArray(ctx.body['parents']) ? ctx.body['parents'].map(String) : [];
    for (const p of parents) {
      if ((await git.objectType(repo.dir, p)) !== 'commit')
        throw new HttpError(422, 'Parent SHA does not exist or is not a commit object');
    }
    const sha = await git.commitTree(
      repo.dir,
      tree,
      parents,
      String(ctx.body['message']),
      ctx.double.identity(actor),
    );
    const c = await git.readCommit(repo.dir, sha);
    if (!c) throw new Error('commit just written is missing');
    const api = ctx.double.fixtures.repoApi(repo);
    return {
      status: 201,
      body: ctx.double.fixtures.gitCommit(repo, c),
      headers: { location: `${api}/git/commits/${sha}` },
    };
  },
  'GET /repos/{owner}/{repo}/branches/{branch}': async (ctx) => {
    const repo = repoOf(ctx);
    const branch = param(ctx, 'branch');
    const sha = await ctx.double.git.resolveRef(repo.dir, `refs/heads/${branch}`);
    if (!sha) throw new HttpError(404, 'Branch not found');
    const c = await ctx.double.git.readCommit(repo.dir, sha);
    if (!c) throw new HttpError(404, 'Branch not found');
    const api = ctx.double.fixtures.repoApi(repo);
    const commit = ctx.double.fixtures.commit(repo, c);
    return {
      status: 200,
      body: {
        name: branch,
        commit,
        _links: {
          html: `${ctx.double.url}/${repo.owner}/${repo.name}/tree/${branch}`,
          self: `${api}/branches/${branch}`,
        },
        protected: false,
        protection: {
          enabled: false,
          required_status_checks: { enforcement_level: 'off', contexts: [], checks: [] },
        },
        protection_url: `${api}/branches/${branch}/protection`,
      },
    };
  },
  'GET /repos/{owner}/{repo}/contents/{path}': async (ctx) => {
    const repo = repoOf(ctx);
    const path = param(ctx, 'path');
    const ref = ctx.query.get('ref') ?? repo.defaultBranch;
    const sha = await commitish(ctx, repo, ref);
    if (!sha) throw new HttpError(404, `No commit found for the ref ${ref}`);
    const file = await ctx.double.git.readFile(repo.dir, sha, path);
    if (file) {
      return {
        status: 200,
        body: ctx.double.fixtures.contentFile(repo, path, ref, file.sha, file.content),
      };
    }
    // A directory: its entries, one level deep, without content (as GitHub lists them).
    const clean = path.replace(/\/+$/, '');
    const treeSha = await ctx.double.git.revParse(repo.dir, `${sha}:${clean}`);
    if (!treeSha || (await ctx.double.git.objectType(repo.dir, treeSha)) !== 'tree')
      throw new HttpError(404, 'Not Found');
    const entries = await ctx.double.git.listTree(repo.dir, treeSha, false);
    return {
      status: 200,
      body: entries
        .filter((e) => e.type === 'blob' || e.type === 'tree')
        .map((e) =>
          ctx.double.fixtures.contentEntry(
            repo,
            `${clean}/${e.path}`,
            ref,
            e.type === 'tree' ? 'dir' : 'file',
            e.sha,
            e.size ?? 0,
          ),
        ),
    };
  },
  'PUT /repos/{owner}/{repo}/contents/{path}': async (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const path = param(ctx, 'path');
    const branch = str(ctx.body, 'branch') ?? repo.defaultBranch;
    const expected = str(ctx.body, 'sha');
    const content = Buffer.from(String(ctx.body['content']), 'base64');
    return ctx.double.withRepoLock(repo, async () => {
      const git = ctx.double.git;
      const head = await git.resolveRef(repo.dir, `refs/heads/${branch}`);
      if (!head) throw new HttpError(404, `Branch ${branch} not found`);
      const existing = await git.readFile(repo.dir, head, path);
      // GitHub's compare-and-swap: updating needs the current blob sha; a stale one is a conflict.
      if (existing && expected === undefined)
        throw new HttpError(422, `Invalid request.\n\n"sha" wasn't supplied.`);
      if (existing && expected !== existing.sha)
        throw new HttpError(409, `${path} does not match ${expected}`);
      if (!existing && expected !== undefined)
        throw new HttpError(409, `${path} does not match ${expected}`);
      const written = await git.commitFiles(
        repo.dir,
        head,
        { [path]: content },
        String(ctx.body['message']),
        ctx.double.identity(actor),
        `refs/heads/${branch}`,
      );
      if (!written) throw new HttpError(409, `${path} does not match ${expected ?? ''}`);
      const c = await git.readCommit(repo.dir, written.commit);
      if (!c) throw new Error('commit just written is missing');
      return {
        status: existing ? 200 : 201,
        body: ctx.double.fixtures.fileCommit(
          repo,
          path,
          branch,
          written.blobs[path] ?? '',
          content.length,
          c,
        ),
      };
    });
  },
  'POST /repos/{owner}/{repo}/merges': async (ctx) => {
    const repo = repoOf(ctx);
    const actor = ctx.double.requireWrite(repo, ctx.actor);
    const baseName = String(ctx.body['base']);
    const headName = String(ctx.body['head']);
    return ctx.double.withRepoLock(repo, async () => {
      const git = ctx.double.git;
      const base = await git.resolveRef(repo.dir, `refs/heads/${baseName}`);
      const head = await commitish(ctx, repo, headName);
      if (!base) throw new HttpError(404, 'Base does not exist');
      if (!head) throw new HttpError(404, 'Head does not exist');
      if (await git.isAncestor(repo.dir, head, base)) return { status: 204 };
      const message = str(ctx.body, 'commit_message') ?? `Merge ${headName} into ${baseName}`;
      const merged = await git.mergeCommit(
        repo.dir,
        base,
        head,
        message,
        ctx.double.identity(actor),
      );
      if (merged === 'conflict') throw new HttpError(409, 'Merge conflict');
      if (!(await git.updateRef(repo.dir, `refs/heads/${baseName}`, merged, base)))
        throw new HttpError(409, 'Merge conflict');
      const c = await git.readCommit(repo.dir, merged);
      if (!c) throw new Error('merge commit just written is missing');
      return { status: 201, body: ctx.double.fixtures.commit(repo, c) };
    });
  },
};
