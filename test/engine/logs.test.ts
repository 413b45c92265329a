import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { statusCommand } from '../../src/cli/commands/status.js';
import {
  configYaml,
  makeRepo,
  planMarkdown,
  record,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const plan = planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]);

/** The path a printed line names as the story's log. */
function logPath(line: string | undefined): string {
  const m = / \(log: (\/[^)]+\.log)\)$/.exec(line ?? '');
  expect(m).not.toBeNull();
  return (m as RegExpExecArray)[1] as string;
}

async function status(): Promise<string> {
  let out = '';
  const io = {
    stdout: (s: string) => (out += s),
    stderr: (s: string) => (out += s),
    cwd: repo.dir,
    isTTY: false,
  };
  expect(await statusCommand({ epic: 'epic' }, io)).toBe(0);
  return out;
}

describe('a story keeps the whole output of its setup, gates and turns', () => {
  it('a failing setup: the printed failure names the log, which holds every line; status shows it', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', { a: { '*': { write: { 'src/a.txt': 'a\n' } } } });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        setup:
          'for i in $(seq 1 40); do echo "setup line $i"; done; echo "setup broke" >&2; exit 3',
      }),
    );
    repo.commit('config');

    const r = await run(repo, plan);
    expect(r.code).toBe(1);
    const failure = r.stdout.split('\n').find((l) => l.startsWith('[a] failed: setup failed'));
    // The reason stays short: the last lines only.
    expect(failure).toContain('setup broke');
    expect(failure).not.toContain('setup line 1 ');
    const path = logPath(failure);
    expect(path.startsWith(`${stateDir(repo)}/logs/a/`)).toBe(true);
    const log = readFileSync(path, 'utf8');
    for (let i = 1; i <= 40; i += 1) expect(log).toContain(`setup line ${i}\n`);
    expect(log).toContain('setup broke');
    expect(record(repo, 'a').reason).toContain(path);

    const board = await status();
    expect(board).toContain(`${stateDir(repo)}/logs/a/`);
  });

  it("a failing coder turn: its transcript is kept, with the executor's secrets redacted", async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      a: {
        '*': {
          sh: ['echo "key is $MY_API_KEY"; for i in $(seq 1 30); do echo "step $i"; done'],
          exit: 1,
        },
      },
    });
    repo.write(
      'epicflow.yml',
      [
        'executors:',
        '  - id: bot',
        '    harness: command',
        `    command: ${JSON.stringify(coder)}`,
        "    env: { MY_API_KEY: '${LOGS_TEST_SECRET}' }",
        'gates: ["true"]',
        // The failed turn fails the story at once: no retries of its crash.
        'retries: { transient: 0 }',
        '',
      ].join('\n'),
    );
    repo.commit('config');

    const secret = 'sk-very-secret-value-123';
    const r = await run(repo, plan, {}, { env: { ...process.env, LOGS_TEST_SECRET: secret } });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    const failure = r.stdout.split('\n').find((l) => l.startsWith('[a] failed: coder turn failed'));
    const path = logPath(failure);
    expect(path).toMatch(/-coder\.log$/);
    const log = readFileSync(path, 'utf8');
    expect(log).toContain('key is [redacted]');
    for (let i = 1; i <= 30; i += 1) expect(log).toContain(`step ${i}\n`);
    expect(log).not.toContain(secret);
    expect(r.stdout).not.toContain(secret);
  });
});
