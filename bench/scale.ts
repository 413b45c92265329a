/**
 * The scale benchmark: what an epic of 20 and of 100 stories costs GitHub, per story, with
 * GitHub's rate limits on and the double's clock simulated (`npm run bench -- scale`).
 *
 * The App runs in a process of its own (`support/app-process.ts`): a real probot behind
 * `createNodeMiddleware`, with probot's throttling and retry plugins as in production,
 * except that their waits (writes 1 s apart, notifying writes 3 s apart, `retry-after`,
 * `x-ratelimit-reset`) are sleeps on the double's `auto` clock, relayed over IPC. Story jobs
 * are simulated in this process: each dispatched run waits for a runner (15 s), for its
 * agent (5 minutes) and for a second runner (its publish job) on the same clock; then, with
 * an installation token it mints itself
 * from the App's key (as the Action does), it writes what a story job writes (story branch,
 * a commit, the merge into the epic branch with its trailer, its record), makes the
 * orchestrator's decision the Action makes after a story (`handleEpicEvent` on its own run)
 * and its run completes. Every request is counted by the double, per token.
 *
 * `EPICFLOW_BENCH_SCALE=quick` runs the 20-story epic only; `=all` adds the 100-story epic
 * without a board.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';
import { appTokens } from '../src/adapters/github/app-auth.js';
import {
  GitHubRepo,
  GitHubStateStore,
  gitBlobSha,
  STATE_BRANCH,
  USER_AGENT,
  type GitHubClient,
} from '../src/adapters/github/index.js';
import type { StoryRecord } from '../src/core/model.js';
import { runTitle } from '../src/core/epic/index.js';
import { handleEpicEvent } from '../src/orchestrator/index.js';
import { planBody, type StorySpec } from '../test/app/harness.js';
import { octokitFor } from '../test/github-double/client.js';
import {
  startGitHubDouble,
  timeToFirstDispatch,
  type DispatchRec,
  type GitHubDouble,
  type LimitName,
  type TokenStats,
} from '../test/github-double/index.js';
import { throttleOnClock } from '../test/github-double/throttle.js';
import { startAppProcess } from './support/app-child.js';

const OWNER = 'acme';
const REPO = 'shop';
const APP_ID = 777;
const SECRET = 'bench-scale-secret';
const APP_ACTOR = 'app';
const STORY_WORKFLOW_FILE = new URL(
  '../examples/workflows/app/epicflow-story.yml',
  import.meta.url,
);

interface World {
  readonly gh: GitHubDouble;
  readonly privateKey: string;
  readonly repoId: number;
  readonly aliceToken: string;
}

/** Story jobs' reconciles run one at a time (they share this process; see `storyJob`). */
class Turn {
  private tail: Promise<void> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

const STORY_WORKFLOW = '.github/workflows/epicflow-story.yml';
/** From dispatch to the runner starting the job, and the agent's work. */
const RUNNER_PICKUP_MS = 15_000;
const AGENT_MS = 5 * 60_000;
/** The Action's own rule (`createOctokit`): three retries on a rate limit. */
const ACTION_RETRIES = 3;

const silent = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

export interface Scenario {
  readonly label: string;
  readonly stories: number;
  readonly waves: number;
  readonly concurrency: number;
  readonly board: boolean;
}

/** `waves` waves; each story after the first wave depends on one story of the wave before. */
export function wavePlan(stories: number, waves: number): StorySpec[] {
  const byWave: string[][] = Array.from({ length: waves }, () => []);
  const plan: StorySpec[] = [];
  for (let i = 0; i < stories; i++) {
    const wave = Math.floor((i * waves) / stories);
    const id = `s${i}`;
    const before = byWave[wave - 1];
    plan.push(
      before === undefined || before.length === 0
        ? { id }
        : { id, dependsOn: [before[(byWave[wave]?.length ?? 0) % before.length] ?? ''] },
    );
    byWave[wave]?.push(id);
  }
  return plan;
}

interface Totals {
  rest: number;
  graphql: number;
  graphqlPoints: number;
  contentCreating: number;
  git: number;
}

function totals(byToken: Record<string, TokenStats>, only?: (token: string) => boolean): Totals {
  const t: Totals = { rest: 0, graphql: 0, graphqlPoints: 0, contentCreating: 0, git: 0 };
  for (const [token, s] of Object.entries(byToken)) {
    if (only && !only(token)) continue;
    t.rest += s.rest;
    t.graphql += s.graphql;
    t.graphqlPoints += s.graphqlPoints;
    t.contentCreating += s.contentCreating;
    t.git += s.git;
  }
  return t;
}

type Sender = 'app' | 'jobs' | 'jwt';

/** Requests per operation by sender, from the label on (`before`: the counts at the label). */
function operationsOf(
  byToken: Record<string, TokenStats>,
  before: Record<string, TokenStats>,
  senderOf: (token: string) => Sender,
): Record<Sender, Map<string, number>> {
  const out: Record<Sender, Map<string, number>> = {
    app: new Map(),
    jobs: new Map(),
    jwt: new Map(),
  };
  for (const [token, s] of Object.entries(byToken)) {
    const m = out[senderOf(token)];
    for (const [op, n] of Object.entries(s.operations)) {
      const d = n - (before[token]?.operations[op] ?? 0);
      if (d > 0) m.set(op, (m.get(op) ?? 0) + d);
    }
  }
  return out;
}

function minus(a: Totals, b: Totals): Totals {
  return {
    rest: a.rest - b.rest,
    graphql: a.graphql - b.graphql,
    graphqlPoints: a.graphqlPoints - b.graphqlPoints,
    contentCreating: a.contentCreating - b.contentCreating,
    git: a.git - b.git,
  };
}

export interface Result {
  readonly scenario: Scenario;
  readonly all: Totals;
  readonly app: Totals;
  readonly jobs: Totals;
  /** Requests with the App's JWT: finding the installation and minting tokens (App and jobs). */
  readonly jwt: Totals;
  readonly firstDispatchS: number | undefined;
  readonly done: number;
  readonly completed: boolean;
  readonly hits: Partial<Record<LimitName, number>>;
  /** Requests answered 409 (a compare-and-swap write that lost). */
  readonly conflicts: number;
  /** REST operations and GraphQL documents, busiest first. */
  readonly byOperation: readonly (readonly [string, number])[];
  /** The same by who sent them: the App's installation tokens, the jobs' tokens, the App JWT. */
  readonly byOperationOf: Readonly<Record<Sender, ReadonlyMap<string, number>>>;
  readonly appErrors: number;
  readonly appErrorSamples: readonly string[];
  readonly simulatedMinutes: number;
  readonly wallS: number;
  /** Peak memory of the App's process. */
  readonly appRssMb: number;
  readonly appHeapMb: number;
  /** Peak RSS of this process: the double and the simulated jobs. */
  readonly benchRssMb: number;
}

/** Peak memory of this process, sampled. */
function memoryPeaks(): { stop: () => { rss: number; heap: number } } {
  let rss = 0;
  let heap = 0;
  const sample = (): void => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heapUsed);
  };
  const timer = setInterval(sample, 100);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return { rss: rss / 2 ** 20, heap: heap / 2 ** 20 };
    },
  };
}

/** A story job's Octokit: the Action's production plugins, waiting on the double's clock. */
function jobOctokit(w: World, token: string, actor: string): GitHubClient {
  const JobOctokit = Octokit.plugin(throttling, retry);
  return new JobOctokit({
    baseUrl: w.gh.url,
    auth: token,
    userAgent: USER_AGENT,
    log: silent,
    retry: { retryAfterBaseValue: 0 }, // as for the App (support/app-process.ts)
    // The plugin's own option type cannot name the clock-driven limiters.
    throttle: throttleOnClock(w.gh.clock, {
      actor,
      retry: (_after, _o, _k, count) => count < ACTION_RETRIES,
    }) as never,
  }) as unknown as GitHubClient;
}

/**
 * One story job, from its dispatch to its run's completion. Its reconcile waits for its
 * turn: jobs share this process, and the orchestrator's per-epic lock is per process (in
 * production each job is a process of its own). A job waiting for its turn is not busy for
 * the clock, so a job holding the turn may sleep on it.
 */
async function storyJob(
  w: World,
  epic: number,
  d: DispatchRec,
  turn: Turn,
  /** The configured board's URL, if any. */
  board: string | undefined,
  onToken: (token: string) => void,
): Promise<boolean> {
  const { gh } = w;
  const actor = `job ${d.runId}`;
  const story = String(d.inputs['story']);
  const attempt = Number(d.inputs['attempt']);
  let busy = true;
  const untrack = gh.clock.track(actor, () => busy);
  try {
    await gh.clock.sleep(RUNNER_PICKUP_MS, actor);
    gh.act.startWorkflowRun(d.runId);
    const atStart = await recordOf(gh, epic, story);
    await gh.clock.sleep(AGENT_MS, actor);
    // The story's second job (the publish job, `needs: work`) waits for a runner of its own.
    await gh.clock.sleep(RUNNER_PICKUP_MS, actor);
    const tokens = await appTokens({
      appId: String(APP_ID),
      privateKey: w.privateKey,
      owner: OWNER,
      repo: REPO,
      baseUrl: gh.url,
      production: false,
    });
    const token = await tokens.token();
    onToken(token);
    const octokit = jobOctokit(w, token, actor);
    const repo = new GitHubRepo({ owner: OWNER, repo: REPO, botLogin: tokens.botLogin, octokit });
    // The job's own reads at start (not simulated) parse the configuration: its board is
    // known to the decision after the story, whose view then reads it along.
    repo.cache.boards.set(repo.fullName, board ?? null);
    const base = { owner: OWNER, repo: REPO };
    const epicBranch = `epic/${epic}`;
    const branch = `story/${epic}/${story}`;
    const head = await gh.state.ref(OWNER, REPO, epicBranch);
    if (head === undefined) throw new Error(`${epicBranch} does not exist`);
    if ((await gh.state.ref(OWNER, REPO, branch)) === undefined) {
      await octokit.rest.git.createRef({ ...base, ref: `refs/heads/${branch}`, sha: head });
    }
    await octokit.rest.repos.createOrUpdateFileContents({
      ...base,
      path: `src/${story}/index-${attempt}.ts`,
      branch,
      message: `${story}: attempt ${attempt}`,
      content: Buffer.from(`export const ${story} = ${attempt};\n`).toString('base64'),
    });
    const { data } = await octokit.rest.repos.merge({
      ...base,
      base: epicBranch,
      head: branch,
      commit_message: `Merge story ${story} into ${epicBranch}\n\nEpicflow-Story: ${story}\nEpicflow-Executor: codex`,
    });
    const store = new GitHubStateStore({
      repo,
      epic: String(epic),
      sleep: (ms) => gh.clock.sleep(ms, actor),
    });
    const done = (current: StoryRecord): StoryRecord => ({
      ...current,
      status: 'done',
      mergeCommit: data.sha,
      finishedAt: new Date(gh.clock.now()).toISOString(),
      executors: ['codex'],
    });
    // As the Action: a compare-and-swap on the record its start read gave (that read, as
    // the others at start, is not simulated: the record is taken from the double's state),
    // read again only when someone wrote it meanwhile.
    const first = await store.write(done(atStart.record), atStart.sha);
    if (!first.ok) {
      await store.update(story, (current) => {
        if (current === null) throw new Error(`no record for ${story}`);
        return done(current);
      });
    }
    // The Action's reconcile after a story: the orchestrator's decision on its own run.
    busy = false;
    await turn.run(async () => {
      busy = true;
      const self = { id: w.repoId, fullName: `${OWNER}/${REPO}` };
      await handleEpicEvent(
        {
          repo,
          defaultBranch: 'main',
          storyWorkflow: 'epicflow-story.yml',
          log: { info: () => undefined, warn: () => undefined },
          sleep: (ms) => gh.clock.sleep(ms, actor),
          createsSubIssues: false, // as the Action's story job
        },
        {
          kind: 'workflow-run',
          runId: d.runId,
          workflowPath: STORY_WORKFLOW,
          displayTitle: runTitle({ epic, story, attempt }),
          conclusion: 'success',
          origin: {
            event: 'workflow_dispatch',
            path: STORY_WORKFLOW,
            headBranch: d.ref,
            repository: self,
            headRepository: self,
          },
          repositoryId: w.repoId,
        },
      ).catch(() => undefined); // best effort, as in the Action: the App decides too
    });
    gh.act.completeWorkflowRun(d.runId, 'success');
    return true;
  } finally {
    busy = false;
    untrack();
  }
}

/** A story's record and its blob sha on the state branch, as a job's start read gives them. */
async function recordOf(
  gh: GitHubDouble,
  epic: number,
  story: string,
): Promise<{ record: StoryRecord; sha: string }> {
  const text = await gh.state.file(
    OWNER,
    REPO,
    STATE_BRANCH,
    `epics/${epic}/stories/${story}.json`,
  );
  if (text === undefined) throw new Error(`no record for ${story}`);
  return { record: JSON.parse(text) as StoryRecord, sha: gitBlobSha(text) };
}

/** A double with GitHub's limits and a simulated clock, seeded as for the App. */
async function startWorld(): Promise<World> {
  const gh = await startGitHubDouble({ limits: true, clock: 'auto' });
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const app = gh.seed.app({ id: APP_ID, slug: 'epicflow', privateKey: pem });
  gh.seed.user({ login: app.botLogin, type: 'Bot', permission: 'admin' });
  const alice = gh.seed.user({ login: 'alice', permission: 'write' });
  const repo = await gh.seed.repo({
    owner: OWNER,
    name: REPO,
    files: {
      'README.md': '# shop\n',
      '.github/workflows/epicflow-story.yml': await readFile(STORY_WORKFLOW_FILE, 'utf8'),
    },
  });
  gh.seed.label({ owner: OWNER, repo: REPO, name: 'epic' });
  return { gh, privateKey: pem, repoId: repo.id, aliceToken: alice.token };
}

export async function runScenario(s: Scenario): Promise<Result> {
  const hits: Partial<Record<LimitName, number>> = {};
  const w = await startWorld();
  const { gh } = w;
  const app = await startAppProcess(gh, {
    appId: APP_ID,
    privateKey: w.privateKey,
    secret: SECRET,
    actor: APP_ACTOR,
  });
  gh.setWebhookTarget({ url: app.url, secret: SECRET });
  gh.waitFor(app.work);
  const untrackApp = gh.clock.track(APP_ACTOR, () => app.work.busy());
  try {
    const board = `https://github.com/orgs/${OWNER}/projects/1`;
    if (s.board) gh.seed.project({ owner: OWNER, number: 1, title: 'Epics' });
    await octokitFor(gh, w.aliceToken).rest.repos.createOrUpdateFileContents({
      owner: OWNER,
      repo: REPO,
      path: '.github/epicflow.yml',
      message: 'epicflow config',
      content: Buffer.from(
        `executors:\n  - { id: codex, harness: codex, roles: [coder], slots: ${s.concurrency} }\n` +
          `labels: { epic: epic }\nconcurrency: ${s.concurrency}\n` +
          (s.board ? `board: { project: "${board}" }\n` : ''),
      ).toString('base64'),
    });
    const before = structuredClone(gh.stats.byToken);
    const statusesBefore = { ...gh.stats.statuses };
    const operations = (): Map<string, number> =>
      new Map([
        ...Object.entries(gh.stats.rest),
        ...Object.entries(gh.stats.graphql).map(([op, n]): [string, number] => [
          `graphql ${op}`,
          n,
        ]),
      ]);
    const operationsBefore = operations();
    const issue = gh.seed.issue({
      owner: OWNER,
      repo: REPO,
      title: `Epic of ${s.stories}`,
      body: planBody(wavePlan(s.stories, s.waves)),
      author: 'alice',
    });
    const epic = issue.number;
    const jobTokens = new Set<string>();
    const running = new Set<Promise<boolean>>();
    const turn = new Turn();
    let done = 0;
    let lastDone = gh.clock.now();
    const off = gh.onDispatch((d) => {
      if (d.inputs['epic'] !== String(epic)) return;
      const job = storyJob(w, epic, d, turn, s.board ? board : undefined, (t) =>
        jobTokens.add(t),
      ).then(
        (ok) => {
          if (ok) done += 1;
          lastDone = gh.clock.now();
          return ok;
        },
        () => false,
      );
      running.add(job);
      void job.finally(() => running.delete(job));
    });
    const labelAt = gh.clock.now();
    const t0 = performance.now();
    const memory = memoryPeaks();
    gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: epic, label: 'epic' });
    for (;;) {
      await gh.idle();
      if (running.size === 0) break;
      await Promise.all([...running]);
    }
    off();
    const wallS = (performance.now() - t0) / 1000;
    const bench = memory.stop();
    for (const h of gh.stats.limitHits) hits[h.limit] = (hits[h.limit] ?? 0) + 1;
    const all = minus(totals(gh.stats.byToken), totals(before));
    const jobs = totals(gh.stats.byToken, (t) => jobTokens.has(t));
    const jwt = minus(
      totals(gh.stats.byToken, (t) => t === 'app-jwt'),
      totals(before, (t) => t === 'app-jwt'),
    );
    const firstDispatch = timeToFirstDispatch(gh.stats, {
      owner: OWNER,
      repo: REPO,
      issue: epic,
      label: 'epic',
      input: 'epic',
    });
    const appReport = await app.report();
    const byOperation = [...operations()]
      .map(([op, n]): [string, number] => [op, n - (operationsBefore.get(op) ?? 0)])
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1]);
    const byOperationOf = operationsOf(gh.stats.byToken, before, (t) =>
      jobTokens.has(t) ? 'jobs' : t === 'app-jwt' ? 'jwt' : 'app',
    );
    const answered = (status: number): number =>
      (gh.stats.statuses[status] ?? 0) - (statusesBefore[status] ?? 0);
    return {
      scenario: s,
      all,
      jobs,
      jwt,
      app: minus(minus(all, jobs), jwt),
      firstDispatchS: firstDispatch === undefined ? undefined : firstDispatch / 1000,
      done,
      completed: done === s.stories,
      hits,
      conflicts: answered(409),
      byOperation,
      byOperationOf,
      appErrors: appReport.errors,
      appErrorSamples: appReport.errorSamples,
      simulatedMinutes: (lastDone - labelAt) / 60_000,
      wallS,
      appRssMb: appReport.peakRssMb,
      appHeapMb: appReport.peakHeapMb,
      benchRssMb: bench.rss,
    };
  } finally {
    untrackApp();
    await app.stop();
    await gh.close();
  }
}

const f1 = (n: number): string => n.toFixed(1);

export function table(results: readonly Result[]): string[] {
  const col = (f: (r: Result) => string): string => results.map((r) => ` ${f(r)} |`).join('');
  const per = (f: (r: Result) => number) => (r: Result) => f1(f(r) / r.scenario.stories);
  const row = (label: string, f: (r: Result) => string, goal: string): string =>
    `| ${label} |${col(f)} ${goal} |`;
  const header = (r: Result): string =>
    r.completed ? r.scenario.label : `${r.scenario.label} (stalled: ${r.done} done)`;
  return [
    `| per planned story | ${results.map(header).join(' | ')} | goal |`,
    `| --- |${results.map(() => ' --- |').join('')} --- |`,
    row(
      'API requests, all told (App + jobs, REST + GraphQL)',
      per((r) => r.all.rest + r.all.graphql),
      '≤ 20',
    ),
    row(
      '· the same per story done',
      (r) => (r.done === 0 ? '—' : f1((r.all.rest + r.all.graphql) / r.done)),
      '—',
    ),
    row(
      '· by the App',
      per((r) => r.app.rest + r.app.graphql),
      '—',
    ),
    row(
      '· by the story jobs',
      per((r) => r.jobs.rest + r.jobs.graphql),
      '—',
    ),
    row(
      '· with the App JWT (installation, tokens)',
      per((r) => r.jwt.rest),
      '—',
    ),
    row(
      'content-creating requests',
      per((r) => r.all.contentCreating),
      '≤ 3',
    ),
    row(
      'GraphQL points (cost formula)',
      per((r) => r.all.graphqlPoints),
      '≤ 10',
    ),
    row(
      'GraphQL requests',
      per((r) => r.all.graphql),
      '—',
    ),
    row(
      'git over HTTP requests',
      per((r) => r.all.git),
      '—',
    ),
    row(
      'first dispatch after the label (simulated)',
      (r) => (r.firstDispatchS === undefined ? 'never' : `${f1(r.firstDispatchS)} s`),
      '≤ 30 s',
    ),
    row(
      'epic completed without a command',
      (r) => (r.completed ? 'yes' : `no (${r.done} of ${r.scenario.stories} done)`),
      'yes',
    ),
    row(
      'rate-limit refusals',
      (r) =>
        Object.entries(r.hits)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ') || 'none',
      '—',
    ),
    row(
      'requests answered 409 (lost compare-and-swap), whole epic',
      (r) => String(r.conflicts),
      '—',
    ),
    row('errors the App logged', (r) => String(r.appErrors), '—'),
    row('simulated time, label to last story', (r) => `${f1(r.simulatedMinutes)} min`, '—'),
    row('wall time', (r) => `${f1(r.wallS)} s`, '—'),
    row(
      'peak memory of the App (RSS / heap)',
      (r) => `${r.appRssMb.toFixed(0)} / ${r.appHeapMb.toFixed(0)} MB`,
      '—',
    ),
  ];
}

export const SCENARIOS: readonly Scenario[] = [
  { label: '20 stories, 5 waves, 8 jobs', stories: 20, waves: 5, concurrency: 8, board: true },
  { label: '100 stories, 12 waves, 8 jobs', stories: 100, waves: 12, concurrency: 8, board: true },
  {
    label: '100 stories, 12 waves, 20 jobs',
    stories: 100,
    waves: 12,
    concurrency: 20,
    board: true,
  },
];

/** With `EPICFLOW_BENCH_SCALE=all`: the 100-story epic without a board too (about 4 minutes). */
const WITHOUT_BOARD: Scenario = {
  label: '100 stories, 12 waves, 8 jobs, no board',
  stories: 100,
  waves: 12,
  concurrency: 8,
  board: false,
};

export async function run(): Promise<void> {
  const mode = process.env['EPICFLOW_BENCH_SCALE'];
  const scenarios =
    mode === 'quick'
      ? SCENARIOS.slice(0, 1)
      : mode === 'all'
        ? [...SCENARIOS, WITHOUT_BOARD]
        : SCENARIOS;
  const results: Result[] = [];
  for (const s of scenarios) results.push(await runScenario(s));
  console.log(
    'GitHub rate limits on (content creation 80/min and 500/h, REST 900 points/min, GraphQL\n' +
      '2,000 points/min, 5,000 requests and 5,000 GraphQL points an hour per installation), the\n' +
      "double's clock simulated (auto); a Projects board configured unless said; a job takes 15 s\n" +
      'to start and 5 minutes for its agent (simulated). Counts from the label to the last job.\n',
  );
  console.log(table(results).join('\n'));
  console.log(
    '\nA stalled epic is one left waiting for a person: its counts run from the label to the\n' +
      'last job that finished, divided by the stories planned (the row after the first divides\n' +
      'by the stories done).',
  );
  console.log('\nBusiest operations per planned story (App and jobs):\n');
  console.log(`| operation | ${results.map((r) => r.scenario.label).join(' | ')} |`);
  console.log(`| --- |${results.map(() => ' --- |').join('')}`);
  const top = new Set(results.flatMap((r) => r.byOperation.slice(0, 8).map(([op]) => op)));
  for (const op of top) {
    const cells = results.map((r) => {
      const n = r.byOperation.find(([o]) => o === op)?.[1] ?? 0;
      return ` ${f1(n / r.scenario.stories)} |`;
    });
    console.log(`| ${op} |${cells.join('')}`);
  }
  for (const r of results) {
    console.log(`\nBy sender per planned story, ${r.scenario.label}:\n`);
    console.log('| operation | App | story jobs | App JWT |');
    console.log('| --- | --- | --- | --- |');
    const ops = new Set(Object.values(r.byOperationOf).flatMap((m) => [...m.keys()]));
    const cell = (who: Sender, op: string): string =>
      f1((r.byOperationOf[who].get(op) ?? 0) / r.scenario.stories);
    const total = (op: string): number =>
      Object.values(r.byOperationOf).reduce((n, m) => n + (m.get(op) ?? 0), 0);
    for (const op of [...ops].sort((a, b) => total(b) - total(a))) {
      console.log(`| ${op} | ${cell('app', op)} | ${cell('jobs', op)} | ${cell('jwt', op)} |`);
    }
  }
  for (const r of results) {
    if (r.appErrorSamples.length === 0) continue;
    console.log(
      `\nErrors the App logged, ${r.scenario.label} (first ${r.appErrorSamples.length}):`,
    );
    for (const e of r.appErrorSamples) console.log(`- ${e.slice(0, 300)}`);
  }
}
