import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { octokitFor } from './client.js';
import { startGitHubDouble, type GitHubDouble, type SeededUser } from './index.js';

const run = promisify(execFile);
const env = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Alice',
  GIT_AUTHOR_EMAIL: 'alice@example.com',
  GIT_COMMITTER_NAME: 'Alice',
  GIT_COMMITTER_EMAIL: 'alice@example.com',
};
const git = (cwd: string, ...args: string[]) => run('git', args, { cwd, env });

let gh: GitHubDouble;
let alice: SeededUser;
let reader: SeededUser;
let work: string;

beforeAll(async () => {
  gh = await startGitHubDouble();
  alice = gh.seed.user({ login: 'alice', permission: 'write' });
  reader = gh.seed.user({ login: 'rita', permission: 'read' });
  await gh.seed.repo({ owner: 'acme', name: 'shop', files: { 'README.md': 'hello\n' } });
  work = await mkdtemp(join(tmpdir(), 'github-double-git-'));
});

afterAll(async () => {
  await gh.close();
  await rm(work, { recursive: true, force: true });
});

describe('git over smart HTTP', () => {
  it('clones with an x-access-token, pushes a branch, and REST sees the pushed ref', async () => {
    const dir = join(work, 'clone');
    await git(work, 'clone', '--quiet', gh.gitUrl('acme', 'shop', alice.token), dir);
    await writeFile(join(dir, 'story.txt'), 'done\n');
    await git(dir, 'checkout', '--quiet', '-b', 'story/a');
    await git(dir, 'add', 'story.txt');
    await git(dir, 'commit', '--quiet', '-m', 'story a');
    await git(dir, 'push', '--quiet', 'origin', 'story/a');
    const { stdout } = await git(dir, 'rev-parse', 'HEAD');

    const octokit = octokitFor(gh, alice.token);
    const ref = await octokit.rest.git.getRef({
      owner: 'acme',
      repo: 'shop',
      ref: 'heads/story/a',
    });
    expect(ref.data.object.sha).toBe(stdout.trim());

    // A REST write lands in the same repository and is fetched back over HTTP.
    await octokit.rest.repos.createOrUpdateFileContents({
      owner: 'acme',
      repo: 'shop',
      branch: 'story/a',
      path: 'api.txt',
      message: 'via api',
      content: Buffer.from('api\n').toString('base64'),
    });
    await git(dir, 'pull', '--quiet', 'origin', 'story/a');
    const log = await git(dir, 'log', '--format=%s', '-2');
    expect(log.stdout.trim().split('\n')).toEqual(['via api', 'story a']);
  });

  it('holds pushes to one branch until both have come: the second, behind, is refused', async () => {
    const clones = await Promise.all(
      ['one', 'two'].map(async (name) => {
        const dir = join(work, `race-${name}`);
        await git(work, 'clone', '--quiet', gh.gitUrl('acme', 'shop', alice.token), dir);
        await writeFile(join(dir, `${name}.txt`), `${name}\n`);
        await git(dir, 'add', '.');
        await git(dir, 'commit', '--quiet', '-m', name);
        return dir;
      }),
    );
    gh.holdPushes('refs/heads/main', 2);
    const first = git(clones[0] ?? '', 'push', '--quiet', 'origin', 'main');
    // The first push waits for the second: the branch has not moved yet.
    await new Promise((r) => setTimeout(r, 300));
    const octokit = octokitFor(gh, alice.token);
    const before = await octokit.rest.git.getRef({
      owner: 'acme',
      repo: 'shop',
      ref: 'heads/main',
    });
    const second = git(clones[1] ?? '', 'push', '--quiet', 'origin', 'main');
    const settled = await Promise.allSettled([first, second]);
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    const after = await octokit.rest.git.getRef({ owner: 'acme', repo: 'shop', ref: 'heads/main' });
    expect(after.data.object.sha).not.toBe(before.data.object.sha);
    expect(after.data.object.sha).toBe(
      (await git(clones[0] ?? '', 'rev-parse', 'HEAD')).stdout.trim(),
    );
  });

  it('rejects a missing or wrong token with 401 and a read-only push with 403', async () => {
    const bare = await fetch(`${gh.url}/acme/shop.git/info/refs?service=git-upload-pack`);
    expect([bare.status, bare.headers.get('www-authenticate')]).toEqual([
      401,
      'Basic realm="GitHub"',
    ]);
    // Without a token git is challenged for credentials and (with prompts off) gives up.
    const noToken = await git(work, 'ls-remote', `${gh.url}/acme/shop.git`).catch(
      (e: { stderr: string }) => e.stderr,
    );
    expect(noToken).toContain('could not read Username');
    const wrong = await git(work, 'ls-remote', gh.gitUrl('acme', 'shop', 'ghs_wrong')).catch(
      (e: { stderr: string }) => e.stderr,
    );
    expect(wrong).toContain('Authentication failed');

    const dir = join(work, 'ro');
    await git(work, 'clone', '--quiet', gh.gitUrl('acme', 'shop', reader.token), dir);
    await git(dir, 'commit', '--quiet', '--allow-empty', '-m', 'x');
    const push = await git(dir, 'push', 'origin', 'HEAD:refs/heads/ro').catch(
      (e: { stderr: string }) => e.stderr,
    );
    expect(push).toContain('403');
    expect(await gh.state.ref('acme', 'shop', 'ro')).toBeUndefined();
  });
});
