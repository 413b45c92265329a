import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { landCommand, type LandCommandOptions } from '../../src/cli/commands/land.js';
import { main } from '../../src/cli/program.js';
import { renderFailure } from '../../src/cli/context.js';
import {
  configYaml,
  copyRepo,
  git,
  makeRepo,
  planMarkdown,
  prompts,
  reportJson,
  run,
  scriptedCoder,
  showFile,
  stateDir,
  type ExecutorSpec,
  type PlanStory,
  type RunOutput,
  type Script,
  type TestRepo,
} from './support/repo.js';
import { describeNeeding } from '../support/needs.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** 100 input tokens at $10,000 per million: $1.00 a turn. */
const USAGE = 'EPICFLOW_USAGE {"input":100,"output":50,"model":"pricey"}\n';
const PRICES = [
  'prices:',
  '  pricey: { input: 10000, cachedInput: 0, cacheWrite: 0, output: 0 }',
].join('\n');

const STORIES: PlanStory[] = [
  { id: 'a', owns: ['src/a.txt'] },
  { id: 'b', owns: ['src/b.txt'], dependsOn: ['a'] },
];

const DEFAULT_SCRIPT: Script = {
  a: { '*': { write: { 'src/a.txt': 'a from the epic\n' } } },
  b: { '*': { write: { 'src/b.txt': 'b from the epic\n' } } },
};

/** Delivers a two-story epic (`epic/epic`) whose stories all merged, in a repository of its own. */
async function deliver(
  files: Record<string, string>,
  script: Script,
  stories: PlanStory[],
): Promise<TestRepo> {
  const made = makeRepo({ 'README.md': 'readme\n', 'src/a.txt': 'a\n', ...files });
  try {
    const coder = scriptedCoder(made, 'coder', script);
    made.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    made.commit('config');
    const delivered = await run(made, planMarkdown(stories));
    expect(delivered.code).toBe(0);
    return made;
  } catch (e) {
    made.cleanup();
    throw e;
  }
}

/**
 * The epic most tests land, delivered once for the file: what a test checks is the landing,
 * not the run, so each lands in a copy of it (`copyRepo`). The committed `epicflow.yml` names
 * this repository's scripted coder; no landing that uses it reaches a coder.
 */
let shared: Promise<TestRepo> | undefined;
afterAll(async () => (await shared?.catch(() => undefined))?.cleanup());

/**
 * Makes `repo` a delivered two-story epic (`epic/epic`) whose stories all merged: a copy of
 * the file's shared one, or its own run when a test needs other files, coder or stories.
 */
async function deliveredEpic(
  files?: Record<string, string>,
  script?: Script,
  stories?: PlanStory[],
): Promise<void> {
  if (files === undefined && script === undefined && stories === undefined) {
    shared ??= deliver({}, DEFAULT_SCRIPT, STORIES);
    repo = copyRepo(await shared);
    return;
  }
  repo = await deliver(files ?? {}, script ?? DEFAULT_SCRIPT, stories ?? STORIES);
}

/** A config for the landing (outside the repository), with its own land coder and gates. */
function landConfig(opts: {
  script?: Script;
  gates?: string[];
  executors?: ExecutorSpec[];
  extra?: string;
}): string {
  const file = join(repo.tmp, 'land.yml');
  const executors = opts.executors ?? [
    { id: 'lander', command: scriptedCoder(repo, 'lander', opts.script ?? {}) },
  ];
  writeFileSync(
    file,
    configYaml({
      executors,
      gates: opts.gates ?? ['true'],
      ...(opts.extra === undefined ? {} : { extra: opts.extra }),
    }),
  );
  return file;
}

async function land(
  opts: Partial<LandCommandOptions> = {},
  hooks: Parameters<typeof landCommand>[2] = {},
): Promise<Omit<RunOutput, 'waits'>> {
  let stdout = '';
  let stderr = '';
  const io = {
    stdout: (s: string) => (stdout += s),
    stderr: (s: string) => (stderr += s),
    cwd: repo.tmp,
  };
  const code = await landCommand(
    { repo: repo.dir, agentUser: false, sandbox: false, ...opts },
    io,
    hooks,
    // What `main` does with a command's error: the one rendering, the exit code.
  ).catch((e: unknown) => renderFailure(io, e));
  return { code, stdout, stderr };
}

function sha(ref: string): string {
  return git(repo.dir, 'rev-parse', ref);
}

function worktrees(): string {
  return git(repo.dir, 'worktree', 'list', '--porcelain');
}

/** Every branch and worktree with where it points: what a refusal must leave as it was. */
function refsAndTrees(): string {
  return `${git(repo.dir, 'for-each-ref', '--format=%(refname) %(objectname)')}\n${worktrees()}`;
}

function landLog(): { lands: Record<string, unknown>[] } {
  return JSON.parse(readFileSync(join(stateDir(repo), 'land.json'), 'utf8')) as {
    lands: Record<string, unknown>[];
  };
}

/** Parents of a commit, first parent first. */
function parents(ref: string): string[] {
  return git(repo.dir, 'rev-list', '--parents', '-n', '1', ref).split(' ').slice(1);
}

describe('epicflow land: clean', () => {
  it('merges the moved main into the epic, gates the merged tree, then merges the epic into main', async () => {
    await deliveredEpic();
    repo.write('docs/main.txt', 'main moved on\n');
    repo.commit('main: docs');
    const mainBefore = sha('main');
    const epicBefore = sha('epic/epic');
    const log = join(repo.tmp, 'gates.log');
    const config = landConfig({
      gates: [`echo "$(ls docs/main.txt src/b.txt 2>/dev/null | tr '\\n' ' ')" >> ${log}`],
    });

    const result = await land({ config });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('epicflow: landed epic/epic in main');

    // The epic branch: a merge of main (the epic head first), with the trailer.
    const epicHead = sha('epic/epic');
    expect(parents(epicHead)).toEqual([epicBefore, mainBefore]);
    expect(git(repo.dir, 'log', '-1', '--format=%B', epicHead)).toContain('Epicflow-Land: main');
    expect(git(repo.dir, 'log', '-1', '--format=%s', epicHead)).toBe('Merge main into epic/epic');
    // main: a --no-ff merge of the epic.
    const mainHead = sha('main');
    expect(parents(mainHead)).toEqual([mainBefore, epicHead]);
    expect(git(repo.dir, 'log', '-1', '--format=%s', mainHead)).toBe(
      'Merge epic/epic into main: Test epic',
    );
    // The user's checkout follows, and is clean.
    expect(repo.read('src/b.txt')).toBe('b from the epic\n');
    expect(repo.read('docs/main.txt')).toBe('main moved on\n');
    expect(git(repo.dir, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    // The gates ran on the merged tree (the baseline ran on the epic head, without main's file).
    expect(readFileSync(log, 'utf8').split('\n')).toEqual(
      expect.arrayContaining(['src/b.txt ', 'docs/main.txt src/b.txt ']),
    );
    expect(landLog().lands).toEqual([
      expect.objectContaining({
        job: 'land-1',
        into: 'main',
        outcome: 'landed',
        rounds: 0,
        epicHeadBefore: epicBefore,
        epicHeadAfter: epicHead,
        intoHeadBefore: mainBefore,
        intoHeadAfter: mainHead,
      }),
    ]);
    expect(worktrees()).not.toContain('_land');
    // The report shows the landing beside the stories.
    const report = readFileSync(join(stateDir(repo), 'report.md'), 'utf8');
    expect(report).toContain('| Landing `land-1` into `main` | landed |');
    expect(report).toMatch(/\| `b` Story b \| done \|/);
    expect(reportJson(repo)).toMatchObject({
      landings: [{ job: 'land-1', into: 'main', outcome: 'landed', rounds: 0 }],
    });
  });
});

describe('epicflow land: the baseline', () => {
  it('lands when a gate fails on the merged tree only as it already failed on the epic head', async () => {
    await deliveredEpic();
    repo.write('docs/main.txt', 'main moved on\n');
    repo.commit('main: docs');
    const config = landConfig({ gates: ['echo "error: the known flaky check"; exit 1'] });
    const result = await land({ config });
    expect(result.code).toBe(0);
    expect(prompts(repo, 'lander')).toEqual([]);
    expect(showFile(repo, 'main', 'docs/main.txt')).toBe('main moved on');
    expect(landLog().lands[0]).toMatchObject({ outcome: 'landed', rounds: 0, failingGates: [] });
  });
});

describe('epicflow land: conflicts and red gates go to a coder', () => {
  it('resolves a conflict in round 2 after a round that left a marker', async () => {
    await deliveredEpic();
    repo.write('src/a.txt', 'a from main\n');
    repo.commit('main: a');
    const config = landConfig({
      script: {
        'land-1': {
          '1': {
            write: { 'src/a.txt': '<<<<<<< HEAD\na from the epic\na from main\n' },
            stdout: USAGE,
          },
          '2': { write: { 'src/a.txt': 'a from the epic\na from main\n' }, stdout: USAGE },
        },
      },
      extra: PRICES,
    });
    const result = await land({ config });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('[land-1] conflicts in src/a.txt');
    expect(result.stdout).toContain('[land-1] round 1: conflict markers left in src/a.txt');
    expect(result.stdout).toContain('resolved in 2 rounds');
    const seen = prompts(repo, 'lander');
    expect(seen.map((p) => [p.story, p.round])).toEqual([
      ['land-1', '1'],
      ['land-1', '2'],
    ]);
    expect(seen[0]?.prompt).toContain('## Conflicts');
    expect(seen[0]?.prompt).toContain('<<<<<<< HEAD');
    expect(seen[0]?.prompt).toContain('a from main');
    expect(seen[0]?.prompt).toContain('keeping both sides');
    expect(seen[1]?.prompt).toContain('## Conflict markers left');
    expect(seen[1]?.prompt).toContain('### `src/a.txt`');
    // The resolution is on both branches; the epic's merge names who resolved it.
    expect(showFile(repo, 'epic/epic', 'src/a.txt')).toBe('a from the epic\na from main');
    expect(showFile(repo, 'main', 'src/a.txt')).toBe('a from the epic\na from main');
    expect(repo.read('src/a.txt')).toBe('a from the epic\na from main\n');
    const message = git(repo.dir, 'log', '-1', '--format=%B', 'epic/epic');
    expect(message).toContain('Epicflow-Land: main');
    expect(message).toContain('Epicflow-Executor: lander');
    expect(landLog().lands[0]).toMatchObject({
      outcome: 'landed',
      rounds: 2,
      conflicts: ['src/a.txt'],
      executors: ['lander'],
      usage: [
        {
          executor: 'lander',
          model: 'pricey',
          tokens: { input: 200, cachedInput: 0, cacheWrite: 0, output: 100 },
          measured: true,
          costUsd: 2,
          costSource: 'price-table',
        },
      ],
    });
    expect(result.stdout).toContain('coder: 2 rounds by lander; measured 300 tokens, $2.00');
  });

  it('fixes gates the clean merge turned red, within the files the gates name', async () => {
    await deliveredEpic();
    repo.write('src/c.txt', 'c needs b fixed\n');
    repo.commit('main: c');
    const config = landConfig({
      gates: [
        'if [ -f src/c.txt ] && ! grep -q fixed src/b.txt; then echo "error: src/b.txt is not fixed"; exit 1; fi',
      ],
      script: { 'land-1': { '1': { write: { 'src/b.txt': 'b from the epic\nfixed\n' } } } },
    });
    const result = await land({ config });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('[land-1] gates failed on the merged tree');
    const seen = prompts(repo, 'lander');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.prompt).toContain('## The gates failed');
    expect(seen[0]?.prompt).toContain('error: src/b.txt is not fixed');
    expect(seen[0]?.prompt).toMatch(/## Perimeter\n\nChange only these paths:\n\n- `src\/b.txt`\n/);
    expect(showFile(repo, 'main', 'src/b.txt')).toBe('b from the epic\nfixed');
    expect(showFile(repo, 'main', 'src/c.txt')).toBe('c needs b fixed');
    expect(landLog().lands[0]).toMatchObject({ outcome: 'landed', rounds: 1, conflicts: [] });
  });

  it('moves nothing when 3 rounds do not resolve it, and names the paths and the next step', async () => {
    await deliveredEpic();
    repo.write('src/a.txt', 'a from main\n');
    repo.commit('main: a');
    const mainBefore = sha('main');
    const epicBefore = sha('epic/epic');
    const treesBefore = worktrees();
    const config = landConfig({ script: { 'land-1': { '*': { stdout: 'I give up\n' } } } });
    const result = await land({ config });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    expect(prompts(repo, 'lander').map((p) => p.round)).toEqual(['1', '2', '3']);
    expect(sha('main')).toBe(mainBefore);
    expect(sha('epic/epic')).toBe(epicBefore);
    expect(worktrees()).toBe(treesBefore);
    expect(repo.read('src/a.txt')).toBe('a from main\n');
    expect(git(repo.dir, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    expect(result.stdout).toContain(
      'epicflow: not landed: conflict markers left in src/a.txt after 3 rounds',
    );
    expect(result.stdout).toContain('  conflicting paths: src/a.txt');
    expect(result.stdout).toContain(
      'next: resolve src/a.txt on epic/epic yourself (merge main into it), then rerun `epicflow land`',
    );
    expect(landLog().lands[0]).toMatchObject({
      outcome: 'not-landed',
      rounds: 3,
      conflicts: ['src/a.txt'],
    });
    const report = readFileSync(join(stateDir(repo), 'report.md'), 'utf8');
    expect(report).toContain('| Landing `land-1` into `main` | not-landed |');
    expect(report).toContain(
      '**Next:** resolve src/a.txt on epic/epic yourself (merge main into it), then rerun `epicflow land`',
    );
  });

  it('fails at once, moving nothing, when the coder cannot run', async () => {
    await deliveredEpic();
    repo.write('src/a.txt', 'a from main\n');
    repo.commit('main: a');
    const mainBefore = sha('main');
    const epicBefore = sha('epic/epic');
    const config = landConfig({ script: { 'land-1': { '*': { stdout: 'crash\n', exit: 3 } } } });
    const result = await land({ config });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('epicflow: not landed: coder turn failed (lander)');
    expect(prompts(repo, 'lander')).toHaveLength(1);
    expect(landLog().lands[0]).toMatchObject({
      outcome: 'not-landed',
      rounds: 1,
      executors: ['lander'],
    });
    expect(sha('main')).toBe(mainBefore);
    expect(sha('epic/epic')).toBe(epicBefore);
  });
});

describe('epicflow land: the perimeter is enforced on what lands', () => {
  it('puts back a change outside the conflicting paths and lands the rest', async () => {
    await deliveredEpic();
    repo.write('src/a.txt', 'a from main\n');
    repo.commit('main: a');
    const config = landConfig({
      script: {
        'land-1': {
          '1': {
            write: {
              'src/a.txt': 'a from the epic\na from main\n',
              'README.md': 'taken over\n',
              'src/new.txt': 'planted\n',
            },
          },
        },
      },
    });
    const result = await land({ config });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      '[land-1] round 1: restored outside the land perimeter: README.md, src/new.txt',
    );
    for (const ref of ['main', 'epic/epic']) {
      expect(showFile(repo, ref, 'README.md')).toBe('readme');
      expect(showFile(repo, ref, 'src/new.txt')).toBeNull();
      expect(showFile(repo, ref, 'src/a.txt')).toBe('a from the epic\na from main');
    }
    expect(landLog().lands[0]?.notes).toEqual([
      'round 1: restored outside the land perimeter: README.md, src/new.txt',
    ]);
  });

  it('does not let a coder widen its perimeter by making a gate name a path', async () => {
    // The gate runs the conflicting script: the coder's own code names README.md in its output.
    await deliveredEpic(
      { 'checks.sh': 'exit 0\n' },
      {
        a: { '*': { write: { 'src/a.txt': 'a from the epic\n' } } },
        c: { '*': { write: { 'checks.sh': '# epic checks\nexit 0\n' } } },
      },
      [
        { id: 'a', owns: ['src/a.txt'] },
        { id: 'c', owns: ['checks.sh'] },
      ],
    );
    repo.write('checks.sh', '# main checks\nexit 0\n');
    repo.commit('main: checks');
    const config = landConfig({
      gates: ['sh checks.sh'],
      script: {
        'land-1': {
          '1': {
            write: {
              'checks.sh':
                '# epic checks\n# main checks\necho "error: README.md is wrong"; exit 1\n',
            },
          },
          '2': {
            write: { 'checks.sh': '# epic checks\n# main checks\nexit 0\n', 'README.md': 'mine\n' },
          },
        },
      },
    });
    const result = await land({ config });
    expect(result.code).toBe(0);
    const seen = prompts(repo, 'lander');
    expect(seen).toHaveLength(2);
    expect(seen[1]?.prompt).toContain('error: README.md is wrong');
    expect(seen[1]?.prompt).toMatch(/Change only these paths:\n\n- `checks.sh`\n\n/);
    expect(result.stdout).toContain(
      '[land-1] round 2: restored outside the land perimeter: README.md',
    );
    expect(showFile(repo, 'main', 'README.md')).toBe('readme');
    expect(showFile(repo, 'main', 'checks.sh')).toBe('# epic checks\n# main checks\nexit 0');
  });
});

describe('epicflow land: refusals exit 2 and change nothing', () => {
  it('refuses while a story is not merged, naming it', async () => {
    repo = makeRepo({ 'README.md': 'readme\n' });
    const coder = scriptedCoder(repo, 'coder', {
      a: { '*': { write: { 'src/a.txt': 'a\n' } } },
      b: { '*': { exit: 1, stdout: 'no\n' } },
    });
    repo.write(
      'epicflow.yml',
      // b fails at once: no retries of its crash (test/engine/transient.test.ts's).
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['true'],
        extra: 'retries: { transient: 0 }',
      }),
    );
    repo.commit('config');
    expect((await run(repo, planMarkdown(STORIES))).code).toBe(1);
    const mainBefore = sha('main');
    const epicBefore = sha('epic/epic');
    const before = refsAndTrees();
    const result = await land();
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'error: epic epic is not finished: 1 story is not merged\n' +
        '  b: failed\n' +
        '  finish them first (rerun `epicflow run` with the epic’s plan), then land\n',
    );
    expect(sha('main')).toBe(mainBefore);
    expect(sha('epic/epic')).toBe(epicBefore);
    expect(refsAndTrees()).toBe(before);
    expect(existsSync(join(stateDir(repo), 'land.json'))).toBe(false);
  });

  it('refuses a checkout of --into with uncommitted changes', async () => {
    await deliveredEpic();
    repo.write('README.md', 'my edit\n');
    const mainBefore = sha('main');
    const epicBefore = sha('epic/epic');
    const before = refsAndTrees();
    const result = await land({ into: 'main' });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `error: the checkout of main in ${repo.dir} has uncommitted changes\n` +
        '  README.md\n' +
        '  landing merges the epic into main there: commit or stash them first\n',
    );
    expect(sha('main')).toBe(mainBefore);
    expect(sha('epic/epic')).toBe(epicBefore);
    expect(refsAndTrees()).toBe(before);
    expect(repo.read('README.md')).toBe('my edit\n');
  });

  it('refuses an unknown epic, naming the known ones (through the CLI)', async () => {
    await deliveredEpic();
    const before = refsAndTrees();
    let stderr = '';
    const code = await main(['land', '--epic', 'nope', '--repo', repo.dir], {
      stdout: () => undefined,
      stderr: (s) => (stderr += s),
      readStdin: async () => '',
      cwd: repo.tmp,
    });
    expect(code).toBe(2);
    expect(stderr).toBe('error: no epic "nope" has run in this repository\n  known epics: epic\n');
    expect(refsAndTrees()).toBe(before);
  });

  it('asks for --epic when several epics ran, for --into on a detached HEAD, and for a branch that exists', async () => {
    await deliveredEpic();
    // Its own coder: the committed config's is the shared epic's, outside this copy.
    const other = join(repo.tmp, 'other.yml');
    writeFileSync(
      other,
      configYaml({
        executors: [
          { id: 'bot', command: scriptedCoder(repo, 'other', { a: DEFAULT_SCRIPT['a'] ?? {} }) },
        ],
        gates: ['true'],
      }),
    );
    expect(
      (
        await run(repo, planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]), {
          epic: 'other',
          config: other,
        })
      ).code,
    ).toBe(0);
    const ran = refsAndTrees();
    const several = await land();
    expect(several.code).toBe(2);
    expect(several.stderr).toBe(
      'error: 2 epics ran in this repository\n  pick one with --epic ID: epic, other\n',
    );
    expect(refsAndTrees()).toBe(ran);
    git(repo.dir, 'checkout', '-q', '--detach', 'main');
    const before = refsAndTrees();
    const detached = await land({ epic: 'epic' });
    expect(detached.code).toBe(2);
    expect(detached.stderr).toBe(
      `error: HEAD of ${repo.dir} is detached\n  name the branch to land in: --into BRANCH\n`,
    );
    for (const into of ['nope', '--force', 'a\nb']) {
      const missing = await land({ epic: 'epic', into });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toBe(
        `error: no branch ${JSON.stringify(into)} in ${repo.dir}\n  --into names a local branch\n`,
      );
    }
    const itself = await land({ epic: 'epic', into: 'epic/epic' });
    expect(itself.code).toBe(2);
    expect(itself.stderr).toBe('error: --into epic/epic is the epic branch itself\n');
    expect(refsAndTrees()).toBe(before);
  });
});

describe('epicflow land: the branch landed in', () => {
  it('lands in a branch that is not checked out by moving its ref, leaving the checkout alone', async () => {
    await deliveredEpic();
    git(repo.dir, 'branch', 'release', 'main~1');
    const releaseBefore = sha('release');
    const mainBefore = sha('main');
    const result = await land({ into: 'release' });
    expect(result.code).toBe(0);
    expect(parents('release')).toEqual([releaseBefore, sha('epic/epic')]);
    expect(showFile(repo, 'release', 'src/b.txt')).toBe('b from the epic');
    expect(sha('main')).toBe(mainBefore);
    expect(existsSync(join(repo.dir, 'src/b.txt'))).toBe(false);
  });

  it('puts the epic branch back when main moves while landing', async () => {
    await deliveredEpic();
    repo.write('docs/main.txt', 'main moved on\n');
    repo.commit('main: docs');
    const epicBefore = sha('epic/epic');
    const result = await land(
      {},
      {
        beforeInto: () => {
          repo.write('docs/late.txt', 'late\n');
          repo.commit('main: late');
        },
      },
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('epicflow: not landed: main moved meanwhile');
    expect(result.stdout).toContain('next: rerun `epicflow land`');
    expect(sha('epic/epic')).toBe(epicBefore);
    expect(git(repo.dir, 'log', '-1', '--format=%s', 'main')).toBe('main: late');
  });

  it('says so and moves nothing when main already holds the epic', async () => {
    await deliveredEpic();
    expect((await land()).code).toBe(0);
    const mainAfter = sha('main');
    const epicAfter = sha('epic/epic');
    const landed = refsAndTrees();
    const again = await land();
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('main already contains epic/epic: nothing moved');
    expect(sha('main')).toBe(mainAfter);
    expect(sha('epic/epic')).toBe(epicAfter);
    expect(refsAndTrees()).toBe(landed);
    expect(landLog().lands.map((l) => l.job)).toEqual(['land-1', 'land-2']);
  });
});

describe('epicflow land: a hostile land coder', () => {
  it('lands the checked tree as a merge of the two heads, whatever it committed or checked out', async () => {
    await deliveredEpic();
    repo.write('src/a.txt', 'a from main\n');
    repo.commit('main: a');
    const mainBefore = sha('main');
    const epicBefore = sha('epic/epic');
    const config = landConfig({
      script: {
        'land-1': {
          '1': {
            write: { 'src/a.txt': 'a from the epic\na from main\n' },
            sh: [
              'git add -A',
              'git -c user.name=x -c user.email=x@x commit -q --no-verify -m sneaky',
              'git checkout -q -B sneaky',
              'git config --local alias.st "!touch PWNED"',
            ],
          },
        },
      },
    });
    const configBefore = readFileSync(join(repo.dir, '.git', 'config'), 'utf8');
    const result = await land({ config });
    expect(result.code).toBe(0);
    const epicHead = sha('epic/epic');
    expect(parents(epicHead)).toEqual([epicBefore, mainBefore]);
    expect(parents('main')).toEqual([mainBefore, epicHead]);
    expect(git(repo.dir, 'log', '--format=%s', 'main')).not.toContain('sneaky');
    expect(showFile(repo, 'main', 'src/a.txt')).toBe('a from the epic\na from main');
    // git's configuration is put back byte for byte, and that is noted.
    expect(readFileSync(join(repo.dir, '.git', 'config'), 'utf8')).toBe(configBefore);
    expect(landLog().lands[0]?.notes).toContain(
      "restored .git/config: git's configuration was changed during round 1 (lander landing)",
    );
  });
});

describe('epicflow land --help', () => {
  it('lists its options and exit codes, and the command list names it', async () => {
    const out = async (argv: string[]): Promise<{ code: number; stdout: string }> => {
      let stdout = '';
      const code = await main(argv, {
        stdout: (s) => (stdout += s),
        stderr: () => undefined,
        readStdin: async () => '',
        cwd: process.cwd(),
      });
      return { code, stdout };
    };
    const help = await out(['land', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: epicflow land [options]');
    for (const option of [
      '--epic <id>',
      '--into <branch>',
      '--repo <dir>',
      '--config <file>',
      '--agent-user <user>',
    ]) {
      expect(help.stdout).toContain(option);
    }
    expect(help.stdout).toContain(
      [
        'Exit codes:',
        '  0  landed',
        '  1  not landed: the epic branch and the branch are where they were',
        '  2  usage error, or a story of the plan is not done',
      ].join('\n'),
    );
    expect((await out(['--help'])).stdout).toMatch(/\n {2}land \[options\] /);
  });
});

describeNeeding(['root'], 'epicflow land --agent-user', () => {
  it('runs the land coder and the gates as that user; the merges are epicflow’s', async () => {
    await deliveredEpic();
    repo.write('src/a.txt', 'a from main\n');
    repo.commit('main: a');
    const config = landConfig({
      gates: ['test "$(id -un)" != root'],
      // Not the scripted coder: it logs its prompts to a folder that user may not write.
      executors: [
        {
          id: 'lander',
          command: [
            'sh',
            '-c',
            'printf "a from the epic\\na from main\\n" > src/a.txt; id -un >> src/a.txt',
          ],
        },
      ],
    });
    const result = await land({ config, agentUser: 'epicflow-agent' });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(showFile(repo, 'main', 'src/a.txt')).toMatch(
      /^a from the epic\na from main\nepicflow-agent(-\d+)?$/,
    );
    expect(git(repo.dir, 'log', '-2', '--format=%an', 'main')).not.toMatch(/agent/);
    expect(worktrees()).not.toContain('_land');
  });
});
