/**
 * The Action under test: the BUNDLE (`dist/index.js` built into a temp dir)
 * run as a process with the environment a runner gives it, against the GitHub
 * double (REST and git over smart HTTP). Epics are started by the real
 * orchestrator entry, the same one the App calls on a label.
 */
import { agentScript } from './agents.js';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  chmod,
  copyFile,
  cp,
  mkdir,
  mkdtemp,
  readFile,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createOctokit } from '../../../src/adapters/github/client.js';
import { GitHubRepo } from '../../../src/adapters/github/repo.js';
import { handleEpicEvent } from '../../../src/orchestrator/index.js';
import {
  startGitHubDouble,
  type GitHubDouble,
  type SeededUser,
} from '../../github-double/index.js';

const run = promisify(execFile);
export const OWNER = 'acme';
export const REPO = 'shop';
const here = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(here, '../../..');
export const CODER = agentScript('coder.mjs');

const gitEnv = {
  PATH: process.env['PATH'] ?? '',
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Runner',
  GIT_AUTHOR_EMAIL: 'runner@example.com',
  GIT_COMMITTER_NAME: 'Runner',
  GIT_COMMITTER_EMAIL: 'runner@example.com',
};

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', args, { cwd, env: gitEnv });
  return stdout.trim();
}

/**
 * The epic branch's merges on GitHub, newest first: for each, the values of the trailers
 * `keys` (`Epicflow-Story` by default), in that order.
 */
export async function epicMergeTrailers(
  w: Pick<ActionWorld, 'gh'>,
  epic: number,
  keys: readonly string[] = ['Epicflow-Story'],
): Promise<string[][]> {
  const head = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
  const format = keys.map((k) => `%(trailers:key=${k},valueonly,separator=)`).join('%x00');
  const log = await git(
    w.gh.state.repoDir(OWNER, REPO),
    'log',
    '--first-parent',
    '--merges',
    `--format=${format}`,
    head ?? '',
  );
  return log
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.split('\0').map((x) => x.trim()));
}

/**
 * The bundle the way a release builds it, in `dir`; returns the path of its entry file.
 * With `EPICFLOW_ACTION_BUNDLE` set to a built `dist/` folder, that bundle is copied in:
 * the release runs these tests against the very `dist/` it is about to commit. Else the
 * bundle built once per test run (global-setup.ts) is copied, or, when the tests run
 * without that setup, it is built on the spot. `module`: `run.js`, exporting `run()`
 * (`--module`, not part of a release).
 */
export async function buildBundle(dir: string, form: 'main' | 'module' = 'main'): Promise<string> {
  const file = form === 'main' ? 'index.js' : 'run.js';
  const release = process.env['EPICFLOW_ACTION_BUNDLE'];
  const built = process.env['EPICFLOW_TEST_BUNDLE_DIR'];
  if (form === 'main' && release !== undefined && release !== '') {
    await mkdir(dir, { recursive: true });
    for (const name of [file, 'package.json']) {
      await copyFile(join(resolve(release), name), join(dir, name));
    }
  } else if (built !== undefined) {
    await mkdir(dir, { recursive: true });
    for (const name of [file, 'package.json']) {
      await copyFile(join(built, form, name), join(dir, name));
    }
  } else {
    const flags = form === 'main' ? [] : ['--module'];
    await run(process.execPath, [join(ROOT, 'scripts/build-action.mjs'), dir, ...flags], {
      cwd: ROOT,
    });
  }
  return join(dir, file);
}

export interface WorldOptions {
  /** Agents that must reach the coder before any of them continues (parallel jobs). */
  readonly barrier?: number;
  /** The config's gates; `detected`: none written, the repository's files say which. */
  readonly gates?: readonly string[] | 'detected';
  /** The whole `.github/epicflow.yml`, given the dump folder (instead of the default roster). */
  readonly config?: (dumps: string) => string;
  /** More files of the repository, by path. */
  readonly files?: Readonly<Record<string, string>>;
}

export interface ActionWorld {
  readonly gh: GitHubDouble;
  readonly bot: SeededUser;
  readonly alice: SeededUser;
  /** The repository as the bot (state reads in assertions). */
  readonly repo: GitHubRepo;
  /** The repository's id (`GITHUB_REPOSITORY_ID` of the jobs), when the world seeded it. */
  readonly repoId?: number;
  readonly dir: string;
  /** Where the scripted coder dumps what it saw. */
  readonly dumps: string;
  close(): Promise<void>;
}

export function configText(dumps: string, options: WorldOptions): string {
  const command = [
    'node',
    CODER,
    dumps,
    ...(options.barrier === undefined ? [] : [String(options.barrier)]),
  ];
  return [
    'executors:',
    '  - id: scripted',
    '    harness: command',
    `    command: ${JSON.stringify(command)}`,
    '    slots: 4',
    // `detected`: the config leaves them out, for the repository's files to say.
    ...(options.gates === 'detected'
      ? []
      : [`gates: ${JSON.stringify(options.gates ?? ['sh check.sh'])}`]),
    'fixRounds: 0',
    '',
  ].join('\n');
}

/**
 * A gate (`sh check.sh`): every story module must export `story`. A shell script, not a Node
 * one: it runs in every gated job (8 ms of CPU a run against 113 ms).
 */
export const CHECK_SCRIPT = [
  'n=0',
  'for d in src/*/; do',
  '  [ -d "$d" ] || continue',
  '  grep -q \'export const story\' "${d}index.js" 2>/dev/null || { echo "${d%/}: no story export" >&2; exit 1; }',
  '  n=$((n + 1))',
  'done',
  'echo "ok $n stories"',
  '',
].join('\n');

export async function startWorld(options: WorldOptions = {}): Promise<ActionWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'epicflow-action-'));
  const dumps = await agentDumps(dir);
  const gh = await startGitHubDouble();
  const app = gh.seed.app({ id: 777, slug: 'epicflow' });
  const bot = gh.seed.user({ login: app.botLogin, type: 'Bot', permission: 'admin' });
  const alice = gh.seed.user({ login: 'alice', permission: 'write' });
  const seeded = await gh.seed.repo({
    owner: OWNER,
    name: REPO,
    files: {
      'README.md': '# shop\n',
      'check.sh': CHECK_SCRIPT,
      ...options.files,
      '.github/epicflow.yml': options.config?.(dumps) ?? configText(dumps, options),
      // The template users copy: its `run-name` tells the orchestrator which story a run is.
      '.github/workflows/epicflow-story.yml': await readFile(
        join(here, '../../../examples/workflows/github-token/epicflow-story.yml'),
        'utf8',
      ),
    },
  });
  gh.seed.label({ owner: OWNER, repo: REPO, name: 'epic' });
  const repo = new GitHubRepo({
    owner: OWNER,
    repo: REPO,
    botLogin: app.botLogin,
    octokit: createOctokit({ baseUrl: gh.url, token: bot.token, production: false }),
  });
  return {
    gh,
    bot,
    alice,
    repo,
    repoId: seeded.id,
    dir,
    dumps,
    close: async () => {
      await gh.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** An issue body with a plan block; each story owns `src/<id>` unless it says what it owns. */
export function planBody(
  stories: readonly { id: string; dependsOn?: readonly string[]; owns?: readonly string[] }[],
): string {
  const yaml = stories
    .map((s) =>
      [
        `  - id: ${s.id}`,
        `    title: "Build ${s.id}"`,
        `    description: "Implement ${s.id}."`,
        `    owns: [${(s.owns ?? [`src/${s.id}`]).join(', ')}]`,
        ...(s.dependsOn !== undefined && s.dependsOn.length > 0
          ? [`    dependsOn: [${s.dependsOn.join(', ')}]`]
          : []),
      ].join('\n'),
    )
    .join('\n');
  return `The checkout epic.\n\n\`\`\`epicflow\nstories:\n${yaml}\n\`\`\`\n`;
}

/** Alice opens and labels an epic; the orchestrator (as the App would) dispatches the ready stories. */
export async function startEpic(w: ActionWorld, body: string): Promise<number> {
  const issue = w.gh.seed.issue({
    owner: OWNER,
    repo: REPO,
    title: 'Checkout',
    body,
    labels: ['epic'],
    author: 'alice',
  });
  await handleEpicEvent(
    { repo: w.repo },
    {
      kind: 'labeled',
      issue: {
        number: issue.number,
        title: issue.title,
        body,
        labels: ['epic'],
        isPullRequest: false,
      },
      label: 'epic',
      sender: { login: 'alice', type: 'User' },
    },
  );
  return issue.number;
}

/** The dispatch of a story (its run id is what the runner gives the job as GITHUB_RUN_ID). */
export function dispatchOf(
  w: ActionWorld,
  epic: number,
  story: string,
  attempt = 1,
): { runId: number } {
  const d = w.gh.state
    .dispatches(OWNER, REPO)
    .find(
      (x) =>
        x.inputs['epic'] === String(epic) &&
        x.inputs['story'] === story &&
        x.inputs['attempt'] === String(attempt),
    );
  if (d === undefined) throw new Error(`no dispatch of ${story}#${attempt}`);
  return { runId: d.runId };
}

export function dispatched(w: ActionWorld, epic: number): string[] {
  return w.gh.state
    .dispatches(OWNER, REPO)
    .filter((d) => d.inputs['epic'] === String(epic))
    .map((d) => `${String(d.inputs['story'])}#${String(d.inputs['attempt'])}`);
}

/**
 * A job checkout as actions/checkout leaves it with persisted credentials: a
 * clean remote URL and the token as an `extraheader`, both in the local config
 * (up to v5) and in an included file (v6).
 */
export async function checkout(w: ActionWorld, name: string): Promise<string> {
  const dest = join(w.dir, 'work', name);
  await mkdir(join(w.dir, 'work'), { recursive: true });
  await git(w.dir, 'clone', '--quiet', w.gh.gitUrl(OWNER, REPO, w.bot.token), dest);
  await git(dest, 'remote', 'set-url', 'origin', `${w.gh.url}/${OWNER}/${REPO}.git`);
  const basic = Buffer.from(`x-access-token:${w.bot.token}`).toString('base64');
  await git(
    dest,
    'config',
    '--local',
    `http.${w.gh.url}/.extraheader`,
    `AUTHORIZATION: basic ${basic}`,
  );
  // actions/checkout v6 writes them to a file of their own, included from the local config.
  const credentials = join(w.dir, 'work', `${name}-credentials.config`);
  await writeFile(
    credentials,
    `[http "${w.gh.url}/"]\n\textraheader = AUTHORIZATION: basic ${basic}\n`,
  );
  await git(dest, 'config', '--local', `includeIf.gitdir:${dest}/.git/.path`, credentials);
  return dest;
}

export interface JobRun {
  /** A story's two jobs, each as the runner saw it (a run of one job has neither). */
  readonly work?: JobRun;
  readonly publish?: JobRun;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly outputs: Record<string, string>;
  readonly summary: string;
}

/** Parses `GITHUB_OUTPUT` (`name<<delimiter` … `delimiter`, as @actions/core writes it). */
function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^([^<=]+)<<(.+)$/.exec(lines[i] ?? '');
    if (m === null) continue;
    const [, name = '', delimiter = ''] = m;
    const value: string[] = [];
    for (i += 1; i < lines.length && lines[i] !== delimiter; i++) value.push(lines[i] ?? '');
    out[name] = value.join('\n');
  }
  return out;
}

/** A step of a job: what the runner is told about it. */
export interface JobSpec {
  readonly name: string;
  readonly workspace: string;
  readonly inputs: Readonly<Record<string, string>>;
  readonly runId?: number;
  readonly env?: Readonly<Record<string, string>>;
  /** GitHub's write pacing, as in production (slow: a second per write). */
  readonly throttle?: boolean;
}

/** The environment a runner gives the step, and the files it reads back after it. */
export interface PreparedJob {
  readonly env: Readonly<Record<string, string>>;
  readonly outputFile: string;
  readonly summaryFile: string;
}

/** Lays out the job's folder (`RUNNER_TEMP`, empty `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY`) and its environment. */
export async function prepareJob(w: ActionWorld, job: JobSpec): Promise<PreparedJob> {
  const jobDir = join(w.dir, 'jobs', job.name);
  // The step's file commands where the runner keeps them: in its temp folder.
  const commands = join(jobDir, 'temp', '_runner_file_commands');
  await mkdir(commands, { recursive: true });
  const outputFile = join(commands, 'set_output');
  const summaryFile = join(commands, 'step_summary');
  await writeFile(outputFile, '');
  await writeFile(summaryFile, '');
  // The job's system temp folder (a runner's is /tmp): the job makes its own folder there,
  // which a job killed with SIGKILL cannot remove; here it goes with the world.
  const jobTmp = join(jobDir, 'tmp');
  await mkdir(jobTmp, { recursive: true });
  await chmod(jobTmp, 0o1777);
  const env: Record<string, string> = {
    ...gitEnv,
    GITHUB_ACTIONS: 'true',
    CI: 'true',
    GITHUB_REPOSITORY: `${OWNER}/${REPO}`,
    GITHUB_SERVER_URL: w.gh.url,
    GITHUB_API_URL: w.gh.url,
    GITHUB_WORKSPACE: job.workspace,
    RUNNER_TEMP: join(jobDir, 'temp'),
    TMPDIR: jobTmp,
    GITHUB_OUTPUT: outputFile,
    GITHUB_STEP_SUMMARY: summaryFile,
    GITHUB_EVENT_NAME: 'workflow_dispatch',
    GITHUB_REF_NAME: 'main',
    ...(w.repoId === undefined ? {} : { GITHUB_REPOSITORY_ID: String(w.repoId) }),
    GITHUB_WORKFLOW_REF: `${OWNER}/${REPO}/.github/workflows/epicflow-story.yml@refs/heads/main`,
    // What a workflow typically also exposes; none of it may reach the agent.
    GITHUB_TOKEN: w.bot.token,
    ...(job.runId === undefined ? {} : { GITHUB_RUN_ID: String(job.runId) }),
    ...(job.throttle === true ? {} : { EPICFLOW_GITHUB_THROTTLE: 'off' }),
    ...job.env,
  };
  // The scripted agents report to the test through a dump folder beside their tree, which
  // the kernel sandbox hides: a test that runs the sandbox says `sandbox: 'true'`.
  env['INPUT_SANDBOX'] = 'false';
  for (const [name, value] of Object.entries(job.inputs))
    env[`INPUT_${name.toUpperCase()}`] = value;
  return { env, outputFile, summaryFile };
}

/** The step's result as the runner sees it: exit code, log, outputs and summary. */
export async function jobResult(
  prepared: PreparedJob,
  run: { readonly code: number | null; readonly stdout: string; readonly stderr: string },
): Promise<JobRun> {
  return {
    ...run,
    outputs: parseOutputs(await readFile(prepared.outputFile, 'utf8')),
    summary: await readFile(prepared.summaryFile, 'utf8'),
  };
}

/** Runs the bundle as the runner would run `uses: ./` with these inputs: one step of one job. */
export async function runStep(w: ActionWorld, bundle: string, job: StepSpec): Promise<JobRun> {
  return runBundle(w, bundle, job);
}

type StepSpec = JobSpec & {
  /** Called with the job's process once started (to kill it, as a cancelled runner would). */
  readonly onSpawn?: (child: ChildProcess) => void;
  /** Called with a story's publish job's process once started (its work job's is `onSpawn`'s). */
  readonly onPublishSpawn?: (child: ChildProcess) => void;
  /** The Node binary the runner starts the bundle with (default: the one running the tests). */
  readonly node?: string;
  /**
   * Node options before the bundle's path (e.g. `--import` a probe); when given, the job does
   * not preload the tests' starter (see `jobsStartFromNode`). Not inherited by children.
   */
  readonly nodeArgs?: readonly string[];
  /** The runner's user, when not the tests' own (a self-hosted runner without root). */
  readonly asUser?: { readonly uid: number; readonly gid: number };
};

/**
 * Whether this test file's jobs start their processes as the Action does on a runner, each a
 * fork of the job's Node process (`startJobProcessesFromNode`). Otherwise a job preloads the
 * tests' starter (test/support/preload-starter.ts): its processes start from a small helper
 * process, as the workers' do (docs/testing.md, "Processes started from a small helper").
 */
let jobsStartFromNode = false;

/** This test file's jobs start their processes with Node's own `spawn`, as on a runner. */
export function startJobProcessesFromNode(): void {
  jobsStartFromNode = true;
}

async function runBundle(w: ActionWorld, bundle: string, job: StepSpec): Promise<JobRun> {
  const prepared = await prepareJob(w, job);
  if (job.asUser !== undefined) {
    // The runner's own folders are its own.
    await run('chown', [
      '-R',
      `${job.asUser.uid}:${job.asUser.gid}`,
      join(w.dir, 'jobs', job.name),
    ]);
  }
  const preload = process.env['EPICFLOW_TEST_JOB_PRELOAD'];
  const nodeArgs =
    job.nodeArgs ?? (jobsStartFromNode || preload === undefined ? [] : ['--import', preload]);
  const child = spawn(job.node ?? process.execPath, [...nodeArgs, bundle], {
    cwd: job.workspace,
    env: prepared.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(job.asUser === undefined ? {} : { uid: job.asUser.uid, gid: job.asUser.gid }),
  });
  job.onSpawn?.(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  return jobResult(prepared, { code, stdout, stderr });
}

/** A read-only token of the world's repository: what a work job's `GITHUB_TOKEN` is. */
const readers = new WeakMap<GitHubDouble, string>();
export function readToken(w: ActionWorld): string {
  let token = readers.get(w.gh);
  if (token === undefined) {
    token = w.gh.seed.user({ login: 'epicflow-reader', permission: 'read' }).token;
    readers.set(w.gh, token);
  }
  return token;
}

/**
 * Whether the story workflow runs this job as a work job and a publish job: every kind (a
 * story, a planning attempt `_plan`, a retro `_retro`, a landing `land-<n>`) does.
 */
function splitJob(inputs: Readonly<Record<string, string>>): boolean {
  return inputs['mode'] === 'story' && inputs['phase'] === undefined && inputs['story'] !== '';
}

/** The credential inputs and variables a work job never gets. */
const WRITE_INPUTS = ['github-token', 'app-id', 'app-private-key'];

/**
 * Runs a job of the story workflow as the runner would: a story, a planning attempt, a
 * retro or a landing as its two jobs, as the workflow template has them — the work job (a read-only token, the checkout, its result
 * written into its temp folder, which is uploaded even when the step failed or was killed)
 * and the publish job (no checkout, the downloaded result, the credentials the test gave).
 * The run's log, outputs and summary are both jobs' together (the publish job's outputs win).
 */
export async function runJob(w: ActionWorld, bundle: string, job: StepSpec): Promise<JobRun> {
  if (!splitJob(job.inputs)) return runBundle(w, bundle, job);
  const inputs: Record<string, string> = { ...job.inputs, phase: 'work' };
  for (const name of WRITE_INPUTS) delete inputs[name];
  inputs['github-token'] = readToken(w);
  const work = await runBundle(w, bundle, {
    ...job,
    inputs,
    env: { ...job.env, GITHUB_TOKEN: readToken(w) },
  });
  const result = join(w.dir, 'jobs', job.name, 'temp', 'epicflow-result');
  const publishName = `${job.name}-publish`;
  const artifact = join(w.dir, 'jobs', publishName, 'artifact');
  await rm(artifact, { recursive: true, force: true });
  await mkdir(dirname(artifact), { recursive: true });
  // The upload and download steps: whatever the work job left, nothing when it left nothing.
  await cp(result, artifact, { recursive: true }).catch(() => undefined);
  const empty = join(w.dir, 'jobs', publishName, 'workspace');
  await mkdir(empty, { recursive: true });
  const { onSpawn: _o, nodeArgs: _n, onPublishSpawn, ...rest } = job;
  const publish = await runBundle(w, bundle, {
    ...rest,
    ...(onPublishSpawn === undefined ? {} : { onSpawn: onPublishSpawn }),
    name: publishName,
    workspace: empty,
    inputs: {
      ...job.inputs,
      phase: 'publish',
      result: artifact,
      'work-outcome': work.code === 0 ? 'success' : work.code === null ? 'cancelled' : 'failure',
    },
  });
  return {
    code: work.code !== 0 ? work.code : publish.code,
    stdout: `${work.stdout}${publish.stdout}`,
    stderr: `${work.stderr}${publish.stderr}`,
    outputs: { ...work.outputs, ...publish.outputs },
    summary: `${work.summary}${publish.summary}`,
    work,
    publish,
  };
}

export function storyInputs(
  w: ActionWorld,
  epic: number,
  story: string,
  attempt = 1,
): Record<string, string> {
  return {
    mode: 'story',
    epic: String(epic),
    story,
    attempt: String(attempt),
    'github-token': w.bot.token,
    'bot-login': 'epicflow[bot]',
  };
}

/**
 * The folder the scripted agent dumps what it saw into: writable by anyone, because the
 * agent runs as the job's agent user, not as the tests' user.
 */
export async function agentDumps(dir: string): Promise<string> {
  const dumps = join(dir, 'dumps');
  await mkdir(dumps, { mode: 0o1777, recursive: true });
  await chmod(dumps, 0o1777);
  // The test's own folders above it let others pass (not list): the agent is handed
  // nothing of them, so nothing else opens the way.
  for (let d = dir; d !== tmpdir() && d !== dirname(d); d = dirname(d)) {
    const { mode } = await stat(d);
    if ((mode & 0o001) === 0) await chmod(d, (mode & 0o7777) | 0o001);
  }
  return dumps;
}
