import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { main } from '../../src/cli/program.js';
import {
  configYaml,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

async function roster(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(['roster', ...argv, '--repo', repo.dir], {
    stdout: (s) => (out += s),
    stderr: (s) => (err += s),
    readStdin: async () => '',
    cwd: repo.tmp,
  });
  return { code, out, err };
}

const plan = planMarkdown([{ id: 's', owns: ['src/s.txt'] }]);

function setUp(): void {
  repo = makeRepo({ 'README.md': 'x\n' });
  const a = scriptedCoder(repo, 'a', { '*': { '*': { write: { 'src/s.txt': 'a\n' } } } });
  repo.write(
    'epicflow.yml',
    configYaml({
      executors: [
        { id: 'a', command: a, priority: 1, slots: 2 },
        {
          id: 'claude',
          command: [],
          harness: 'claude',
          model: 'claude-sonnet-4-5',
          roles: ['coder', 'judge'],
        },
      ],
      gates: ['true'],
    }),
  );
  repo.commit('config');
}

describe('epicflow roster', () => {
  it('lists each executor with harness, model, roles, slots, priority and availability', async () => {
    setUp();
    const r = await roster();
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      [
        'executor  harness  model              roles        slots  priority  status',
        'a         command  -                  coder        0/2    1         available',
        'claude    claude   claude-sonnet-4-5  coder,judge  0/1    100       available',
        '',
      ].join('\n'),
    );
  });

  it('pauses an executor until resumed: a run sees the pause, and halts when no coder is left', async () => {
    setUp();
    expect(await roster('pause', 'a', '--epic', 'epic')).toMatchObject({
      code: 0,
      out: 'a paused for epic epic\n',
    });
    expect((await roster('--epic', 'epic')).out).toContain(
      'a         command  -                  coder        0/2    1         paused by user (until `epicflow roster resume`)',
    );
    const persisted = JSON.parse(readFileSync(join(stateDir(repo), 'roster.json'), 'utf8')) as {
      exclusions: Record<string, { kind: string; reason: string; until: null }>;
    };
    expect(persisted.exclusions.a).toMatchObject({
      kind: 'paused',
      reason: 'paused by user',
      until: null,
    });

    // Pause claude too: no coder is left, so the run halts with each reason.
    expect((await roster('pause', 'claude', '--epic', 'epic')).code).toBe(0);
    const halted = await run(repo, plan);
    expect(halted.code).toBe(1);
    expect(halted.stdout).toContain(
      'stopped launching stories: roster exhausted: a (paused by user; until `epicflow roster resume`), claude (paused by user; until `epicflow roster resume`)',
    );
    expect(record(repo, 's')).toMatchObject({ status: 'waiting' });
    expect(prompts(repo, 'a')).toHaveLength(0);

    // Without --epic, resume applies to every epic that has run here.
    expect(await roster('resume', 'a')).toMatchObject({
      code: 0,
      out: 'a resumed for epic epic\n',
    });
    const done = await run(repo, plan);
    expect(done.code).toBe(0);
    expect(record(repo, 's')).toMatchObject({ status: 'done', executors: ['a'] });
  });

  it('exits 2 for an unknown executor id, listing the known ones', async () => {
    setUp();
    const r = await roster('pause', 'nobody', '--epic', 'epic');
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `error: unknown executor "nobody" in ${join(repo.dir, 'epicflow.yml')}\n  known executors: a, claude\n`,
    );
  });
});

describe('a missing binary', () => {
  it('takes the executor out for the run with the install hint and hands the story to the next', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const b = scriptedCoder(repo, 'b', {
      '*': { '*': { sh: ['echo "$EPICFLOW_STORY" > "src/$EPICFLOW_STORY.txt"'] } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [
          { id: 'gone', command: [], harness: 'aider', model: 'gpt-4o', priority: 1 },
          { id: 'b', command: b, priority: 2 },
        ],
        gates: ['true'],
      }),
    );
    repo.write('src/.keep', '');
    repo.commit('config');
    // A PATH without the aider CLI: node (for the scripted coder) and the system tools only.
    const env = { ...process.env, PATH: `${dirname(process.execPath)}:/usr/bin:/bin` };
    const r = await run(
      repo,
      planMarkdown([
        { id: 'first', owns: ['src/first.txt'] },
        { id: 'second', owns: ['src/second.txt'] },
      ]),
      { concurrency: 1 },
      { env },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\[first\] gone stopped: aider is not installed: .+/);
    expect(r.stdout).toContain('[first] handed over from gone to b');
    expect(record(repo, 'first')).toMatchObject({ status: 'done', executors: ['gone', 'b'] });
    // The next story goes straight to b.
    expect(r.stdout).toContain('[second] started with b');
    expect(record(repo, 'second')).toMatchObject({ status: 'done', executors: ['b'] });
    const persisted = JSON.parse(readFileSync(join(stateDir(repo), 'roster.json'), 'utf8')) as {
      exclusions: Record<string, { kind: string; until: null }>;
    };
    expect(persisted.exclusions.gone).toMatchObject({ kind: 'missing-binary', until: null });
  });
});
