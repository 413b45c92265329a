import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CLEARED_VERDICT,
  configYaml,
  epicMerges,
  makeRepo,
  planMarkdown,
  record,
  reportJson,
  run,
  scriptedCoder,
  showFile,
  type ExecutorSpec,
  type Script,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const PLAN = planMarkdown([{ id: 'health', owns: ['src/health.js'] }]);

/**
 * A repository with a scripted coder `bot` (and a judge `reviewer`, when given);
 * scripts get the path of a file only planted commands would create.
 */
function setUp(
  coder: (planted: string) => Script,
  judge?: (planted: string) => Script,
): { planted: string } {
  repo = makeRepo({ 'README.md': 'x\n', 'src/server.js': 'server\n' });
  const planted = join(repo.tmp, 'planted-by-agent');
  const executors: ExecutorSpec[] = [
    { id: 'bot', command: scriptedCoder(repo, 'coder', coder(planted)) },
  ];
  if (judge !== undefined) {
    executors.push({
      id: 'reviewer',
      command: scriptedCoder(repo, 'reviewer', judge(planted)),
      roles: ['judge'],
    });
  }
  repo.write(
    'epicflow.yml',
    configYaml({
      executors,
      gates: ['true'],
      ...(judge === undefined ? {} : { extra: 'judge: { executor: reviewer, rounds: 1 }' }),
    }),
  );
  repo.commit('config');
  return { planted };
}

const gitFile = (name: string): string => join(repo.dir, '.git', name);
const readConfig = (): Buffer => readFileSync(gitFile('config'));

describe("git's own configuration", () => {
  it('puts back a filter the coder configured before epicflow stages, commits or merges', async () => {
    const { planted } = setUp((planted) => ({
      health: {
        '*': {
          write: { 'src/health.js': 'ok\n', '.gitattributes': '* filter=evil\n' },
          sh: [
            `git config filter.evil.clean "touch '${planted}'; cat"`,
            `git config filter.evil.smudge "touch '${planted}'; cat"`,
          ],
        },
      },
    }));
    const before = readConfig();
    const result = await run(repo, PLAN);
    expect(result.code).toBe(0);
    expect(existsSync(planted)).toBe(false);
    expect(readConfig()).toEqual(before);
    expect(epicMerges(repo)).toHaveLength(1);
    expect(showFile(repo, 'epic/epic', 'src/health.js')).toBe('ok');
    // The coder was shown the stray .gitattributes once, then the perimeter put it back.
    const notes = [
      "restored .git/config: git's configuration was changed during round 1 (bot coding)",
      "restored .git/config: git's configuration was changed during round 2 (bot coding)",
      'restored outside its perimeter: .gitattributes',
    ];
    expect(record(repo, 'health').notes).toEqual(notes);
    expect(reportJson(repo).stories[0]?.notes).toEqual(notes);
    expect(result.stdout).toContain(
      "[health] restored .git/config: git's configuration was changed during round 1 (bot coding)",
    );
  });

  it('puts back info/attributes, a merge driver, an editor and a proxy', async () => {
    const { planted } = setUp((planted) => ({
      health: {
        '*': {
          write: { 'src/health.js': 'ok\n' },
          sh: [
            `git config merge.x.driver "touch '${planted}'; false"`,
            `git config filter.s.clean "touch '${planted}'; cat"`,
            `git config filter.s.smudge "touch '${planted}'; cat"`,
            `git config core.editor "touch '${planted}'"`,
            'git config http.proxy http://127.0.0.1:9',
            'git config url.https://example.invalid/.insteadOf https://github.com/',
            'printf "* merge=x filter=s\\n" > "$(git rev-parse --git-common-dir)/info/attributes"',
          ],
        },
      },
    }));
    const before = readConfig();
    const result = await run(repo, PLAN);
    expect(result.code).toBe(0);
    expect(existsSync(planted)).toBe(false);
    expect(readConfig()).toEqual(before);
    expect(existsSync(gitFile('info/attributes'))).toBe(false);
    expect(showFile(repo, 'epic/epic', 'src/health.js')).toBe('ok');
    expect(record(repo, 'health').notes).toEqual([
      "restored .git/config, .git/info/attributes: git's configuration was changed during round 1 (bot coding)",
    ]);
  });

  it("puts back what a judge changed, and names the judge's turn", async () => {
    const { planted } = setUp(
      () => ({ health: { '*': { write: { 'src/health.js': 'ok\n' } } } }),
      (planted) => ({
        '*': {
          '*': {
            sh: [
              `git config filter.j.clean "touch '${planted}'; cat"`,
              'printf "* filter=j\\n" > "$(git rev-parse --git-common-dir)/info/attributes"',
            ],
            stdout: CLEARED_VERDICT,
          },
        },
      }),
    );
    const before = readConfig();
    const result = await run(repo, PLAN);
    expect(result.code).toBe(0);
    expect(existsSync(planted)).toBe(false);
    expect(readConfig()).toEqual(before);
    expect(existsSync(gitFile('info/attributes'))).toBe(false);
    expect(record(repo, 'health').notes).toEqual([
      "restored .git/config, .git/info/attributes: git's configuration was changed during round 2 (reviewer judging)",
      'judge reviewer cleared (provides 2/2, scope 2/2, style 2/2, tests 2/2)',
    ]);
  });

  it('leaves no note when nothing touched it', async () => {
    setUp(() => ({ health: { '*': { write: { 'src/health.js': 'ok\n' } } } }));
    const before = readConfig();
    const result = await run(repo, PLAN);
    expect(result.code).toBe(0);
    expect(readConfig()).toEqual(before);
    expect(record(repo, 'health').notes).toEqual([]);
    expect(result.stdout).not.toContain("git's configuration");
  });
});
