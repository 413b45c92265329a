/**
 * `epicflow logs <story>`: what a user reads after a run, through the CLI entry: the
 * last attempt's logs in order (every attempt with --all), the executor's secret
 * redacted, and an agent's terminal escape sequences never reaching the terminal.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  configYaml,
  makeRepo,
  planMarkdown,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
} from '../engine/support/repo.js';
import { epicflow } from '../support/cli.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const plan = planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]);
/** Sets the terminal's title, writes the clipboard, then colours a word. */
const HOSTILE = '\\033]0;pwned\\007\\033]52;c;ZWNobyBoaQ==\\007\\033[31mred\\033[0m';

describe('epicflow logs', () => {
  it("prints the last attempt's setup, turns and gates in order, safe for a terminal", async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const marker = `${repo.tmp}/failed-once`;
    const coder = scriptedCoder(repo, 'coder', {
      a: {
        '*': {
          sh: [
            // The first attempt prints hostile bytes and the key, then fails; the next one works.
            `if [ ! -f '${marker}' ]; then touch '${marker}'; printf '${HOSTILE} key=%s\\n' "$SECRET_KEY"; exit 1; fi`,
            'mkdir -p src && echo a > src/a.txt && echo second attempt wrote a',
          ],
        },
      },
    });
    // The coder's key, as a user configures it: resolved from the environment, never logged.
    repo.write(
      'epicflow.yml',
      [
        'executors:',
        '  - id: bot',
        '    harness: command',
        `    command: ${JSON.stringify(coder)}`,
        "    env: { SECRET_KEY: '${MY_KEY}' }",
        'setup: echo setting up',
        'gates: ["echo gate says hi"]',
        'retries: { transient: 0 }',
        '',
      ].join('\n'),
    );
    repo.commit('config');
    const env = { ...process.env, MY_KEY: 'sk-very-secret-value' };
    const first = await run(repo, plan, {}, { env });
    expect(first.code).toBe(1);
    const second = await run(repo, plan, {}, { env });
    expect({ code: second.code, out: second.code === 0 ? '' : second.stdout }).toEqual({
      code: 0,
      out: '',
    });

    const dir = `${stateDir(repo)}/logs/a`;
    const last = await epicflow(['logs', 'a'], repo.dir, { PATH: process.env.PATH });
    expect(last).toMatchObject({ code: 0, stderr: '' });
    expect(last.stdout.split('\n').filter((l) => l.startsWith('==> '))).toEqual([
      `==> ${dir}/2-1-setup.log <==`,
      `==> ${dir}/2-2-coder.log <==`,
      // The gates run on a fresh checkout of the story's commit, set up there again.
      `==> ${dir}/2-3-setup.log <==`,
      `==> ${dir}/2-4-gates.log <==`,
    ]);
    expect(last.stdout).toContain('setting up\n');
    expect(last.stdout).toContain('second attempt wrote a\n');
    expect(last.stdout).toContain('gate says hi\n');

    const all = await epicflow(['logs', 'a', '--all'], repo.dir, { PATH: process.env.PATH });
    expect(all.code).toBe(0);
    expect(all.stdout).toContain(`==> ${dir}/1-2-coder.log <==\nred key=[redacted]\n`);
    expect(all.stdout).not.toContain('sk-very-secret-value');
    // eslint-disable-next-line no-control-regex
    expect(all.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
  });

  it('a story without logs: exit 2, naming the stories that have some', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', { a: { '*': { write: { 'src/a.txt': 'a\n' } } } });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    expect((await run(repo, plan)).code).toBe(0);
    expect(await epicflow(['logs', 'nope'], repo.dir, { PATH: process.env.PATH })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: story "nope" has no logs in epic "epic"\n  stories with logs: a\n',
    });
  });
});
