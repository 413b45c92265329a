/**
 * The App under test: a real probot on a loopback server behind
 * `createNodeMiddleware`, receiving signed deliveries from the GitHub double.
 * Story jobs are played the way the story Action would: a story branch with a
 * commit, a merge commit with an `Epicflow-Story` trailer on the epic branch
 * (REST merges API), the record written through `GitHubStateStore`, then the
 * workflow run completed.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sign } from '@octokit/webhooks-methods';
import Bottleneck from 'bottleneck';
import { pino } from 'pino';
import { createNodeMiddleware, Probot, ProbotOctokit, type Logger } from 'probot';
import { createOctokit } from '../../src/adapters/github/client.js';
import { GitHubRepo } from '../../src/adapters/github/repo.js';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import type { StoryRecord } from '../../src/core/model.js';
import { runTitle } from '../../src/core/epic/index.js';
import { handleEpicEvent } from '../../src/orchestrator/index.js';
import { createEpicflowApp } from '../../src/app/index.js';
import type { AppClock } from '../../src/app/retry.js';
import { octokitFor } from '../github-double/client.js';
import {
  startGitHubDouble,
  type DispatchRec,
  type DoubleOptions,
  type GitHubDouble,
  type SeededUser,
} from '../github-double/index.js';
import { registerCheck } from '../support/checks.js';
import { testAppKey } from '../support/app-key.js';

export const OWNER = 'acme';
export const REPO = 'shop';

/** The board (project 1 of acme) as people see it: story (issue title up to `:`) → Status option name. */
export function boardStatus(gh: GitHubDouble): Record<string, string> {
  const project = gh.state.project(OWNER, 1);
  const status = project?.fields.find((f) => f.name === 'Status');
  const out: Record<string, string> = {};
  for (const item of project?.items ?? []) {
    const issue = gh.state.issues(OWNER, REPO).find((i) => i.nodeId === item.contentId);
    const value = status === undefined ? undefined : item.values.get(status.id);
    const option =
      value !== undefined && 'singleSelectOptionId' in value
        ? status?.options.find((o) => o.id === value.singleSelectOptionId)?.name
        : undefined;
    out[issue?.title.split(':')[0] ?? item.contentId] = option ?? '';
  }
  return out;
}
const SECRET = 'app-test-secret';
/** The story workflow users copy with the App: its `run-name` tells the App which story a run is. */
const STORY_WORKFLOW = new URL('../../examples/workflows/app/epicflow-story.yml', import.meta.url);
/** Where the repository under test keeps it. */
const STORY_WORKFLOW_PATH = '.github/workflows/epicflow-story.yml';

/** The name the App's waits on the double's clock go by (see `gh.clock.track`). */
export const APP_ACTOR = 'app';

export interface AppWorld {
  readonly gh: GitHubDouble;
  readonly bot: SeededUser;
  readonly alice: SeededUser;
  /** The App's private key (PEM), to mint installation tokens as a story job does. */
  readonly privateKey: string;
  /** The repository's id (`repository.id` in payloads, `GITHUB_REPOSITORY_ID` on a runner). */
  readonly repoId: number;
  /** The state as the story jobs see it (the bot's token, plain client). */
  readonly repo: GitHubRepo;
  /** REST requests made by the simulated story jobs (not by the App). */
  readonly jobRequests: { rest: number };
  /** Whether the App answers deliveries only after handling them. */
  readonly sync: boolean;
  /** Everything the App logged through probot's logger, oldest first. */
  readonly log: readonly LogEntry[];
  /** What the App decided per delivery (its one info line each), oldest first. */
  decisions(): Decision[];
  /**
   * Lets the current test pass although the App logs an error with this tag (an
   * EpicflowError's stable tag, `internal` for a bug) or a message matching the pattern.
   * After each test, any other `error` or `fatal` line fails it (see test/support/checks.ts).
   */
  expectError(match: string | RegExp): void;
  /**
   * Sends `payload` as a signed delivery of `event` exactly as given (no example merged in,
   * no schema check: older payload shapes too) and returns the App's HTTP status.
   */
  deliverRaw(event: string, payload: Record<string, unknown>): Promise<number>;
  close(): Promise<void>;
}

/** One line of the App's log (pino's JSON), with the fields the App adds. */
export interface LogEntry {
  readonly level: number;
  readonly msg: string;
  readonly event?: string;
  readonly delivery?: string;
  readonly outcome?: string;
  readonly reason?: string;
  readonly epic?: number;
  readonly tag?: string;
}

export interface Decision {
  readonly event: string;
  readonly outcome: string;
  readonly reason?: string;
  readonly epic?: number;
}

/** pino's level numbers: 50 error, 60 fatal. */
const ERROR_LEVEL = 50;

/** probot's logger writing JSON lines into `entries`, every level kept. */
function capturingLogger(entries: LogEntry[]): Logger {
  // pino's own type, as probot's `Logger` (the same pino major) names it.
  return pino(
    { level: 'trace' },
    {
      write(line: string): void {
        entries.push(JSON.parse(line) as LogEntry);
      },
    },
  ) as unknown as Logger;
}

/**
 * The configuration the world's repository starts with: one coder with more slots than
 * any test dispatches, so `concurrency` is what bounds a decision. Tests that write their
 * own configuration start from it.
 */
export const APP_CONFIG =
  'executors:\n  - { id: codex, harness: codex, roles: [coder], slots: 64 }\n';

export interface WorldOptions {
  readonly files?: Record<string, string>;
  /** The repository's `.github/epicflow.yml` (default `APP_CONFIG`); null: no such file. */
  readonly config?: string | null;
  /** Probot's retry and throttling plugins on, waits shortened (for fault tests). */
  readonly retries?: boolean;
  /** Answer deliveries only after handling them (`EPICFLOW_SYNC_WEBHOOKS=1`). */
  readonly sync?: boolean;
  /** Options of the GitHub double (rate limits, clock). */
  readonly double?: DoubleOptions;
  /**
   * probot's throttling options (e.g. `throttleOnClock(gh.clock, { actor: APP_ACTOR })`),
   * with its retry plugin on as in production; overrides `retries`.
   */
  readonly throttle?: (gh: GitHubDouble) => Record<string, unknown>;
  /** The App's clock for waiting out a rate limit (e.g. the double's). */
  readonly clock?: (gh: GitHubDouble) => AppClock;
}

export async function startApp(options: WorldOptions = {}): Promise<AppWorld> {
  const gh = await startGitHubDouble(options.double);
  const pem = testAppKey();
  const seeded = gh.seed.app({ id: 777, slug: 'epicflow', privateKey: pem });
  const bot = gh.seed.user({ login: seeded.botLogin, type: 'Bot', permission: 'admin' });
  const alice = gh.seed.user({ login: 'alice', permission: 'write' });
  const seededRepo = await gh.seed.repo({
    owner: OWNER,
    name: REPO,
    files: {
      'README.md': '# shop\n',
      [STORY_WORKFLOW_PATH]: await readFile(STORY_WORKFLOW, 'utf8'),
      ...(options.config === null ? {} : { '.github/epicflow.yml': options.config ?? APP_CONFIG }),
      ...options.files,
    },
  });
  gh.seed.label({ owner: OWNER, repo: REPO, name: 'epic' });

  const fast = (): Record<string, unknown> => ({
    // Real plugins, real decisions; only the waits are cut to milliseconds.
    retry: { enabled: true, retryAfterBaseValue: 1 },
    throttle: {
      enabled: true,
      retryAfterBaseValue: 1,
      write: new Bottleneck.Group({ maxConcurrent: 4, minTime: 0 }),
      notifications: new Bottleneck.Group({ maxConcurrent: 4, minTime: 0 }),
      onRateLimit: (_after: number, _o: unknown, _k: unknown, count: number) => count < 5,
      onSecondaryRateLimit: (_after: number, _o: unknown, _k: unknown, count: number) => count < 5,
    },
  });
  const log: LogEntry[] = [];
  const throttle = options.throttle?.(gh);
  const probot = new Probot({
    appId: 777,
    privateKey: pem,
    secret: SECRET,
    baseUrl: gh.url,
    log: capturingLogger(log),
    // Function form of defaults (probot's testing docs): retries and throttling off by default.
    Octokit: ProbotOctokit.defaults((o: Record<string, unknown>) => ({
      ...o,
      ...(throttle !== undefined
        ? { throttle }
        : options.retries === true
          ? fast()
          : { retry: { enabled: false }, throttle: { enabled: false } }),
    })),
  });
  const app = createEpicflowApp({
    ...(options.sync === undefined ? {} : { sync: options.sync }),
    ...(options.clock === undefined ? {} : { clock: options.clock(gh) }),
  });
  // The App answers first and works after: `gh.idle()` waits for that work too, and the
  // double's clock does not jump while the App works (unless it sleeps on the clock).
  gh.waitFor(app);
  gh.clock.track(APP_ACTOR, () => app.busy());
  const middleware = await createNodeMiddleware(app, { probot });
  const server: Server = createServer((req, res) => {
    void middleware(req, res, () => {
      res.statusCode = 404;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  gh.setWebhookTarget({ url: `http://127.0.0.1:${port}/api/github/webhooks`, secret: SECRET });
  const repo = new GitHubRepo({
    owner: OWNER,
    repo: REPO,
    botLogin: seeded.botLogin,
    octokit: createOctokit({ baseUrl: gh.url, token: bot.token, production: false }),
  });
  // Errors the App logged, checked after each test: a handler that throws fails the test
  // that triggered it, even when the test only looks at what did NOT happen.
  let expected: (string | RegExp)[] = [];
  let checked = 0;
  const unexpectedErrors = (): LogEntry[] => {
    const fresh = log.slice(checked).filter((e) => e.level >= ERROR_LEVEL);
    return fresh.filter(
      (e) => !expected.some((m) => (typeof m === 'string' ? e.tag === m : m.test(e.msg))),
    );
  };
  const unregister = registerCheck({
    name: 'App under test',
    check: () => {
      const bad = unexpectedErrors();
      checked = log.length;
      expected = [];
      if (bad.length > 0) {
        throw new Error(
          `the App logged ${bad.length} unexpected error(s):\n` +
            bad.map((e) => `- [${e.tag ?? 'no tag'}] ${e.msg}`).join('\n'),
        );
      }
    },
  });
  return {
    gh,
    bot,
    alice,
    privateKey: pem,
    repoId: seededRepo.id,
    repo,
    jobRequests: { rest: 0 },
    sync: options.sync === true,
    log,
    decisions: () =>
      log
        .filter((e) => e.outcome !== undefined && e.event !== undefined)
        .map((e) => ({
          event: e.event as string,
          outcome: e.outcome as string,
          ...(e.reason === undefined ? {} : { reason: e.reason }),
          ...(e.epic === undefined ? {} : { epic: e.epic }),
        })),
    expectError: (match) => {
      expected.push(match);
    },
    deliverRaw: async (event, payload) => {
      const body = JSON.stringify(payload);
      const res = await fetch(`http://127.0.0.1:${port}/api/github/webhooks`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': event,
          'x-github-delivery': randomUUID(),
          'x-hub-signature-256': await sign(SECRET, body),
        },
        body,
      });
      await res.text();
      await gh.idle();
      return res.status;
    },
    close: async () => {
      await gh.idle();
      unregister();
      await new Promise((resolve) => server.close(resolve));
      await gh.close();
      const bad = unexpectedErrors();
      if (bad.length > 0) {
        throw new Error(
          `the App logged unexpected error(s) after the last test:\n` +
            bad.map((e) => `- [${e.tag ?? 'no tag'}] ${e.msg}`).join('\n'),
        );
      }
    },
  };
}

export interface StorySpec {
  readonly id: string;
  readonly dependsOn?: readonly string[];
  readonly title?: string;
  readonly description?: string;
}

/** An issue body with a plan block; each story owns `src/<id>`. */
export function planBody(stories: readonly StorySpec[], prose = 'The checkout epic.'): string {
  const yaml = stories
    .map((s) =>
      [
        `  - id: ${s.id}`,
        `    title: ${JSON.stringify(s.title ?? `Build ${s.id}`)}`,
        `    description: ${JSON.stringify(s.description ?? `Implement ${s.id}.`)}`,
        `    owns: [src/${s.id}]`,
        ...(s.dependsOn && s.dependsOn.length > 0
          ? [`    dependsOn: [${s.dependsOn.join(', ')}]`]
          : []),
      ].join('\n'),
    )
    .join('\n');
  return `${prose}\n\n\`\`\`epicflow\nstories:\n${yaml}\n\`\`\`\n`;
}

/** Dispatches of the story workflow as `story#attempt`, in order. */
export function dispatched(gh: GitHubDouble, epic = 1): string[] {
  return gh.state
    .dispatches(OWNER, REPO)
    .filter((d) => d.inputs['epic'] === String(epic))
    .map((d) => `${String(d.inputs['story'])}#${String(d.inputs['attempt'])}`);
}

export function dispatchOf(
  gh: GitHubDouble,
  epic: number,
  story: string,
  attempt = 1,
): DispatchRec {
  const d = gh.state
    .dispatches(OWNER, REPO)
    .find(
      (x) =>
        x.inputs['epic'] === String(epic) &&
        x.inputs['story'] === story &&
        x.inputs['attempt'] === String(attempt),
    );
  if (!d) throw new Error(`no dispatch of ${story}#${attempt}: ${dispatched(gh, epic).join(', ')}`);
  return d;
}

/** The story job succeeds: branch, commit, merge with trailer, record done, run completed. */
export async function completeStory(
  w: AppWorld,
  epic: number,
  story: string,
  attempt = 1,
  /** Runs after the job's own writes, right before its run completes (e.g. to add faults). */
  beforeComplete: () => void = () => undefined,
  /** The file the story commits (`src/<story>/index-<attempt>.ts` exporting the attempt by default). */
  file: { readonly path: string; readonly content: string } = {
    path: `src/${story}/index-${attempt}.ts`,
    content: `export const ${story.replace(/-/g, '_')} = ${attempt};\n`,
  },
): Promise<string> {
  const { gh, bot } = w;
  await gh.idle();
  const before = restRequests(gh);
  const octokit = octokitFor(gh, bot.token);
  const base = { owner: OWNER, repo: REPO };
  const epicBranch = `epic/${epic}`;
  const branch = `story/${epic}/${story}`;
  const head = await gh.state.ref(OWNER, REPO, epicBranch);
  if (head === undefined) throw new Error(`${epicBranch} does not exist`);
  const exists = await gh.state.ref(OWNER, REPO, branch);
  if (exists === undefined) {
    await octokit.rest.git.createRef({ ...base, ref: `refs/heads/${branch}`, sha: head });
  }
  await octokit.rest.repos.createOrUpdateFileContents({
    ...base,
    path: file.path,
    branch,
    message: `${story}: attempt ${attempt}`,
    content: Buffer.from(file.content).toString('base64'),
  });
  const { data } = await octokit.rest.repos.merge({
    ...base,
    base: epicBranch,
    head: branch,
    commit_message: `Merge story ${story} into ${epicBranch}\n\nEpicflow-Story: ${story}\nEpicflow-Executor: codex`,
  });
  const mergeCommit = data.sha;
  await writeRecord(w, epic, story, (r) => ({
    ...r,
    status: 'done',
    mergeCommit,
    finishedAt: new Date().toISOString(),
    executors: ['codex'],
    usage: [
      {
        executor: 'codex',
        model: 'gpt-5',
        tokens: { input: 1000, cachedInput: 0, cacheWrite: 0, output: 200 },
        measured: true,
        costUsd: 0.01,
        costSource: 'cli',
      },
    ],
  }));
  w.jobRequests.rest += restRequests(gh) - before;
  beforeComplete();
  gh.act.completeWorkflowRun(dispatchOf(gh, epic, story, attempt).runId, 'success');
  await gh.idle();
  return mergeCommit;
}

/** The story job fails: it records the failure, then its run ends. */
export async function failStory(
  w: AppWorld,
  epic: number,
  story: string,
  attempt = 1,
  reason = 'gates failed: npm test',
): Promise<void> {
  await w.gh.idle();
  const before = restRequests(w.gh);
  await writeRecord(w, epic, story, (r) => ({
    ...r,
    status: 'failed',
    reason,
    finishedAt: new Date().toISOString(),
    executors: ['codex'],
  }));
  w.jobRequests.rest += restRequests(w.gh) - before;
  w.gh.act.completeWorkflowRun(dispatchOf(w.gh, epic, story, attempt).runId, 'failure');
  await w.gh.idle();
}

/** REST requests the double answered so far. */
export function restRequests(gh: GitHubDouble): number {
  return Object.values(gh.stats.rest).reduce((a, b) => a + b, 0);
}

/** Rewrites a story record on the state branch, as a story job (or a test) would. */
export async function writeRecord(
  w: AppWorld,
  epic: number,
  story: string,
  fn: (r: StoryRecord) => StoryRecord,
): Promise<void> {
  const store = new GitHubStateStore({ repo: w.repo, epic: String(epic), sleep: async () => {} });
  await store.update(story, (current) => {
    if (current === null) throw new Error(`no record for ${story}`);
    return fn(current);
  });
}

export async function readRecord(
  w: AppWorld,
  epic: number,
  story: string,
): Promise<StoryRecord | undefined> {
  const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
  return (await store.read(story))?.record;
}

/** Comments on an issue, as `[author, body]`. */
export function commentsOn(gh: GitHubDouble, number: number): { author: string; body: string }[] {
  return gh.state.comments(OWNER, REPO, number).map((c) => ({ author: c.author, body: c.body }));
}

/** An epic issue by alice, labelled by alice; resolves once the App answered everything. */
export async function startEpic(w: AppWorld, title: string, body: string): Promise<number> {
  const issue = w.gh.seed.issue({ owner: OWNER, repo: REPO, title, body, author: 'alice' });
  w.gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: issue.number, label: 'epic' });
  await w.gh.idle();
  return issue.number;
}

export async function say(
  w: AppWorld,
  number: number,
  body: string,
  login = 'alice',
): Promise<void> {
  w.gh.act.comment(login, { owner: OWNER, repo: REPO, number, body });
  await w.gh.idle();
}

/** Comments by epicflow on an issue. */
export function botComments(w: AppWorld, number: number): string[] {
  return commentsOn(w.gh, number)
    .filter((c) => c.author === 'epicflow[bot]')
    .map((c) => c.body);
}

/** Commits the config file on the default branch, as a person would. */
export async function writeConfig(w: AppWorld, text: string): Promise<void> {
  const octokit = octokitFor(w.gh, w.alice.token);
  const path = '.github/epicflow.yml';
  let sha: string | undefined;
  try {
    const { data } = await octokit.rest.repos.getContent({ owner: OWNER, repo: REPO, path });
    sha = (data as { sha?: string }).sha;
  } catch {
    sha = undefined;
  }
  await octokit.rest.repos.createOrUpdateFileContents({
    owner: OWNER,
    repo: REPO,
    path,
    message: 'epicflow config',
    content: Buffer.from(text).toString('base64'),
    ...(sha === undefined ? {} : { sha }),
  });
}

/** A story job's own writes (branch, commit, merge, record done), its run not completed yet. */
export async function storyWrites(w: AppWorld, epic: number, story: string): Promise<void> {
  const octokit = octokitFor(w.gh, w.bot.token);
  const base = { owner: OWNER, repo: REPO };
  const branch = `story/${epic}/${story}`;
  const head = (await w.gh.state.ref(OWNER, REPO, `epic/${epic}`)) ?? '';
  await octokit.rest.git.createRef({ ...base, ref: `refs/heads/${branch}`, sha: head });
  await octokit.rest.repos.createOrUpdateFileContents({
    ...base,
    path: `src/${story}/done.ts`,
    branch,
    message: story,
    content: Buffer.from(`export const ${story} = 1;\n`).toString('base64'),
  });
  const { data } = await octokit.rest.repos.merge({
    ...base,
    base: `epic/${epic}`,
    head: branch,
    commit_message: `Merge story ${story} into epic/${epic}\n\nEpicflow-Story: ${story}\nEpicflow-Executor: codex`,
  });
  await writeRecord(w, epic, story, (r) => ({
    ...r,
    status: 'done',
    mergeCommit: data.sha,
    finishedAt: new Date().toISOString(),
    executors: ['codex'],
  }));
}

/**
 * The story job's reconcile after its story (`src/jobs/github/story-kind.ts`), in this process with
 * the test's own repository port (another cache than the App's, as a job's).
 */
export function jobDecision(
  w: AppWorld,
  epic: number,
  story: string,
  options: { readonly sleep?: (ms: number) => Promise<void>; readonly now?: () => Date } = {},
): ReturnType<typeof handleEpicEvent> {
  const run = dispatchOf(w.gh, epic, story);
  const self = { id: w.repoId, fullName: `${OWNER}/${REPO}` };
  return handleEpicEvent(
    {
      repo: w.repo,
      defaultBranch: 'main',
      storyWorkflow: 'epicflow-story.yml',
      ...options,
      createsSubIssues: false,
    },
    {
      kind: 'workflow-run',
      runId: run.runId,
      workflowPath: STORY_WORKFLOW_PATH,
      displayTitle: runTitle({ epic, story, attempt: 1 }),
      conclusion: 'success',
      origin: {
        event: 'workflow_dispatch',
        path: STORY_WORKFLOW_PATH,
        headBranch: run.ref,
        repository: self,
        headRepository: self,
      },
      repositoryId: w.repoId,
    },
  );
}
