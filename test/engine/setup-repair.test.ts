/**
 * Setup repair (`setupRepair: true`), through `epicflow run`: a setup that fails in the
 * story's tree gets one coder turn with its output, then runs once more; the story's own
 * turns come after. Without the option, or when the repair does not hold, the story fails
 * as before, saying so.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  configYaml,
  git,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  reportJson,
  run,
  scriptedCoder,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

// It leaves a file behind, passing or not: never the story's.
const SETUP =
  "echo ran > setup-ran.txt; test -f tools/ready || { echo 'tools/ready is missing'; exit 1; }";
const plan = planMarkdown([{ id: 'a', owns: ['tools/ready', 'src/a.txt'] }]);

/**
 * Story a's first turn fixes setup when `fixes`; with `plants`, it also leaves a file setup
 * would seem to have made (the repository has a lockfile: setup is cached), which the gate
 * must never see.
 */
function setUp(repair: boolean, fixes: boolean, plants = false): void {
  repo = makeRepo({
    'README.md': 'x\n',
    ...(plants ? { 'package-lock.json': '{"lock":1}\n', '.gitignore': 'deps/\n' } : {}),
  });
  const fix = {
    'tools/ready': 'yes\n',
    ...(plants ? { 'deps/planted.txt': 'by the coder\n' } : {}),
  };
  const coder = scriptedCoder(repo, 'coder', {
    a: {
      '1': fixes ? { write: fix } : { stdout: 'I looked around.\n' },
      '*': { write: { 'src/a.txt': 'a\n' } },
    },
  });
  repo.write(
    'epicflow.yml',
    configYaml({
      executors: [{ id: 'bot', command: coder }],
      setup: SETUP,
      gates: [plants ? 'test ! -e deps/planted.txt' : 'true'],
      ...(repair ? { extra: 'setupRepair: true' } : {}),
    }),
  );
  repo.commit('config');
}

describe('setup repair', () => {
  it('one coder turn repairs a failing setup, setup passes, then the story is built and merged', async () => {
    setUp(true, true);
    const r = await run(repo, plan);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toContain(
      '[a] setup failed: tools/ready is missing; a coder turn to repair it\n',
    );
    expect(r.stdout).toContain('[a] setup passed after the repair turn\n');
    const [repairPrompt, storyPrompt] = prompts(repo, 'coder').map((p) => p.prompt);
    expect(repairPrompt).toContain('## Setup fails');
    expect(repairPrompt).toContain(`The setup command \`${SETUP}\` fails in your working tree`);
    expect(repairPrompt).toContain('tools/ready is missing');
    expect(storyPrompt).not.toContain('## Setup fails');
    expect(git(repo.dir, 'show', 'epic/epic:tools/ready')).toBe('yes');
    expect(git(repo.dir, 'show', 'epic/epic:src/a.txt')).toBe('a');
    expect(git(repo.dir, 'ls-tree', '--name-only', 'epic/epic')).not.toContain('setup-ran.txt');
    expect(r.stdout).not.toContain('outside its perimeter');
  });

  it('a repair that does not hold: the story fails saying so, after one turn', async () => {
    setUp(true, false);
    const r = await run(repo, plan);
    expect(r.code).toBe(1);
    expect(prompts(repo, 'coder')).toHaveLength(1);
    expect(String(record(repo, 'a')['reason'])).toMatch(
      /^setup failed after a repair turn: tools\/ready is missing \(log: /,
    );
  });

  it('keeps nothing of the tree the repair turn worked in: the checks set up on their own, without what it left', async () => {
    setUp(true, true, true);
    const r = await run(repo, plan);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toContain('[a] setup passed after the repair turn\n');
    expect(r.stdout).not.toContain('[a] setup came from the cache');
    expect(git(repo.dir, 'show', 'epic/epic:src/a.txt')).toBe('a');
  });

  it('without setupRepair a failing setup fails the story at once, as before', async () => {
    setUp(false, true);
    const r = await run(repo, plan);
    expect(r.code).toBe(1);
    expect(prompts(repo, 'coder')).toHaveLength(0);
    expect(String(record(repo, 'a')['reason'])).toMatch(/^setup failed: tools\/ready is missing/);
  });
});

describe("a package's setup", () => {
  it('that fails is named with its package and folder in the failure and the report', async () => {
    repo = makeRepo({ 'README.md': 'x\n', 'tools/kit/README.md': 'kit\n' });
    const coder = scriptedCoder(repo, 'coder', { a: { '*': { write: { 'src/a.txt': 'a\n' } } } });
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        setup: 'true',
        gates: ['true'],
        extra: [
          'packages:',
          '  - path: tools/kit',
          '    setup: ls deps.lock',
          '    gates: ["true"]',
        ].join('\n'),
      }),
    );
    repo.commit('config');
    const r = await run(repo, planMarkdown([{ id: 'a', owns: ['tools/kit/x.txt'] }]));
    expect(r.code).toBe(1);
    const reason =
      "setup of package tools/kit failed (ls deps.lock, in tools/kit): ls: cannot access 'deps.lock'";
    expect(String(record(repo, 'a')['reason'])).toMatch(/ \(log: .*setup\.log\)$/);
    expect(String(record(repo, 'a')['reason'])).toContain(reason);
    expect(reportJson(repo).stories[0]?.reason).toContain(reason);
  });
});
