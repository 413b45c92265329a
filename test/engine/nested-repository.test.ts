/**
 * A repository the agent nests in its tree (its own `.git`, a config whose clean filter
 * runs a command, `.gitattributes` that applies it to every file, a changed file) is never
 * entered by epicflow's git: no filter of the agent's runs as epicflow; it is left out of the
 * story's commits with a note, so no gitlink the base did not have is merged.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  git,
  makeRepo,
  planMarkdown,
  record,
  run,
  scriptedCoder,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

describe('a repository the agent nests in its tree', () => {
  it('runs none of its filters as epicflow and is never merged as a gitlink', async () => {
    repo = makeRepo({ 'README.md': 'x\n', 'src/keep.txt': 'keep\n' });
    const marker = join(repo.tmp, 'filter-ran-as-epicflow');
    // The filter is set once the nested repository is committed, so only a git that
    // enters it later runs it (the agent's turn runs none after that).
    const filter = `sh -c 'env > ${marker}; cat'`;
    const nest = [
      'mkdir -p src/nested && cd src/nested && git init -q',
      "echo '* filter=x' > .gitattributes",
      'echo one > f.txt',
      'git add -A',
      'git -c user.name=a -c user.email=a@example.com commit -q -m nested',
      `git config filter.x.clean "${filter}"`,
      `git config filter.x.smudge "${filter}"`,
      'git config filter.x.required true',
      // Changed after its commit: a `status` that enters it runs the clean filter.
      'echo two > f.txt',
    ].join(' && ');
    const coder = scriptedCoder(repo, 'coder', {
      nest: { '1': { sh: [nest], write: { 'src/a.txt': 'a\n' } }, '*': {} },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'], fixRounds: 1 }),
    );
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 'nest', owns: ['src/'] }]));
    expect(existsSync(marker)).toBe(false);
    // Whatever became of the story, the epic branch holds no gitlink.
    const tree = git(repo.dir, 'ls-tree', '-r', 'epic/epic').split('\n');
    expect(tree.filter((l) => l.startsWith('160000'))).toEqual([]);
    // The nested repository is left out of the story, with a note; the rest is merged.
    expect(tree.some((l) => l.endsWith('\tsrc/a.txt'))).toBe(true);
    expect(tree.some((l) => l.includes('src/nested'))).toBe(false);
    expect(result.code).toBe(0);
    expect(record(repo, 'nest')).toMatchObject({ status: 'done' });
    expect(result.stdout).toContain('left out src/nested: a repository nested in the tree');
  });
});
