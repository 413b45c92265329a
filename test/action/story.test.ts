/**
 * Story mode run from the bundle against the GitHub double; its agents run as an agent user.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import {
  OWNER,
  REPO,
  buildBundle,
  CODER,
  checkout,
  configText,
  dispatchOf,
  dispatched,
  git,
  planBody,
  runJob,
  startEpic,
  startWorld,
  storyInputs,
  type ActionWorld,
  type JobRun,
} from './support/world.js';
import { dispatchEvent } from './support/dispatch-event.js';
import { startCollector, type Collector } from '../support/otlp-collector.js';
import { epicTraceParent } from '../../src/adapters/telemetry/otel.js';
import { describeNeeding } from '../support/needs.js';

/** The log without `::add-mask::` commands (the runner hides what they name). */
function unmasked(log: string): string {
  return log
    .split('\n')
    .filter((l) => !l.startsWith('::add-mask::'))
    .join('\n');
}

let bundleDir: string;
let bundle: string;

beforeAll(async () => {
  bundleDir = await mkdtemp(join(tmpdir(), 'epicflow-bundle-'));
  bundle = await buildBundle(bundleDir);
});
afterAll(async () => {
  await rm(bundleDir, { recursive: true, force: true });
});

describe('story mode, run from the bundle against GitHub: a story and its dependent', () => {
  // One run shared by the assertions below: cart's jobs over HTTP git, then its dependent
  // pay's, each with an OTLP endpoint set; the coder first tries to set a clean filter in
  // its checkout's git config, then codes as usual.
  let w: ActionWorld;
  let otlp: Collector;
  let epic: number;
  let workspace: string;
  let configBefore: string;
  let job: JobRun;
  let pay: JobRun;
  /** The epic head right after cart's jobs. */
  let cartHead: string | undefined;
  /** What cart's jobs cost GitHub (REST and GraphQL; git over HTTP apart). */
  let requests: number;
  let restBefore: Record<string, number>;
  let restAfter: Record<string, number>;
  beforeAll(async () => {
    otlp = await startCollector();
    w = await startWorld({
      config: (dumps) =>
        configText(dumps, {}).replace(
          /command: .*/,
          `command: ${JSON.stringify(['sh', '-c', 'git config filter.x.clean cat 2> "$1/git-config-$EPICFLOW_STORY.err"; exec node "$0" "$1"', CODER, dumps])}`,
        ),
    });
    epic = await startEpic(w, planBody([{ id: 'cart' }, { id: 'pay', dependsOn: ['cart'] }]));
    expect(dispatched(w, epic)).toEqual(['cart#1']);
    workspace = await checkout(w, 'cart');
    configBefore = await readFile(join(workspace, '.git/config'), 'utf8');
    const inputs = storyInputs(w, epic, 'cart');
    restBefore = { ...w.gh.stats.rest };
    const before = w.gh.stats.requests - w.gh.stats.gitRequests;
    job = await runJob(w, bundle, {
      name: 'cart',
      workspace,
      inputs,
      runId: dispatchOf(w, epic, 'cart').runId,
      env: {
        GITHUB_EVENT_PATH: await dispatchEvent(w, 'cart', inputs),
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      },
    });
    requests = w.gh.stats.requests - w.gh.stats.gitRequests - before;
    cartHead = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    restAfter = { ...w.gh.stats.rest };
    pay = await runJob(w, bundle, {
      name: 'pay',
      workspace: await checkout(w, 'pay'),
      inputs: storyInputs(w, epic, 'pay'),
      runId: dispatchOf(w, epic, 'pay').runId,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url },
    });
  });
  afterAll(async () => {
    await otlp.close();
    await w.close();
  });

  it('merges the story on the epic branch over HTTP git, with its trailers; the story branch is kept', async () => {
    expect(job.code).toBe(0);
    // The epic branch on GitHub holds the merge, with its trailers.
    expect(job.outputs['merge-sha']).toBe(cartHead);
    const message = await git(
      w.gh.state.repoDir(OWNER, REPO),
      'log',
      '-1',
      '--format=%B',
      job.outputs['merge-sha'] ?? '',
    );
    expect(message).toContain('Epicflow-Story: cart');
    expect(message).toContain('Epicflow-Executor: scripted');
    expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/cart/index.js')).toContain(
      'export const story',
    );
    // Nothing lost: the story branch is on GitHub too.
    expect(await w.gh.state.ref(OWNER, REPO, `story/${epic}/cart`)).toBeDefined();
  });

  it('records it and reports it: outputs, job summary, the record on GitHub', async () => {
    expect(job.outputs).toMatchObject({
      status: 'done',
      executor: 'scripted',
      tokens: '1500',
    });
    // The scripted model has no price: the cost is unknown, not zero.
    expect(job.outputs['cost']).toBe('');
    expect(job.summary).toContain('Total: 1500 tokens, cost unknown');
    expect(job.summary).toContain('epicflow: story `cart` of epic #');
    expect(job.summary).toContain('| status | done |');
    // Two publish jobs racing (one merging again, two pushes): test/orchestrator/publish-result.test.ts.
    expect(job.summary).toContain('| pushes of the epic head | 1 |');
    expect(job.summary).toContain('`sh check.sh`');
    expect(job.summary).toContain('clean: only owned paths changed');
    expect(job.summary).toContain('| scripted | scripted-1 | 1200 |');
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('cart'))?.record).toMatchObject({
      status: 'done',
      mergeCommit: job.outputs['merge-sha'],
      attempt: 1,
      executors: ['scripted'],
    });
  });

  it('costs GitHub few requests: the default branch from the event, one read of the epic, writes with compare-and-swap', () => {
    // The default branch comes from the event payload: the repository is not read for it.
    // Config, issue, sub-issues and records come in one GraphQL read; the record and the
    // roster are written with compare-and-swap on what was read, without reading again.
    expect(requests).toBeLessThanOrEqual(13);
    for (const op of ['repos/get', 'issues/get', 'issues/list-sub-issues']) {
      expect(restAfter[op] ?? 0).toBe(restBefore[op] ?? 0);
    }
  });

  it('starts its dependent without waiting for the App, and the dependent starts from the merged code', async () => {
    // The job reconciled itself: the dependent is dispatched without waiting for the App.
    expect(dispatched(w, epic)).toEqual(['cart#1', 'pay#1']);
    expect(pay.outputs['status']).toBe('done');
    // The dependent's coder starts from the code it builds on: its dependency's merged file.
    const { prompt } = JSON.parse(await readFile(join(w.dumps, 'pay.json'), 'utf8')) as {
      prompt: string;
    };
    expect(prompt).toContain('## The code you start from');
    expect(prompt).toMatch(/src\/cart\/index\.js[\s\S]*export const story = "cart";/);
  });

  it('the agent saw no token and worked in a tree of its own; the log never shows the token', async () => {
    // The agent saw no token: not in its environment, not in the git config it could read.
    const seen = await readFile(join(w.dumps, 'cart.json'), 'utf8');
    const basic = Buffer.from(`x-access-token:${w.bot.token}`).toString('base64');
    expect(seen).not.toContain(w.bot.token);
    expect(seen).not.toContain(basic);
    expect(seen.toLowerCase()).not.toContain('extraheader');
    expect(job.stdout).toMatch(
      /removed credentials from the checkout's git config: http\..*extraheader, includeif\.gitdir:/,
    );
    // It worked in a tree of its own, in the job's folder: never in the job checkout.
    const { cwd } = JSON.parse(seen) as { cwd: string };
    expect(cwd).toMatch(/\/epicflow-job-[^/]+\/epicflow\/\d+\/worktrees\/cart$/);
    expect(cwd.startsWith(workspace)).toBe(false);
    expect(await readFile(join(workspace, '.git/config'), 'utf8')).not.toContain(basic);
    // And the token never appears in the job's own log or summary.
    expect(unmasked(job.stdout + job.stderr) + job.summary).not.toContain(w.bot.token);
  });

  it("keeps git's configuration out of the agent's reach: it runs as another user", async () => {
    // `.git` stays epicflow's: the agent's write is refused, nothing needs putting back.
    expect(await readFile(join(w.dumps, 'git-config-cart.err'), 'utf8')).toMatch(
      /Permission denied/,
    );
    expect(configBefore).not.toContain('filter');
    expect(await readFile(join(workspace, '.git/config'), 'utf8')).not.toContain('filter');
    expect(job.summary).toContain('| perimeter | clean: only owned paths changed |');
    expect(job.summary).toMatch(
      /\| untrusted code \| ran as the user epicflow-agent(-\d+)? \(uid \d+\), without sudo/,
    );
    const dump = JSON.parse(await readFile(join(w.dumps, 'cart.json'), 'utf8')) as {
      env: Record<string, string>;
    };
    expect(dump.env['USER']).toMatch(/^epicflow-agent(-\d+)?$/);
  });

  it("exports each story job's spans into the epic's one trace, with an OTLP endpoint set", () => {
    const parent = epicTraceParent(`${OWNER}/${REPO}`, epic);
    const jobs = otlp.spans.filter((s) => s.name.startsWith('story job '));
    expect(jobs.map((s) => s.name).sort()).toEqual(['story job cart', 'story job pay']);
    // Both jobs' spans sit in the epic's trace, under its (derived) root.
    for (const s of jobs) {
      expect(s).toMatchObject({ traceId: parent.traceId, parentSpanId: parent.spanId });
    }
    const story = otlp.spans.find((s) => s.name === 'story cart');
    expect(story).toMatchObject({
      traceId: parent.traceId,
      parentSpanId: jobs.find((s) => s.name === 'story job cart')?.spanId,
      attributes: { 'epicflow.status': 'done', 'epicflow.tokens': 1500 },
    });
    const steps = otlp.spans.filter((s) => s.parentSpanId === story?.spanId).map((s) => s.name);
    expect(steps).toEqual(expect.arrayContaining(['setup', 'code', 'gates', 'integrate']));
  });
});

/*
 * The other refusals are the orchestrator's, tested in-process: a story not in the plan, a
 * stale attempt (and a publish job whose record a retry took over), an unapproved edit, no
 * approval on file, an expired token and a missing toolchain in
 * test/orchestrator/story-job.test.ts; missing inputs and an id that is not an
 * id in test/action/inputs.test.ts (and through the bundle in node24.test.ts and
 * local-action.test.ts). This one shows the shell's refusal: recorded, said, nothing pushed.
 */
describe('story mode refuses bad input clearly, and pushes nothing', () => {
  let w: ActionWorld;
  let epic: number;
  let epicHead: string | undefined;
  beforeAll(async () => {
    w = await startWorld();
    epic = await startEpic(w, planBody([{ id: 'cart' }]));
    epicHead = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
  });
  afterAll(async () => {
    await w.close();
  });

  async function refused(
    name: string,
    inputs: Record<string, string>,
    throttle = false,
  ): Promise<{ summary: string; stdout: string }> {
    const job = await runJob(w, bundle, {
      name,
      workspace: await checkout(w, name),
      inputs,
      throttle,
    });
    expect(job.code).toBe(1);
    expect(await w.gh.state.ref(OWNER, REPO, `epic/${epic}`)).toBe(epicHead);
    expect(await readdir(w.dumps).catch(() => [])).toEqual([]);
    expect(unmasked(job.stdout) + job.summary).not.toContain(w.bot.token);
    expect(job.stdout).not.toMatch(/\n\s+at .+:\d+:\d+/); // no stack trace
    return { summary: job.summary, stdout: job.stdout };
  }

  it('a plan entry changed since dispatch: refused, and the record says why', async () => {
    const issue = w.gh.state.issue(OWNER, REPO, epic);
    if (issue === undefined) throw new Error('no epic issue');
    issue.body = (issue.body ?? '').replace('Implement cart.', 'Implement the cart, with coupons.');
    // With GitHub's request pacing on, as in production (one write here: the refusal).
    const { summary } = await refused('plan-changed', storyInputs(w, epic, 'cart'), true);
    expect(summary).toContain('the plan entry of story cart changed since it was dispatched');
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('cart'))?.record).toMatchObject({
      status: 'failed',
      reason: expect.stringContaining('changed since it was dispatched') as unknown as string,
    });
  });
});

/**
 * A Python project whose config leaves its gates out: the job finds pytest in its
 * pyproject.toml on the epic head, as `epicflow run` would in the working tree.
 */
const PYTHON_PROJECT = {
  'pyproject.toml': [
    '[project]',
    'name = "shop"',
    'version = "0.1.0"',
    '',
    '[tool.pytest.ini_options]',
    'testpaths = ["tests"]',
    '',
  ].join('\n'),
  '.gitignore': '__pycache__/\n.pytest_cache/\n',
  'tests/test_stories.py': [
    'from pathlib import Path',
    '',
    '',
    'def test_every_story_exports_story():',
    "    src = Path('src')",
    '    for d in sorted(src.iterdir()) if src.exists() else []:',
    "        text = (d / 'index.js').read_text()",
    "        assert 'export const story' in text, f'src/{d.name}: no story export'",
    '',
  ].join('\n'),
  // A package of its own: its checks run, in its folder, for a story that touches it.
  'services/kit/pyproject.toml': '[project]\nname = "kit"\n\n[tool.pytest.ini_options]\n',
  'services/kit/test_kit.py': 'def test_kit():\n    assert sum([1, 2]) == 3\n',
};

// A push GitHub refuses (a protected epic branch) is the publish job's: tested in-process in
// test/orchestrator/story-job.test.ts, its summary's hint in summary.test.ts. A detected
// package's checks in its own folder, and a story that fails them and passes after a fix,
// with the local engine: test/cli/packages.test.ts, test/cli/detected-gates.test.ts.
describeNeeding(
  ['pytest'],
  'story mode reports a failed story, and runs detected pytest gates',
  () => {
    let w: ActionWorld;
    let epic: number;
    beforeAll(async () => {
      w = await startWorld({ gates: 'detected', files: PYTHON_PROJECT });
      epic = await startEpic(
        w,
        planBody([{ id: 'broken-kit', owns: ['src/broken-kit', 'services/kit'] }]),
      );
    });
    afterAll(async () => {
      await w.close();
    });

    it("a failing test of the detected pytest gate: the job fails with an annotation, the summary quotes the test and names the package's pytest, the branch is kept", async () => {
      const before = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
      const job = await runJob(w, bundle, {
        name: 'broken-kit',
        workspace: await checkout(w, 'broken-kit'),
        inputs: storyInputs(w, epic, 'broken-kit'),
        runId: dispatchOf(w, epic, 'broken-kit').runId,
      });
      expect(job.code).toBe(1);
      expect(job.outputs['status']).toBe('failed');
      expect(job.stdout).toContain(
        '::error title=epicflow gate failed%3A python3 -m pytest::python3 -m pytest failed on the story branch',
      );
      expect(job.summary).toContain('| status | failed |');
      expect(job.summary).toContain('src/broken-kit: no story export');
      // The story touches a detected package: its pytest runs too, in its folder, named with
      // it (here in the baseline on the epic head; on the story branch the root's failed first).
      expect(job.summary).toContain('| `python3 -m pytest` | story branch | failed |');
      expect(job.summary).toContain(
        '| `services/kit: python3 -m pytest` | merged epic tree | passed |',
      );
      expect(await w.gh.state.ref(OWNER, REPO, `epic/${epic}`)).toBe(before);
      expect(await w.gh.state.ref(OWNER, REPO, `story/${epic}/broken-kit`)).toBeDefined();
      const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
      const record = (await store.read('broken-kit'))?.record;
      expect(record).toMatchObject({
        status: 'failed',
        reason: expect.stringContaining('gates failed') as unknown as string,
      });
      expect(record?.notes).toContain("checks ran for services/kit (with the root's)");
    });
  },
);
