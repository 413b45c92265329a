/**
 * Where a run's roster comes from: `--executors` narrows it for one run, `disabled: true`
 * leaves an entry out, and a user-level `executors.yml` (under XDG_CONFIG_HOME, a folder of
 * the test's own) adds executors under the repository's, whose entry of the same id wins
 * as a whole.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  git,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  run,
  scriptedCoder,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const plan = planMarkdown([{ id: 's', owns: ['src/s.txt'] }]);
const writes = { '*': { '*': { write: { 'src/s.txt': 'done\n' } } } };

/** A user-level roster file in the test's own config home; returns the env that points at it. */
function userRoster(text: string): NodeJS.ProcessEnv {
  const home = join(repo.tmp, 'user-config');
  mkdirSync(join(home, 'epicflow'), { recursive: true });
  writeFileSync(join(home, 'epicflow', 'executors.yml'), text);
  return { ...process.env, XDG_CONFIG_HOME: home, HOME: join(repo.tmp, 'no-home') };
}

describe('--executors', () => {
  it('runs only the named executors: the others get no turn', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const a = scriptedCoder(repo, 'a', writes);
    const b = scriptedCoder(repo, 'b', writes);
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [
          { id: 'a', command: a, priority: 1 },
          { id: 'b', command: b, priority: 2 },
        ],
        gates: ['true'],
      }),
    );
    repo.commit('config');
    const result = await run(repo, plan, { executors: ['b'] });
    expect(result.code).toBe(0);
    expect(record(repo, 's')).toMatchObject({ status: 'done', executors: ['b'] });
    expect(prompts(repo, 'a')).toHaveLength(0);
  });

  it('refuses an unknown id with exit 2, naming it and the known ids, before anything runs', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const a = scriptedCoder(repo, 'a', writes);
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'a', command: a }], gates: ['true'] }),
    );
    repo.commit('config');
    const result = await run(repo, plan, { executors: ['a', 'nope'] });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--executors: unknown executor "nope"');
    expect(result.stderr).toContain('known executors: a');
    expect(prompts(repo, 'a')).toHaveLength(0);
  });
});

describe('disabled executors', () => {
  it('leaves a disabled entry out of the run', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const a = scriptedCoder(repo, 'a', writes);
    const b = scriptedCoder(repo, 'b', writes);
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [
          { id: 'a', command: a, priority: 1 },
          { id: 'b', command: b, priority: 2 },
        ],
        gates: ['true'],
      }).replace('    priority: 1\n', '    priority: 1\n    disabled: true\n'),
    );
    repo.commit('config');
    const result = await run(repo, plan);
    expect(result.code).toBe(0);
    expect(record(repo, 's')).toMatchObject({ executors: ['b'] });
    expect(prompts(repo, 'a')).toHaveLength(0);
    // Named on the command line, it is not in the roster either.
    const named = await run(repo, plan, { executors: ['a'] });
    expect(named.code).toBe(2);
    expect(named.stderr).toContain('unknown executor "a"');
    expect(named.stderr).toContain('known executors: b');
  });
});

describe('the user-level roster', () => {
  it("adds the user's executors under the repository's", async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const mine = scriptedCoder(repo, 'mine', writes);
    repo.write('epicflow.yml', 'gates: ["true"]\n');
    repo.commit('config');
    const env = userRoster(
      `executors:\n  - id: mine\n    harness: command\n    command: ${JSON.stringify(mine)}\n`,
    );
    const result = await run(repo, plan, {}, { env });
    expect(result.code).toBe(0);
    expect(record(repo, 's')).toMatchObject({ status: 'done', executors: ['mine'] });
  });

  it("lets the repository's entry of the same id replace the user's as a whole", async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    // The coder writes what its MARK variable says: only the user's entry sets one.
    const marks = { '*': { '*': { sh: ['mkdir -p src && echo "mark=$MARK" > src/s.txt'] } } };
    const repoCoder = scriptedCoder(repo, 'repo-coder', marks);
    const userCoder = scriptedCoder(repo, 'user-coder', marks);
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'shared', command: repoCoder }], gates: ['true'] }),
    );
    repo.commit('config');
    // No field of the user's entry applies, not even one the repository's entry leaves out.
    const env = userRoster(
      [
        'executors:',
        '  - id: shared',
        '    harness: command',
        `    command: ${JSON.stringify(userCoder)}`,
        '    env: { MARK: from-user }',
        '',
      ].join('\n'),
    );
    const result = await run(repo, plan, {}, { env });
    expect(result.code).toBe(0);
    expect(prompts(repo, 'repo-coder')).toHaveLength(1);
    expect(prompts(repo, 'user-coder')).toHaveLength(0);
    expect(git(repo.dir, 'show', 'epic/epic:src/s.txt')).toBe('mark=');
  });

  it('lets the repository disable a user executor, and names the user file when it is invalid', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const a = scriptedCoder(repo, 'a', writes);
    const mine = scriptedCoder(repo, 'mine', writes);
    repo.write(
      'epicflow.yml',
      `${configYaml({ executors: [{ id: 'a', command: a, priority: 5 }], gates: ['true'] })}`.replace(
        'gates:',
        `  - id: mine\n    harness: command\n    command: ${JSON.stringify(mine)}\n    disabled: true\ngates:`,
      ),
    );
    repo.commit('config');
    const env = userRoster(
      `executors:\n  - id: mine\n    harness: command\n    command: ${JSON.stringify(mine)}\n    priority: 1\n`,
    );
    const result = await run(repo, plan, {}, { env });
    expect(result.code).toBe(0);
    expect(prompts(repo, 'mine')).toHaveLength(0);
    expect(record(repo, 's')).toMatchObject({ executors: ['a'] });

    const bad = userRoster('executors:\n  - id: mine\n    harness: codex\n    slots: two\n');
    const refused = await run(repo, plan, {}, { env: bad });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `invalid executors file ${join(repo.tmp, 'user-config', 'epicflow', 'executors.yml')}`,
    );
    expect(refused.stderr).toContain('executors[0].slots: expected a positive integer');
  });
});
