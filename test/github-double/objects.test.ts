/**
 * The double's writes made in its own process (objects.ts) are the objects git's plumbing
 * made from a temporary index: the same blob, tree and commit names, step by step, on two
 * repositories (ours written the new way, theirs by git), and `git fsck --strict` passes on
 * ours. A REST commit starts one git process, the ref's compare-and-swap.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitStore } from './git.js';
import { commitFilesWithGit, git as gitVia, writeTreeWithGit } from './plumbing.js';

const who = { name: 'octocat', email: '583231+octocat@users.noreply.github.com' };
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

let store: GitStore;
let scratch: string;
/** Written through GitStore (in this process); `theirs` through git's plumbing. */
let ours: string;
let theirs: string;
let oursHead: string;
let theirsHead: string;

/** git from the file's helper process (not a fork of this worker), output trimmed. */
function git(dir: string, args: string[], input = '', extra: Record<string, string> = {}) {
  return gitVia(dir, args, { input, env: extra });
}

const treeOf = (dir: string, commit: string): Promise<string> =>
  git(dir, ['rev-parse', `${commit}^{tree}`]);

/** What `git commit-tree` makes of the same input at the same time, written aside. */
async function gitsCommit(tree: string, parents: string[], message: string, commit: string) {
  const date = /^author .* (\d+ [+-]\d{4})$/m.exec(await git(ours, ['cat-file', 'commit', commit]));
  const aside = await mkdtemp(join(scratch, 'objects-'));
  return git(
    ours,
    ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-F', '-'],
    message,
    {
      GIT_AUTHOR_NAME: who.name,
      GIT_AUTHOR_EMAIL: who.email,
      GIT_COMMITTER_NAME: who.name,
      GIT_COMMITTER_EMAIL: who.email,
      GIT_AUTHOR_DATE: `@${date?.[1] ?? ''}`,
      GIT_COMMITTER_DATE: `@${date?.[1] ?? ''}`,
      // git's own commit goes to a folder aside: ours must hold what the double wrote.
      GIT_OBJECT_DIRECTORY: aside,
      GIT_ALTERNATE_OBJECT_DIRECTORIES: join(ours, 'objects'),
    },
  );
}

let bin: string;

/** `run`, and the git commands it started (a \`git\` first on PATH logs each). */
async function counted<T>(run: () => Promise<T>): Promise<{ value: T; started: string[] }> {
  const log = join(bin, 'log');
  await writeFile(log, '');
  const path = process.env['PATH'];
  process.env['PATH'] = `${bin}:${path ?? ''}`;
  try {
    const value = await run();
    const started = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
    return { value, started };
  } finally {
    process.env['PATH'] = path;
  }
}

/** One commit on main both ways: same blobs, same tree, the commit git would write. */
async function commitBoth(
  files: Record<string, string | Buffer | null>,
  message = 'change\n',
  as = who,
  byGit = false,
): Promise<void> {
  const { value: made, started } = await counted(() =>
    store.commitFiles(ours, oursHead, files, message, as, 'refs/heads/main'),
  );
  // Written in this process, unless git must judge the input: then by git's plumbing.
  if (byGit) expect(started).toContain('write-tree');
  else expect(started).toEqual(['update-ref']);
  const theirsMade = await commitFilesWithGit(theirs, scratch, theirsHead, files, message, as);
  expect(made).toBeDefined();
  if (made === undefined) return;
  expect(made.blobs).toEqual(theirsMade.blobs);
  const tree = await treeOf(ours, made.commit);
  expect(tree).toBe(await treeOf(theirs, theirsMade.commit));
  if (as === who)
    expect(made.commit).toBe(await gitsCommit(tree, [oursHead], message, made.commit));
  expect(await git(ours, ['rev-parse', 'refs/heads/main'])).toBe(made.commit);
  oursHead = made.commit;
  theirsHead = theirsMade.commit;
}

beforeAll(async () => {
  store = await GitStore.create();
  scratch = await mkdtemp(join(tmpdir(), 'objects-test-'));
  bin = await mkdtemp(join(scratch, 'bin-'));
  const real = execFileSync('sh', ['-c', 'command -v git']).toString().trim();
  await writeFile(join(bin, 'git'), `#!/bin/sh\necho "$1" >> '${bin}/log'\nexec '${real}' "$@"\n`);
  await chmod(join(bin, 'git'), 0o755);
  ours = await store.init('acme', 'ours', 'main', { 'README.md': '# x\n' }, who);
  // Its reader (one long-running cat-file) starts here, before any count.
  oursHead = (await store.resolveRef(ours, 'refs/heads/main')) ?? '';
  theirs = join(scratch, 'theirs.git');
  await git(scratch, ['init', '--quiet', '--bare', '--initial-branch=main', theirs]);
  await git(theirs, ['config', 'http.receivepack', 'true']);
  const first = await commitFilesWithGit(
    theirs,
    scratch,
    null,
    { 'README.md': '# x\n' },
    'Initial commit',
    who,
  );
  theirsHead = first.commit;
});

afterAll(async () => {
  await store.dispose();
  await rm(scratch, { recursive: true, force: true });
});

describe('commits through the REST API', () => {
  it('starts the repository as git init and git config do', async () => {
    expect(await readFile(join(ours, 'config'), 'utf8')).toBe(
      await readFile(join(theirs, 'config'), 'utf8'),
    );
    expect(await treeOf(ours, oursHead)).toBe(await treeOf(theirs, theirsHead));
    expect(oursHead).toBe(
      await gitsCommit(await treeOf(ours, oursHead), [], 'Initial commit', oursHead),
    );
  });

  it('writes nested folders, binary content, non-ASCII paths and names git orders oddly', async () => {
    await commitBoth({
      'a/b/c.txt': 'c\n',
      'a/d.txt': 'd',
      'a.b': 'dot',
      'a-b': 'dash',
      a0: 'zero',
      'a/b.c': 'inner dot',
      'bin.dat': Buffer.from(Array.from({ length: 256 }, (_, i) => 255 - i)),
      'ünï/cödé.txt': 'é\n',
      '日本/語.md': '語',
      'name with spaces.txt': '',
      '.github/workflows/ci.yml': 'on: push\n',
      '10': 'ten',
      '2': 'two',
    });
  });

  it('changes, deletes, and deletes what is not there', async () => {
    await commitBoth({ 'a/b/c.txt': 'c2\n', 'a/d.txt': null, 'nope/x': null, 'bin.dat/x': null });
  });

  it('replaces a file by a folder and a folder by a file', async () => {
    await commitBoth({ 'a.b/inner.txt': 'a folder now', 'a/b': 'a file now' });
  });

  it('drops a folder whose last file is deleted, and keeps a tree nothing changed', async () => {
    await commitBoth({ '日本/語.md': null });
    await commitBoth({ a0: 'zero' }, 'Ünïcode message, no line feed');
    await commitBoth({}, '');
  });

  it('empties the tree and fills it again', async () => {
    const paths = (await git(ours, ['ls-tree', '-r', '--name-only', '-z', oursHead])).split('\0');
    await commitBoth(Object.fromEntries(paths.filter(Boolean).map((p) => [p, null])));
    expect(await treeOf(ours, oursHead)).toBe(EMPTY_TREE);
    await commitBoth({ 'x/y': 'y', 'x/z': null, 'x/y/w': 'w' });
  });

  it('leaves to git what git judges: odd paths, a folder deleted as a path, odd names', async () => {
    for (const path of ['.git/config', 'a//b', './c', 'GIT~1/d', '.Git /f', 'e/'])
      await commitBoth({ [path]: 'x', keep: 'k' }, 'odd path', who, true);
    await commitBoth({ x: null, keep: 'k' }, 'folder as a path', who, true);
    await commitBoth({ n: 'n' }, 'name', { name: '.bot.', email: ' b@example.com.' }, true);
    await commitBoth({ n: 'm' }, 'bad \uFFFE', who, true);
  });

  it('makes merge commits as commit-tree does', async () => {
    const side = await store.commitFiles(ours, oursHead, { side: 's' }, 'side', who);
    const tree = await treeOf(ours, oursHead);
    const parents = [oursHead, side?.commit ?? ''];
    const merge = await store.commitTree(ours, tree, parents, 'Merge side\n', who);
    expect(merge).toBe(await gitsCommit(tree, parents, 'Merge side\n', merge));
    // A parent named twice: git keeps one and says so; the double asks git.
    const twice = await store.commitTree(ours, tree, [oursHead, oursHead], 'm', who);
    expect((await git(ours, ['cat-file', 'commit', twice])).match(/^parent /gm)).toHaveLength(1);
  });

  it('moves the ref by compare-and-swap: of racing commits on one parent one lands', async () => {
    const parent = oursHead;
    const made = await Promise.all(
      ['a', 'b', 'c', 'd'].map((n) =>
        store.commitFiles(ours, parent, { shared: 'same', [n]: n }, n, who, 'refs/heads/main'),
      ),
    );
    const landed = made.filter((m) => m !== undefined);
    expect(landed).toHaveLength(1);
    oursHead = await git(ours, ['rev-parse', 'refs/heads/main']);
    expect(oursHead).toBe(landed[0]?.commit);
  });

  it('leaves a repository git fsck --strict passes', async () => {
    await expect(git(ours, ['fsck', '--strict', '--no-dangling', '--no-progress'])).resolves.toBe(
      '',
    );
  });
});

describe('trees through the git data API', () => {
  // The tree both chains reached last (ours moved on alone since).
  const base = (): Promise<string> => treeOf(theirs, theirsHead);
  const both = async (
    from: string | undefined,
    entries: { path: string; mode: string; content?: string; sha?: string | null }[],
  ): Promise<string> => {
    const { value: tree, started } = await counted(() => store.writeTree(ours, from, entries));
    expect(started).toEqual([]);
    expect(tree).toBe(await writeTreeWithGit(theirs, scratch, from, entries));
    return tree;
  };

  it('writes executable files, names existing blobs, deletes, changes a mode', async () => {
    const readme = await git(theirs, ['rev-parse', `${theirsHead}:keep`]);
    await both(await base(), [
      { path: 'tools/run.sh', mode: '100755', content: '#!/bin/sh\n' },
      { path: 'copy/README.md', mode: '100644', sha: readme },
      { path: 'keep', mode: '100755', sha: readme },
      { path: 'n', mode: '100644', sha: null },
    ]);
    expect(await both(undefined, [])).toBe(EMPTY_TREE);
    expect(await both(await base(), [])).toBe(await base());
    await both(undefined, [{ path: 'only/one', mode: '100644', content: 'one' }]);
  });

  it('drops empty folders from the folders it writes, as write-tree does', async () => {
    const blob = await git(ours, ['hash-object', '-w', '--stdin'], 'f');
    await git(theirs, ['hash-object', '-w', '--stdin'], 'f');
    const mk = (dir: string, text: string) => git(dir, ['mktree'], text);
    const shaped = async (dir: string): Promise<string> => {
      const empty = await mk(dir, '');
      const onlyEmpty = await mk(dir, `040000 tree ${empty}\tnothing\n`);
      const inner = await mk(dir, `040000 tree ${empty}\tvoid\n100644 blob ${blob}\tf\n`);
      return mk(
        dir,
        `040000 tree ${empty}\tempty\n040000 tree ${onlyEmpty}\thollow\n` +
          `040000 tree ${inner}\tinner\n040000 tree ${inner}\tuntouched\n100644 blob ${blob}\tf\n`,
      );
    };
    const start = await shaped(ours);
    expect(await shaped(theirs)).toBe(start);
    await both(start, [{ path: 'g', mode: '100644', content: 'g' }]);
    await both(start, [{ path: 'inner/g', mode: '100644', content: 'g' }]);
  });
});

describe('what the object writer refuses or leaves', () => {
  it('starts one git process for a REST commit: the compare-and-swap of the ref', async () => {
    const { value: made, started } = await counted(() =>
      store.commitFiles(ours, oursHead, { 'p/q': 'r' }, 'one process', who, 'refs/heads/main'),
    );
    expect(made).toBeDefined();
    expect(started).toEqual(['update-ref']);
    oursHead = made?.commit ?? '';
  });

  it('refuses a repository whose objects are not sha1', async () => {
    const dir = join(scratch, 'sha256.git');
    await git(scratch, ['init', '--quiet', '--bare', '--object-format=sha256', dir]);
    await expect(store.commitFiles(dir, null, { a: 'b' }, 'm', who)).rejects.toThrow(
      /stores sha256 objects; the double writes sha1 only/,
    );
  });
});
