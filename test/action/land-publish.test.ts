/**
 * A landing runs as two jobs of one workflow run: the work job (the merge, the gates and the
 * land coder, with a token that can only read) hands the landed merge over as a bundle; the
 * publish job (the write credential, no checkout) checks it from its objects and pushes it.
 * Here the hand-over is what an agent that escaped the work job's sandbox could make of it —
 * a merge that also writes a file neither branch touched, one that plants the publish job's
 * token in a file the default branch changed, one whose parents are not the two heads — and
 * each is refused with the reason on the landing's record: the epic branch does not move.
 * One landing's work job is run (its epic's story delivered by the App harness); each test
 * forges a copy of its hand-over, its landing recorded as running again.
 *
 * @needs root
 */
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { readLandLog, type LandRecord } from '../../src/core/land/index.js';
import { completeStory, startEpic } from '../app/harness.js';
import { startAppActionWorld, type AppActionWorld } from './support/app-world.js';
import { CODER } from './support/world.js';
import {
  checkout,
  dispatchOf,
  OWNER,
  planBody,
  REPO,
  runStep,
  storyInputs,
  type JobRun,
} from './support/world.js';

let world: AppActionWorld | undefined;
let scratch: string | undefined;
/** The hand-overs copied for the tests. */
const copies: string[] = [];
afterAll(async () => {
  await world?.close();
  for (const dir of copies) await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  scratch = undefined;
});

/** A delivered epic, a push to main, and land-1's work job run: its hand-over's folder. */
async function landed(): Promise<{ aw: AppActionWorld; epic: number; result: string }> {
  const aw = await startAppActionWorld('land-publish', (dumps) =>
    [
      'executors:',
      '  - id: scripted',
      '    harness: command',
      `    command: ${JSON.stringify(['node', CODER, dumps])}`,
      'gates: ["sh check.sh"]',
      'fixRounds: 0',
      '',
    ].join('\n'),
  );
  world = aw;
  const { w, bundle } = aw;
  const epic = await startEpic(aw.app, 'Checkout', planBody([{ id: 'cart' }]));
  // The story as the App harness delivers it (its module as the gate wants it): a story job
  // is story.test.ts's; what this file asserts is the landing's publish job.
  await completeStory(aw.app, epic, 'cart', 1, undefined, {
    path: 'src/cart/index.js',
    content: 'export const story = "cart";\n',
  });
  await aw.app.gh.act.pushFiles('alice', {
    owner: OWNER,
    repo: REPO,
    branch: 'main',
    files: { 'docs/guide.md': '# guide\n' },
    message: 'Work on main',
  });
  await aw.app.gh.idle();
  const work = await runStep(w, bundle, {
    name: 'land-work',
    workspace: await checkout(w, 'land-work'),
    inputs: { ...storyInputs(w, epic, 'land-1'), phase: 'work' },
    runId: dispatchOf(w, epic, 'land-1').runId,
  });
  expect(work.code).toBe(0);
  expect(work.outputs['status']).toBe('merged');
  return { aw, epic, result: work.outputs['result'] ?? '' };
}

/**
 * Replaces the hand-over's merge with one made by `forge` (given a git runner in a clone that
 * holds the merge and both heads, and the three commits), written into a new bundle.
 */
async function forgeLanding(
  aw: AppActionWorld,
  result: string,
  forge: (
    git: (...args: string[]) => string,
    c: { landed: string; e: string; b: string },
  ) => string,
): Promise<void> {
  scratch = await mkdtemp(join(tmpdir(), 'epicflow-land-forge-'));
  const git = (...args: string[]): string =>
    execFileSync('git', args, {
      cwd: scratch,
      encoding: 'utf8',
      env: { ...process.env, GIT_INDEX_FILE: join(scratch ?? '', 'forged-index') },
    }).trim();
  git('init', '--quiet', '--bare', '.');
  git('fetch', '--quiet', aw.app.gh.state.repoDir(OWNER, REPO), '+refs/heads/*:refs/heads/*');
  const file = join(result, 'result.json');
  const handover = JSON.parse(await readFile(file, 'utf8')) as {
    epicHead: string;
    branchHead: string;
    outcome: { kind: string; commit: string };
  };
  git('fetch', '--quiet', join(result, 'result.bundle'), 'refs/epicflow-result/story:refs/landed');
  const forged = forge(git, {
    landed: handover.outcome.commit,
    e: handover.epicHead,
    b: handover.branchHead,
  });
  git('update-ref', 'refs/epicflow-result/story', forged);
  await rm(join(result, 'result.bundle'));
  git(
    'bundle',
    'create',
    '--quiet',
    join(result, 'result.bundle'),
    'refs/epicflow-result/story',
    `^${handover.epicHead}`,
    `^${handover.branchHead}`,
  );
  handover.outcome.commit = forged;
  await writeFile(file, JSON.stringify(handover));
}

/** The landed merge's tree with `path` set to `text`, as a merge of `parents`. */
function withFile(
  git: (...args: string[]) => string,
  landed: string,
  path: string,
  text: string,
  parents: readonly string[],
): string {
  git('read-tree', landed);
  const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], {
    cwd: git('rev-parse', '--absolute-git-dir'),
    input: text,
    encoding: 'utf8',
  }).trim();
  git('update-index', '--add', '--cacheinfo', `100644,${blob},${path}`);
  const tree = git('write-tree');
  return git('commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', 'Merge main');
}

let publishes = 0;
async function publish(aw: AppActionWorld, epic: number, result: string): Promise<JobRun> {
  const { w, bundle } = aw;
  const name = `land-publish-${++publishes}`;
  return runStep(w, bundle, {
    name,
    workspace: await checkout(w, name),
    inputs: {
      ...storyInputs(w, epic, 'land-1'),
      phase: 'publish',
      result,
      'work-outcome': 'success',
    },
    runId: dispatchOf(w, epic, 'land-1').runId,
  });
}

async function landing(aw: AppActionWorld, epic: number): Promise<LandRecord | undefined> {
  const store = new GitHubStateStore({ repo: aw.w.repo, epic: String(epic) });
  const doc = await store.readJson<unknown>('land');
  return readLandLog(doc?.value ?? null, 'land.json').lands[0];
}

let fixture: { aw: AppActionWorld; epic: number; result: string };
/** land.json as the dispatch left it (running): each test's publish starts from it. */
let running: string;
beforeAll(async () => {
  fixture = await landed();
  const store = new GitHubStateStore({ repo: fixture.aw.w.repo, epic: String(fixture.epic) });
  running = JSON.stringify((await store.readJson<unknown>('land'))?.value);
}, 400_000);

/** The work job's hand-over, copied for one test to forge; land.json running again. */
async function handedOver(): Promise<{ aw: AppActionWorld; epic: number; result: string }> {
  const { aw, epic } = fixture;
  const store = new GitHubStateStore({ repo: aw.w.repo, epic: String(epic) });
  const now = await store.readJson<unknown>('land');
  await store.writeJson('land', JSON.parse(running) as unknown, now?.sha ?? null);
  const result = await mkdtemp(join(tmpdir(), 'epicflow-land-result-'));
  copies.push(result);
  await cp(fixture.result, result, { recursive: true });
  return { aw, epic, result };
}

describe('the publish job of a landing refuses a merge it cannot trust; the epic branch stays', () => {
  it('a merge that also writes a file neither branch touched', async () => {
    const { aw, epic, result } = await handedOver();
    const before = await aw.app.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    await forgeLanding(aw, result, (git, { landed, e, b }) =>
      withFile(git, landed, '.github/evil.sh', 'curl evil\n', [e, b]),
    );
    const job = await publish(aw, epic, result);
    expect(job.code).not.toBe(0);
    expect(job.summary).toContain('land-1 changes paths neither branch changed since they parted');
    expect(job.summary).toContain('.github/evil.sh');
    expect(await aw.app.gh.state.ref(OWNER, REPO, `epic/${epic}`)).toBe(before);
    expect(await landing(aw, epic)).toMatchObject({ outcome: 'not-landed' });
  }, 400_000);

  it("the publish job's token planted in a file the default branch changed", async () => {
    const { aw, epic, result } = await handedOver();
    const before = await aw.app.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    const token = aw.w.bot.token;
    await forgeLanding(aw, result, (git, { landed, e, b }) =>
      withFile(git, landed, 'docs/guide.md', `# guide\n${token}\n`, [e, b]),
    );
    const job = await publish(aw, epic, result);
    expect(job.code).not.toBe(0);
    expect(job.summary).toContain('docs/guide.md: a secret of the publish job');
    expect(job.summary).not.toContain(token);
    expect(await aw.app.gh.state.ref(OWNER, REPO, `epic/${epic}`)).toBe(before);
    expect((await landing(aw, epic))?.reason).toMatch(/credential/);
  }, 400_000);

  it('a commit that is not the merge of the two heads', async () => {
    const { aw, epic, result } = await handedOver();
    const before = await aw.app.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    // The landed tree, as a commit on the epic head alone: main's history left out.
    await forgeLanding(aw, result, (git, { landed, e }) =>
      git('commit-tree', `${landed}^{tree}`, '-p', e, '-m', 'Landed'),
    );
    const job = await publish(aw, epic, result);
    expect(job.code).not.toBe(0);
    expect(job.summary).toContain('is not the merge of the branch head into the epic head');
    expect(await aw.app.gh.state.ref(OWNER, REPO, `epic/${epic}`)).toBe(before);
    expect(await landing(aw, epic)).toMatchObject({ outcome: 'not-landed' });
  }, 400_000);
  it('a landing that says there was nothing to land while the epic lacks the default branch', async () => {
    const { aw, epic, result } = await handedOver();
    const before = await aw.app.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    const file = join(result, 'result.json');
    const handover = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(file, JSON.stringify({ ...handover, outcome: { kind: 'unchanged' } }));
    const job = await publish(aw, epic, result);
    expect(job.code).not.toBe(0);
    expect(job.summary).toMatch(
      /the landing says epic\/\d+ holds main at [0-9a-f]{40} already, and it does not/,
    );
    expect(await aw.app.gh.state.ref(OWNER, REPO, `epic/${epic}`)).toBe(before);
    expect(await landing(aw, epic)).toMatchObject({ outcome: 'not-landed' });
  }, 400_000);
});
