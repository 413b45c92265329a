/**
 * The diff epicflow reads (the judge's, the oracle guard's) and the changes the
 * perimeter sees cannot be blinded from inside the repository: attributes that
 * mark files binary or give them a textconv driver, an external diff, colour or
 * other prefixes in the config, or a `.gitmodules` that ignores a submodule.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { dirname, join } from 'node:path';
import { Git } from '../../../src/adapters/git/git.js';
import { fixtureIn, IDENTITY, makeRepo, type Fixture } from './repo-fixture.js';

const TESTS = `import test from 'node:test';
test('adds', () => {});
test('subtracts', () => {});
`;
const WEAKER = `import test from 'node:test';
test('adds', () => {});
`;

const fixtures: Fixture[] = [];
afterEach(() => {
  for (const f of fixtures.splice(0)) f.cleanup();
});

async function story(attributes: string, config: Record<string, string> = {}) {
  const f = makeRepo({ 'test/math.test.js': TESTS });
  fixtures.push(f);
  for (const [key, value] of Object.entries(config)) f.git('config', key, value);
  const git = await Git.open(f.dir, IDENTITY);
  const base = await git.defaultBase();
  await git.createBranch('story/1/s', base);
  const path = join(dirname(f.dir), 'wt', 's');
  await git.addWorktree(path, 'story/1/s');
  const sf = fixtureIn(path);
  sf.write('.gitattributes', attributes);
  sf.write('test/math.test.js', WEAKER);
  await git.worktree(path).commitAll('weaken the tests');
  // git reads attributes from the tree it runs in: the checkout epicflow diffs
  // from has them too once such a story is merged (or the user has them).
  f.write('.gitattributes', attributes);
  return { f, git, base, tree: git.worktree(path), sf };
}

describe('Git.diff', () => {
  it('shows the lines of a file the story marked binary with `-diff`', async () => {
    const { f, git, base } = await story('* -diff\n');
    // Plain git shows nothing but a line saying the files differ.
    expect(f.git('diff', `${base}...story/1/s`, '--', 'test/math.test.js')).toContain(
      'Binary files a/test/math.test.js and b/test/math.test.js differ',
    );
    const diff = await git.diff(base, 'story/1/s');
    expect(diff).toContain("-test('subtracts', () => {});");
    expect(diff).toContain('+++ b/test/math.test.js');
    expect(diff).toContain('+* -diff');
  });

  it('shows the stored lines whatever textconv, external diff, colour or prefixes the config sets', async () => {
    const { f, git, base } = await story('* diff=hide\n', {
      // The textconv makes every version read as empty.
      'diff.hide.textconv': 'true',
      'diff.external': 'true',
      'color.diff': 'always',
      'diff.noprefix': 'true',
      'diff.mnemonicPrefix': 'true',
    });
    expect(
      f.git('diff', '--no-ext-diff', `${base}...story/1/s`, '--', 'test/math.test.js'),
    ).not.toContain('subtracts');
    const diff = await git.diff(base, 'story/1/s');
    expect(diff).toContain("-test('subtracts', () => {});");
    expect(diff).toContain('--- a/test/math.test.js\n+++ b/test/math.test.js');
    expect(diff).not.toContain('\u001b[');
  });
});

describe('Worktree.changedPaths', () => {
  it('sees a submodule the story moved, whatever .gitmodules says', async () => {
    const { git, base, tree, sf } = await story('');
    const head = await tree.head();
    // A submodule pointer, written as git stores one, with `ignore = all`.
    sf.git('update-index', '--add', '--cacheinfo', `160000,${head},vendor/lib`);
    sf.write(
      '.gitmodules',
      '[submodule "lib"]\n\tpath = vendor/lib\n\turl = ./lib\n\tignore = all\n',
    );
    sf.git('add', '.gitmodules');
    sf.git('commit', '-q', '-m', 'add a submodule');
    expect(sf.git('diff', '--raw', `${base}...story/1/s`)).not.toContain('vendor/lib');
    const changes = await tree.changedPaths(base);
    expect(changes.find((c) => c.path === 'vendor/lib')).toEqual({
      path: 'vendor/lib',
      status: 'added',
      mode: 'submodule',
    });
    await git.removeWorktree(tree.path);
  });
});
