/**
 * The trees an agent user was given are removed with root's rights before git removes them
 * or checks them out anew (composition/reclaiming-trees.ts): a linked worktree the agent
 * filled is removed whole, and the repository's own tree is never removed that way, even
 * when a caller names it (git then refuses, and the repository is as it was). The tests run
 * as root (an agent user is made) in folders of their own.
 *
 * @needs root
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Git } from '../../src/adapters/git/index.js';
import { gitPort } from '../../src/adapters/git/port.js';
import { agentUser, type Untrusted } from '../../src/adapters/process/untrusted.js';
import { reclaimingTrees } from '../../src/composition/reclaiming-trees.js';
import { makeRepo, type TestRepo } from './support/repo.js';

const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
let repo: TestRepo;
let untrusted: Untrusted;

beforeAll(async () => {
  repo = makeRepo({ 'README.md': 'x\n' });
  untrusted = await agentUser({
    user: 'epicflow-reclaim',
    roots: [repo.tmp],
    home: join(repo.tmp, 'homes'),
    env,
  });
});

afterAll(() => repo.cleanup());

it("removes a linked tree the agent wrote, and never the repository's own", async () => {
  const git = reclaimingTrees(gitPort(await Git.open(repo.dir)), untrusted);
  const tree = join(repo.tmp, 'trees', 's');
  const head = await git.revParse('HEAD');
  expect(head).not.toBeNull();
  await git.addWorktree(tree, head ?? '');
  const made = await untrusted.runShell('mkdir -p deep/er && echo agent > deep/er/file', {
    cwd: tree,
    env,
    timeoutMs: 30_000,
  });
  expect(made.exitCode).toBe(0);
  await git.removeWorktree(tree);
  expect(existsSync(tree)).toBe(false);

  await expect(git.removeWorktree(repo.dir)).rejects.toThrow(
    "refusing to remove the repository's own tree",
  );
  expect(existsSync(join(repo.dir, '.git'))).toBe(true);
  expect(repo.read('README.md')).toBe('x\n');
});
