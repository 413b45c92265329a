/**
 * What setup writes into a story's tree (the lockfile `npm install` makes when the
 * repository has none, a file it regenerates) is not the coder's work: it is left out
 * of the story's commits without a perimeter round, unless the coder changes it
 * itself, in a story that owns it.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  configYaml,
  git,
  makeRepo,
  planMarkdown,
  prompts,
  run,
  scriptedCoder,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** The coder turns by story, from the scripted coder's log. */
function turns(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { story } of prompts(repo, 'coder')) counts[story] = (counts[story] ?? 0) + 1;
  return counts;
}

describe("setup's own changes", () => {
  it('stay out of the commits, cost no perimeter round, and a story owning the file still changes it', async () => {
    repo = makeRepo({ 'README.md': 'readme\n', 'generated.txt': 'v1\n' });
    const coder = scriptedCoder(repo, 'coder', {
      a: { '*': { write: { 'src/a.txt': 'a\n' } } },
      lock: { '*': { write: { 'lock.json': '{"by":"the coder"}\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder, slots: 2 }],
        // A new lockfile, and a tracked file rewritten: both setup's, neither the story's.
        setup: 'echo \'{"by":"setup"}\' > lock.json && echo v2 > generated.txt',
        gates: ['test -f lock.json && grep -q v2 generated.txt'],
        concurrency: 1,
      }),
    );
    repo.commit('config');
    const r = await run(
      repo,
      planMarkdown([
        { id: 'a', owns: ['src/a.txt'] },
        { id: 'lock', owns: ['lock.json'], dependsOn: ['a'] },
      ]),
    );
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toContain(
      "[a] setup changed generated.txt, lock.json: left out of the story's commits",
    );
    expect(r.stdout).not.toContain('outside its perimeter');
    expect(r.stdout).not.toContain('discarded');
    expect(turns()).toEqual({ a: 1, lock: 1 });
    // Story a's merge brings its file only; the story owning lock.json brings the coder's version.
    const aMerge = git(repo.dir, 'log', '--format=%H', '--grep=Epicflow-Story: a', 'epic/epic');
    expect(git(repo.dir, 'diff', '--name-only', `${aMerge}^1`, aMerge)).toBe('src/a.txt');
    expect(git(repo.dir, 'show', 'epic/epic:lock.json')).toBe('{"by":"the coder"}');
    expect(git(repo.dir, 'show', 'epic/epic:generated.txt')).toBe('v1');
  });
});
