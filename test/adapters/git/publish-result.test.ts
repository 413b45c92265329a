/**
 * The publish side of a story, with real git: a work repository writes a result (record and
 * bundle) as a work job would; a bare repository, holding the epic branch fetched from a
 * bare "GitHub", reads it, checks it from the objects, merges without a work tree and pushes
 * with a lease. Every hostile or broken result is refused with its reason, nothing moved.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Git } from '../../../src/adapters/git/index.js';
import { PublishGit, writeResultBundle } from '../../../src/adapters/git/publish-git.js';
import { RemoteGit } from '../../../src/adapters/git/remote-git.js';
import { isEpicflowError } from '../../../src/core/errors.js';
import type { Story, StoryRecord } from '../../../src/core/model.js';
import {
  formatResultRecord,
  isResultRefusal,
  RESULT_FILES,
  type RefusalReason,
  type ResultRecord,
} from '../../../src/core/publish/result.js';
import {
  publishResult,
  type PublishInput,
  type PublishOutcome,
} from '../../../src/jobs/github/publish-result.js';
import { writeWorkResult } from '../../../src/jobs/github/work-result.js';
import { fixtureIn, IDENTITY, type Fixture } from './repo-fixture.js';

const EPIC = '7';
const BRANCH = 'epic/7';
const SECRET = 'super-secret-model-key-value-123';

const STORY: Story = {
  id: 's1',
  title: 'Add the feature',
  description: '',
  owns: ['src', 'test/new.test.ts'],
  reads: [],
  dependsOn: [],
  provides: [],
  acceptance: [],
  testsChange: false,
};

interface World {
  readonly root: string;
  readonly work: Fixture;
  /** GitHub's stand-in. */
  readonly remote: Fixture;
  /** The publish job's bare repository. */
  readonly publish: Fixture;
  readonly base: string;
}

let world: World;

function bare(dir: string): Fixture {
  mkdirSync(dir, { recursive: true });
  const f = fixtureIn(dir);
  f.git('init', '-q', '--bare');
  return f;
}

/**
 * The three repositories, made once (eight git processes) and copied for each test: a
 * test's pushes, fetches and checkouts stay in its own copy.
 */
let template: string;
let templateBase: string;

beforeAll(() => {
  template = realpathSync(mkdtempSync(join(tmpdir(), 'epicflow-publish-template-')));
  const work = fixtureIn(join(template, 'work'));
  mkdirSync(work.dir);
  work.git('init', '-q', '-b', 'main');
  work.write('README.md', 'hello\n');
  work.write('src/a.ts', 'export const a = 1;\n');
  work.write('test/a.test.ts', "it('a', () => expect(1).toBe(1));\n");
  work.write('.github/workflows/ci.yml', 'on: push\n');
  templateBase = work.commitAll('initial');
  const remote = bare(join(template, 'origin.git'));
  const publish = bare(join(template, 'publish.git'));
  work.git('push', '-q', remote.dir, `${templateBase}:refs/heads/${BRANCH}`);
  publish.git('fetch', '-q', remote.dir, `refs/heads/${BRANCH}:refs/heads/${BRANCH}`);
});

afterAll(() => {
  rmSync(template, { recursive: true, force: true });
});

beforeEach(() => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'epicflow-publish-')));
  cpSync(template, root, { recursive: true, verbatimSymlinks: true });
  world = {
    root,
    work: fixtureIn(join(root, 'work')),
    remote: fixtureIn(join(root, 'origin.git')),
    publish: fixtureIn(join(root, 'publish.git')),
    base: templateBase,
  };
});

afterEach(() => {
  rmSync(world.root, { recursive: true, force: true });
});

/** A story commit on top of the base in the work repository, made with plain git. */
function storyCommit(change: (w: Fixture) => void, message = 'story work'): string {
  const { work, base } = world;
  work.git('checkout', '-q', '-B', 'story', base);
  change(work);
  return work.commitAll(message);
}

function storyRecord(commit: string, status: StoryRecord['status'] = 'done'): StoryRecord {
  return {
    version: 1,
    epic: EPIC,
    story: STORY.id,
    planHash: 'h',
    status,
    branch: `epic/${EPIC}/${STORY.id}`,
    attempt: 1,
    executors: ['codex'],
    usage: [],
    notes: [],
    storyCommit: commit,
    timings: {},
  };
}

/** What a work job leaves: the record and the bundle, in a folder of their own. */
async function writeResult(
  commit: string,
  options: {
    gated?: boolean;
    /** Where the gated merge starts from (the base unless set). */
    gatedOn?: string;
    edit?: (r: ResultRecord) => ResultRecord;
    bundleBase?: string;
  } = {},
): Promise<string> {
  const { work, base } = world;
  const artifact = mkdtempSync(join(world.root, 'artifact-'));
  let gated: string | null = null;
  if (options.gated === true) {
    work.git('checkout', '-q', '--detach', options.gatedOn ?? base);
    work.git('merge', '-q', '--no-ff', '-m', 'gated merge', commit);
    gated = work.git('rev-parse', 'HEAD').trim();
  }
  const result: ResultRecord = {
    version: 1,
    epic: EPIC,
    story: STORY.id,
    attempt: 1,
    base,
    epicHead: base,
    storyCommit: commit,
    gated,
    gates: [{ command: 'npm test', ok: true, timedOut: false, where: 'story' }],
    record: storyRecord(commit),
  };
  const repo = await Git.open(work.dir, IDENTITY);
  if (options.bundleBase === undefined) {
    // As the work job ends: the result and its bundle, in the folder it uploads.
    const written = await writeWorkResult(repo, artifact, result);
    expect(written.map((f) => f.slice(artifact.length + 1))).toEqual([
      RESULT_FILES.bundle,
      RESULT_FILES.record,
    ]);
  } else {
    await writeResultBundle(repo, join(artifact, RESULT_FILES.bundle), {
      ...result,
      base: options.bundleBase,
      epicHead: options.bundleBase,
    });
  }
  if (options.edit !== undefined) {
    writeFileSync(join(artifact, RESULT_FILES.record), formatResultRecord(options.edit(result)));
  } else if (options.bundleBase !== undefined) {
    writeFileSync(join(artifact, RESULT_FILES.record), formatResultRecord(result));
  }
  return artifact;
}

async function publish(
  artifact: string,
  extra: Partial<PublishInput> = {},
): Promise<PublishOutcome> {
  const { publish: p, remote, base } = world;
  const git = await PublishGit.open(p.dir, IDENTITY);
  const github = new RemoteGit({
    cwd: p.dir,
    serverUrl: `file://${world.root}`,
    repository: 'origin',
    token: 'not-used-by-a-file-remote',
    identity: IDENTITY,
  });
  expect(github.url).toBe(`file://${remote.dir}`);
  return publishResult(
    { git, push: (sha, branch, expected) => github.push(sha, branch, expected) },
    {
      artifact,
      epic: EPIC,
      story: STORY,
      attempt: 1,
      epicHead: base,
      configPaths: ['.epicflow.yml'],
      allowWorkflowChanges: false,
      secrets: [SECRET],
      ...extra,
    },
  );
}

function refsOf(f: Fixture): string {
  return f.git('for-each-ref', '--format=%(refname) %(objectname)');
}

/** Publishing `artifact` is refused for `reason`; no ref moved here or on GitHub. */
async function expectRefused(
  artifact: string,
  reason: RefusalReason,
  extra: Partial<PublishInput> = {},
): Promise<string> {
  const before = [refsOf(world.publish), refsOf(world.remote)];
  const error = await publish(artifact, extra).then(
    () => null,
    (e: unknown) => e,
  );
  expect(isEpicflowError(error, 'result')).toBe(true);
  expect(isResultRefusal(error) ? error.reason : error).toBe(reason);
  expect([refsOf(world.publish), refsOf(world.remote)]).toEqual(before);
  const e = error as Error & { details: readonly string[] };
  return [e.message, ...e.details].join('\n');
}

describe('publishing a work job result', () => {
  it('merges a good result without a work tree and pushes it with a lease', async () => {
    const commit = storyCommit((w) => {
      w.write('src/b.ts', 'export const b = 2;\n');
      w.write('test/new.test.ts', "it('b', () => expect(2).toBe(2));\n");
    });
    const artifact = await writeResult(commit, { gated: true });
    const out = await publish(artifact);
    expect(out.kind).toBe('merged');
    if (out.kind !== 'merged') return;
    expect(out.gatedTree).toBe(true);
    expect(out.record.mergeCommit).toBe(out.merge);
    const { remote, publish: p, base } = world;
    // GitHub's epic branch is the merge: epic head first, the story commit second.
    expect(remote.git('rev-parse', `refs/heads/${BRANCH}`).trim()).toBe(out.merge);
    expect(remote.git('rev-list', '--parents', '-n', '1', out.merge).trim()).toBe(
      `${out.merge} ${base} ${commit}`,
    );
    expect(remote.git('show', `${out.merge}:src/b.ts`)).toBe('export const b = 2;\n');
    expect(remote.git('log', '-1', '--format=%B', out.merge)).toContain(
      'Merge story s1: Add the feature\n\nEpicflow-Story: s1\nEpicflow-Executor: codex',
    );
    // The local branch followed; the quarantine is gone.
    expect(p.git('rev-parse', `refs/heads/${BRANCH}`).trim()).toBe(out.merge);
    expect(refsOf(p)).not.toContain('epicflow-quarantine');
  });

  it('runs object commands only: no status, add, checkout or work tree', async () => {
    const commit = storyCommit((w) => w.write('src/b.ts', 'b\n'));
    const artifact = await writeResult(commit);
    // A `git` first on PATH that writes down every command epicflow runs, then runs git.
    const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const bin = join(world.root, 'bin');
    const log = join(world.root, 'git-commands.log');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'git'),
      `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done >> '${log}'\nprintf '%s\\n' '--end--' >> '${log}'\nexec '${real}' "$@"\n`,
    );
    chmodSync(join(bin, 'git'), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path ?? ''}`;
    let out: PublishOutcome;
    try {
      out = await publish(artifact);
    } finally {
      process.env.PATH = path;
    }
    expect(out.kind).toBe('merged');
    // Each command: its arguments, one a line, then `--end--`.
    const commands = readFileSync(log, 'utf8')
      .split('--end--\n')
      .filter((c) => c !== '')
      .map((c) => c.split('\n').slice(0, -1));
    // The subcommand: the first argument after the `-c` options and `--git-dir`.
    const subcommands = commands.map((args) => {
      let i = 0;
      while (i < args.length && (args[i] === '-c' || args[i]?.startsWith('--') === true)) {
        i += args[i] === '-c' ? 2 : 1;
      }
      return args[i];
    });
    expect(subcommands).toContain('merge-tree');
    expect(subcommands).toContain('commit-tree');
    expect(subcommands).toContain('push');
    for (const forbidden of ['status', 'add', 'checkout', 'commit', 'merge', 'reset', 'worktree']) {
      expect(subcommands).not.toContain(forbidden);
    }
    expect(commands.flat().filter((a) => a.startsWith('--work-tree'))).toEqual([]);
    expect(commands.length).toBe(subcommands.length);
  });

  it('refuses a repository with a work tree', async () => {
    const error = await PublishGit.open(world.work.dir, IDENTITY).catch((e: unknown) => e);
    expect(isEpicflowError(error, 'git')).toBe(true);
    expect((error as Error).message).toContain('not a bare git repository');
  });

  it('returns a conflict for a merge revision, moving nothing', async () => {
    const commit = storyCommit((w) => w.write('src/a.ts', 'export const a = 2;\n'));
    const artifact = await writeResult(commit);
    // Another story merged a change to the same line meanwhile.
    const { work, remote, publish: p, base } = world;
    work.git('checkout', '-q', '-B', 'other', base);
    work.write('src/a.ts', 'export const a = 3;\n');
    const other = work.commitAll('other story');
    work.git('push', '-q', remote.dir, `${other}:refs/heads/${BRANCH}`);
    p.git('fetch', '-q', remote.dir, `+refs/heads/${BRANCH}:refs/heads/${BRANCH}`);
    const before = [refsOf(p), refsOf(remote)];
    const out = await publish(artifact, { epicHead: other });
    expect(out).toMatchObject({
      kind: 'conflict',
      conflicts: ['src/a.ts'],
      reason: `merge conflict with ${BRANCH}: src/a.ts`,
    });
    expect([refsOf(p), refsOf(remote)]).toEqual(before);
  });

  it('says a push GitHub refused as stale when the epic branch moved', async () => {
    const commit = storyCommit((w) => w.write('src/b.ts', 'b\n'));
    const artifact = await writeResult(commit);
    const { work, remote, base } = world;
    work.git('checkout', '-q', '-B', 'other', base);
    work.write('README.md', 'moved\n');
    const other = work.commitAll('moved on GitHub');
    work.git('push', '-q', remote.dir, `${other}:refs/heads/${BRANCH}`);
    const out = await publish(artifact);
    expect(out.kind).toBe('push-refused');
    if (out.kind === 'push-refused') expect(out.refused.reason).toBe('stale');
    expect(remote.git('rev-parse', `refs/heads/${BRANCH}`).trim()).toBe(other);
  });

  it('says when the merged tree is not the one the gates ran on (the epic moved)', async () => {
    const commit = storyCommit((w) => w.write('src/b.ts', 'b\n'));
    const artifact = await writeResult(commit, { gated: true });
    const { work, remote, publish: p, base } = world;
    work.git('checkout', '-q', '-B', 'other', base);
    work.write('README.md', 'another story\n');
    const other = work.commitAll('another story');
    work.git('push', '-q', remote.dir, `${other}:refs/heads/${BRANCH}`);
    p.git('fetch', '-q', remote.dir, `+refs/heads/${BRANCH}:refs/heads/${BRANCH}`);
    const out = await publish(artifact, { epicHead: other });
    expect(out).toMatchObject({ kind: 'merged', gatedTree: false });
    expect(remote.git('show', `refs/heads/${BRANCH}:README.md`)).toBe('another story\n');
    expect(remote.git('show', `refs/heads/${BRANCH}:src/b.ts`)).toBe('b\n');
  });

  it('takes a story without commits of its own as a record alone', async () => {
    const { work, base } = world;
    const artifact = join(world.root, 'artifact-empty');
    const { storyCommit: _none, ...record } = storyRecord(base, 'failed');
    const written = await writeWorkResult(await Git.open(work.dir, IDENTITY), artifact, {
      version: 1,
      epic: EPIC,
      story: STORY.id,
      attempt: 1,
      base,
      epicHead: base,
      storyCommit: base,
      gated: null,
      gates: [],
      record: { ...record, reason: 'no changes' },
    });
    expect(written).toEqual([join(artifact, RESULT_FILES.record)]);
    const before = refsOf(world.remote);
    expect((await publish(artifact)).kind).toBe('not-merged');
    expect(refsOf(world.remote)).toBe(before);
  });

  it('merges nothing for a story that did not pass', async () => {
    const commit = storyCommit((w) => w.write('src/b.ts', 'b\n'));
    const artifact = await writeResult(commit, {
      edit: (r) => ({ ...r, record: { ...storyRecord(commit, 'failed'), reason: 'gates' } }),
    });
    const before = refsOf(world.remote);
    expect((await publish(artifact)).kind).toBe('not-merged');
    expect(refsOf(world.remote)).toBe(before);
  });
});

describe('refusing a result', () => {
  it('without an artifact', async () => {
    const empty = mkdtempSync(join(world.root, 'artifact-'));
    expect(await expectRefused(empty, 'missing')).toContain('result record is missing');
    const commit = storyCommit((w) => w.write('src/b.ts', 'b\n'));
    const artifact = await writeResult(commit);
    rmSync(join(artifact, RESULT_FILES.bundle));
    expect(await expectRefused(artifact, 'missing')).toContain('result bundle is missing');
  });

  it('over the size limit', async () => {
    const commit = storyCommit((w) => w.write('src/big.bin', randomBytes(50_000).toString('hex')));
    const artifact = await writeResult(commit);
    expect(await expectRefused(artifact, 'too-large', { maxBundleBytes: 1000 })).toContain(
      'more than the 1000 allowed',
    );
    // A record of gigabytes is never read into memory either.
    writeFileSync(join(artifact, RESULT_FILES.record), ' '.repeat(5 * 1024 * 1024));
    expect(await expectRefused(artifact, 'too-large')).toContain('the result record is');
  });

  it('bringing more commits than allowed', async () => {
    storyCommit((w) => w.write('src/b.ts', 'b\n'));
    world.work.write('src/c.ts', 'c\n');
    const commit = world.work.commitAll('second');
    const artifact = await writeResult(commit);
    expect(await expectRefused(artifact, 'too-large', { maxCommits: 1 })).toContain(
      'the result brings 2 commits, more than the 1 allowed',
    );
  });

  it('with a malformed record, naming the field', async () => {
    const commit = storyCommit((w) => w.write('src/b.ts', 'b\n'));
    const artifact = await writeResult(commit, {
      edit: (r) => ({ ...r, storyCommit: 'HEAD' }),
    });
    expect(await expectRefused(artifact, 'malformed')).toContain(
      'storyCommit: expected a full commit id',
    );
    writeFileSync(join(artifact, RESULT_FILES.record), '{"version": 1');
    expect(await expectRefused(artifact, 'malformed')).toContain('is not JSON');
  });

  it('of another story', async () => {
    const commit = storyCommit((w) => w.write('src/b.ts', 'b\n'));
    const artifact = await writeResult(commit, { edit: (r) => ({ ...r, story: 's2' }) });
    expect(await expectRefused(artifact, 'malformed')).toContain('field story is "s2"');
  });

  it('that is not a bundle', async () => {
    const commit = storyCommit((w) => w.write('src/b.ts', 'b\n'));
    const artifact = await writeResult(commit);
    writeFileSync(join(artifact, RESULT_FILES.bundle), 'not a bundle\n');
    await expectRefused(artifact, 'malformed');
  });

  it('whose record names a commit the bundle lacks', async () => {
    const commit = storyCommit((w) => w.write('src/b.ts', 'b\n'));
    const artifact = await writeResult(commit);
    // A second commit the bundle never saw: the record names it.
    world.work.write('src/c.ts', 'c\n');
    const later = world.work.commitAll('later');
    const text = readFileSync(join(artifact, RESULT_FILES.record), 'utf8');
    writeFileSync(join(artifact, RESULT_FILES.record), text.split(commit).join(later));
    expect(await expectRefused(artifact, 'missing-objects')).toContain(
      `storyCommit ${later} is not in the result bundle`,
    );
  });

  it('whose gated merge is not of the story commit into the epic head', async () => {
    const { work, base } = world;
    work.git('checkout', '-q', '-B', 'side', base);
    work.write('src/side.ts', 'side\n');
    const side = work.commitAll('a side commit');
    const commit = storyCommit((w) => w.write('src/b.ts', 'b\n'));
    const artifact = await writeResult(commit, { gated: true, gatedOn: side });
    expect(await expectRefused(artifact, 'malformed')).toContain(
      'is not the merge of storyCommit into epicHead',
    );
  });

  it('with extra refs in its bundle', async () => {
    const commit = storyCommit((w) => w.write('src/b.ts', 'b\n'));
    const artifact = await writeResult(commit);
    const { work, base } = world;
    work.git('update-ref', 'refs/epicflow-result/story', commit);
    work.git(
      'bundle',
      'create',
      '-q',
      join(artifact, RESULT_FILES.bundle),
      'refs/epicflow-result/story',
      'refs/heads/story',
      `^${base}`,
    );
    expect(await expectRefused(artifact, 'refs')).toContain('unexpected ref: refs/heads/story');
  });

  it('whose commit does not descend from the epic base', async () => {
    // A history of its own: no commit of the epic branch under it.
    const { work, base } = world;
    work.git('checkout', '-q', '--orphan', 'alien');
    work.write('src/b.ts', 'b\n');
    const alien = work.commitAll('unrelated');
    const artifact = mkdtempSync(join(world.root, 'artifact-'));
    work.git('update-ref', 'refs/epicflow-result/story', alien);
    work.git(
      'bundle',
      'create',
      '-q',
      join(artifact, RESULT_FILES.bundle),
      'refs/epicflow-result/story',
    );
    const result: ResultRecord = {
      version: 1,
      epic: EPIC,
      story: STORY.id,
      attempt: 1,
      base,
      epicHead: base,
      storyCommit: alien,
      gated: null,
      gates: [],
      record: storyRecord(alien),
    };
    writeFileSync(join(artifact, RESULT_FILES.record), formatResultRecord(result));
    expect(await expectRefused(artifact, 'not-descended')).toContain(
      `does not descend from the epic base ${base}`,
    );
  });

  it('built on commits the epic branch does not have', async () => {
    const { work, base } = world;
    work.git('checkout', '-q', '-B', 'elsewhere', base);
    work.write('README.md', 'never on the epic\n');
    const elsewhere = work.commitAll('not on the epic');
    const commit = storyCommit((w) => {
      w.git('reset', '-q', '--hard', elsewhere);
      w.write('src/b.ts', 'b\n');
    });
    const artifact = await writeResult(commit, { bundleBase: elsewhere });
    await expectRefused(artifact, 'not-descended');
  });

  it('with a symbolic link chain leaving the repository', async () => {
    const commit = storyCommit((w) => {
      mkdirSync(join(w.dir, 'src', 'deep'), { recursive: true });
      symlinkSync('..', join(w.dir, 'src', 'up'));
      symlinkSync('../up/..', join(w.dir, 'src', 'deep', 'out'));
    });
    const artifact = await writeResult(commit);
    expect(await expectRefused(artifact, 'perimeter')).toContain(
      'symlink pointing outside the repository',
    );
  });

  it('with a new gitlink', async () => {
    const { work, base } = world;
    work.git('checkout', '-q', '-B', 'story', base);
    work.git('update-index', '--add', '--cacheinfo', `160000,${base},src/nested`);
    work.git('commit', '-q', '-m', 'a nested repository');
    const commit = work.git('rev-parse', 'HEAD').trim();
    const artifact = await writeResult(commit);
    expect(await expectRefused(artifact, 'perimeter')).toContain(
      'src/nested: never merged (submodule change)',
    );
  });

  it('changing a workflow without leave', async () => {
    const commit = storyCommit((w) => w.write('.github/workflows/ci.yml', 'on: [push, issues]\n'));
    const artifact = await writeResult(commit);
    expect(await expectRefused(artifact, 'perimeter')).toContain(
      '.github/workflows/ci.yml: never merged (workflow file)',
    );
  });

  it('changing an existing test without leave', async () => {
    const commit = storyCommit((w) =>
      w.write('test/a.test.ts', "it('a', () => expect(1).toBe(2));\n"),
    );
    const artifact = await writeResult(commit);
    await expectRefused(artifact, 'existing-tests', {
      story: { ...STORY, owns: ['src', 'test'] },
    });
  });

  it('with a planted GitHub token, redacted in the refusal', async () => {
    const token = `ghp_${'A1b2C3d4E5'.repeat(4)}`;
    const commit = storyCommit((w) => w.write('src/b.ts', `const t = '${token}';\n`));
    const artifact = await writeResult(commit);
    const text = await expectRefused(artifact, 'secret');
    expect(text).toContain('src/b.ts: GitHub token (ghp_********)');
    expect(text).not.toContain(token.slice(4, 12));
  });

  it('with the value of a secret the job holds, in a commit the last one undid', async () => {
    storyCommit((w) => w.write('src/key.txt', `${SECRET}\n`));
    world.work.git('rm', '-q', 'src/key.txt');
    world.work.git('commit', '-q', '-m', 'gone again');
    const commit = world.work.git('rev-parse', 'HEAD').trim();
    const artifact = await writeResult(commit);
    const text = await expectRefused(artifact, 'secret');
    expect(text).toContain('a secret of the publish job (********)');
    expect(text).not.toContain(SECRET);
  });
});
