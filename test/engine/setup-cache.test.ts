/**
 * The setup cache, through `epicflow run`: setup on fresh checkouts of commits (the
 * baseline, a story's checks, the merged tree) runs once per setup and lockfile, and the
 * later checkouts get a copy of what it made. The repository's setup counts its runs in a
 * file beside the repository (with the folder it ran in) and writes `deps/version.txt`,
 * a copy of the lockfile the gate needs; the gate then writes into that file, as a gate
 * may, which must never reach the next checkout.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  epicMerges,
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

/** Setup: counts its run, then installs the "dependencies" the lockfile names. */
const SETUP = [
  'echo "$PWD" >> "$1"',
  'mkdir -p deps',
  'cp package-lock.json deps/version.txt',
  // A link to a file outside the checkout (and one climbing out of it): kept as links.
  'ln -s "$2" deps/outside',
  'ln -s ../../../../../../../../../../../.. deps/up',
  'ln -s version.txt deps/inside',
  '',
].join('\n');

/** The gate: the installed version is the lockfile's; then it writes into the installed file. */
const GATE = [
  "import { appendFileSync, readFileSync } from 'node:fs';",
  "const installed = readFileSync('deps/version.txt', 'utf8');",
  "const locked = readFileSync('package-lock.json', 'utf8');",
  'if (installed !== locked) { console.error(`FAIL: installed ${JSON.stringify(installed)}, locked ${JSON.stringify(locked)}`); process.exit(1); }',
  "appendFileSync('deps/version.txt', 'written by a gate\\n');",
  "console.log('ok');",
  '',
].join('\n');

const SECRET = 'a file outside the checkout\n';

/** Stories a and b (b after a), or a alone where one story shows the rule (`aOnly`). */
function setUp(
  opts: { cache?: boolean; lockfile?: boolean; bChangesLock?: boolean; aOnly?: boolean } = {},
): {
  plan: string;
  counter: string;
} {
  repo = makeRepo({
    'README.md': 'x\n',
    'setup.sh': SETUP,
    'gate.mjs': GATE,
    '.gitignore': 'deps/\n',
    ...(opts.lockfile === false ? {} : { 'package-lock.json': '{"lock":1}\n' }),
  });
  const counter = join(repo.tmp, 'setup-runs');
  const secret = join(repo.tmp, 'secret.txt');
  writeFileSync(secret, SECRET);
  const coder = scriptedCoder(repo, 'coder', {
    a: { '*': { write: { 'src/a.txt': 'a\n' } } },
    c: { '*': { write: { 'src/c.txt': 'c\n' } } },
    b: {
      '*': {
        write: {
          'src/b.txt': 'b\n',
          ...(opts.bChangesLock === true ? { 'package-lock.json': '{"lock":2}\n' } : {}),
        },
      },
    },
  });
  repo.write(
    'epicflow.yml',
    configYaml({
      executors: [{ id: 'bot', command: coder }],
      setup: `sh setup.sh ${counter} ${secret}`,
      gates: ['node gate.mjs'],
      ...(opts.cache === false ? { extra: 'setupCache: false' } : {}),
    }),
  );
  repo.commit('config');
  const plan = planMarkdown([
    { id: 'a', owns: ['src/a.txt'] },
    ...(opts.aOnly === true
      ? []
      : [
          {
            id: 'b',
            owns: ['src/b.txt', ...(opts.bChangesLock === true ? ['package-lock.json'] : [])],
            dependsOn: ['a'],
          },
        ]),
  ]);
  return { plan, counter };
}

/**
 * The checkouts setup ran in, in order: a story's own tree (named by its id) at its start,
 * before its coder, is a fresh checkout too.
 */
function freshRuns(counter: string): string[] {
  if (!existsSync(counter)) return [];
  return readFileSync(counter, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.slice(l.lastIndexOf('/') + 1));
}

function cacheRoot(): string {
  return join(repo.dir, '.git', 'epicflow', 'cache', 'setup');
}

/** Every path kept in the cache, relative to the cache's root; links are not followed. */
function cached(): string[] {
  const root = cacheRoot();
  if (!existsSync(root)) return [];
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      out.push(path);
      if (entry.isDirectory()) walk(path);
    }
  };
  walk('');
  return out.sort();
}

describe('the setup cache', () => {
  it('setup runs once per lockfile on fresh checkouts; later checks use a copy, gates pass, a gate’s write stays in its checkout; a story that changes the lockfile gets a key of its own', async () => {
    // b changes the lockfile: its checks get a key of their own, setup runs again for it,
    // and its gate sees the new install.
    const { plan, counter } = setUp({ bChangesLock: true });
    // A link the commit holds is the commit's, not setup's: never kept.
    symlinkSync('README.md', join(repo.dir, 'readme-link'));
    repo.commit('a link');
    const result = await run(repo, plan);
    expect(result.code).toBe(0);
    expect(epicMerges(repo)).toEqual(['Merge story a: Story a', 'Merge story b: Story b']);
    expect(record(repo, 'b')['status']).toBe('done');
    // The first fresh checkout of each lockfile ran setup (a's tree, before its coder; b's
    // checks, whose commit changed the lockfile); every later one got the cache.
    expect(freshRuns(counter)).toEqual(['a', 'b.checks']);
    expect(result.stdout).toMatch(/setup came from the cache of key [0-9a-f]{12}/);
    const entries = readdirSync(cacheRoot());
    expect(entries).toHaveLength(2);
    // What was kept is setup's own file, as setup wrote it: no gate's write, no tracked file.
    const versions = entries.map((e) =>
      readFileSync(join(cacheRoot(), e, 'deps', 'version.txt'), 'utf8'),
    );
    expect(versions.sort()).toEqual(['{"lock":1}\n', '{"lock":2}\n']);
    for (const e of entries) {
      const entry = join(cacheRoot(), e);
      expect(existsSync(join(entry, 'package-lock.json'))).toBe(false);
      expect(lstatSync(join(entry, 'readme-link'), { throwIfNoEntry: false })).toBeUndefined();
      expect(existsSync(join(entry, '.git'))).toBe(false);
      // Every link was kept as a link, the ones leaving the checkout too.
      expect(existsSync(join(entry, 'deps', 'inside'))).toBe(true);
      expect(lstatSync(join(entry, 'deps', 'outside')).isSymbolicLink()).toBe(true);
      expect(lstatSync(join(entry, 'deps', 'up')).isSymbolicLink()).toBe(true);
    }
    // Nothing kept holds the outside file's text: a link's target is never copied.
    for (const path of cached()) {
      const full = join(cacheRoot(), path);
      if (lstatSync(full).isFile()) expect(readFileSync(full, 'utf8')).not.toContain(SECRET);
    }
  });

  it('without a lockfile the manifests key it within one epic: its checks install once, the next epic resolves again', async () => {
    const { plan, counter } = setUp({ lockfile: false, aOnly: true });
    // The gate compares with the lockfile: without one it has nothing to compare, so it
    // is given one that is not a lockfile by name.
    repo.write('gate.mjs', GATE.replaceAll('package-lock.json', 'README.md'));
    repo.write('setup.sh', SETUP.replace('package-lock.json', 'README.md'));
    repo.write('package.json', '{"devDependencies":{"ava":"^3"}}\n');
    repo.commit('no lockfile, a manifest');
    const result = await run(repo, plan);
    expect(result.code).toBe(0);
    // The story's tree installs, then a copy of it for the base and the story's checks.
    expect(freshRuns(counter)).toEqual(['a']);
    expect(result.stdout).toMatch(
      /setup came from the cache of key [0-9a-f]{12} \(same setup and manifests in this epic: no lockfile pins them\)/,
    );
    expect(readdirSync(cacheRoot())).toHaveLength(1);

    const next = join(repo.tmp, 'next.md');
    writeFileSync(next, planMarkdown([{ id: 'c', owns: ['src/c.txt'] }]));
    const again = await run(repo, plan, { file: next });
    expect(again.code).toBe(0);
    expect(freshRuns(counter)).toEqual(['a', 'c']);
    expect(readdirSync(cacheRoot())).toHaveLength(2);
  });

  it('setupCache: false runs setup on every fresh checkout', async () => {
    const { plan, counter } = setUp({ cache: false, aOnly: true });
    const result = await run(repo, plan);
    expect(result.code).toBe(0);
    expect(freshRuns(counter).length).toBeGreaterThan(1);
    expect(result.stdout).not.toContain('setup came from the cache');
    expect(existsSync(cacheRoot())).toBe(false);
    expect(git(repo.dir, 'status', '--porcelain')).toBe('');
  });

  it('with a Python lockfile what setup made is reused only at the same path: a gate that needs its own folder (a virtual environment script) passes everywhere', async () => {
    const { plan, counter } = setUp();
    repo.write('requirements.txt', 'pytest==8.3.0\n');
    // What setup made names the folder it ran in, as a virtual environment's scripts do in
    // their first line; the gate runs nothing made for another folder.
    repo.write('setup.sh', `${SETUP}pwd -P > deps/where\n`);
    repo.write(
      'gate.mjs',
      `${GATE}if (readFileSync('deps/where', 'utf8').trim() !== process.cwd()) { console.error('FAIL: made in another folder'); process.exit(1); }\n`,
    );
    repo.commit('a Python lockfile');
    const result = await run(repo, plan);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain('made in another folder');
    // Each checkout path ran setup once: none was put back in a checkout at another path.
    expect(freshRuns(counter)).toEqual(['a', '_base', 'a.checks', 'b', 'b.checks']);
    expect(readdirSync(cacheRoot())).toHaveLength(5);
  });
});
