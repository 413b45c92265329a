/**
 * What the Action needs from the runner, read once: the repository, the
 * GitHub URLs, the job's folders, and the environment children may start
 * from — with every token the runner or the workflow put there taken out.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { EpicflowError } from '../core/errors.js';

export interface RunnerContext {
  readonly owner: string;
  readonly repo: string;
  readonly serverUrl: string;
  readonly apiUrl: string;
  readonly workspace: string;
  readonly tempDir: string;
  /** `GITHUB_RUN_ID`, when the runner set it. */
  readonly runId: number | undefined;
  /** `.github/workflows/<file>` of the running workflow (from `GITHUB_WORKFLOW_REF`). */
  readonly workflowPath: string | undefined;
  readonly eventName: string | undefined;
  readonly eventPath: string | undefined;
  /** `GITHUB_REF_NAME`: the branch the workflow runs from. */
  readonly refName: string | undefined;
  /** `GITHUB_REPOSITORY_ID`, when the runner set it. */
  readonly repositoryId: number | undefined;
  /**
   * Octokit's throttling and retries (GitHub's secondary limits space writes a
   * second apart). `EPICFLOW_GITHUB_THROTTLE=off` turns them off for a GitHub
   * Enterprise host without secondary limits, or a test double.
   */
  readonly throttle: boolean;
}

/** Variables that carry credentials; never handed to an agent, a gate or setup. */
const CREDENTIAL_NAMES = [
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'GH_ENTERPRISE_TOKEN',
  'GITHUB_ENTERPRISE_TOKEN',
  'ACTIONS_RUNTIME_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_URL',
  'ACTIONS_RESULTS_URL',
  'ACTIONS_RUNTIME_URL',
];

/**
 * The environment without the Action's inputs, the known credential variables
 * and any variable holding one of `secrets` (the token, the App's private key).
 */
export function childEnvironment(
  env: NodeJS.ProcessEnv,
  secrets: readonly string[],
): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (name.startsWith('INPUT_') || CREDENTIAL_NAMES.includes(name)) continue;
    if (name.startsWith('GIT_CONFIG_')) continue;
    // Whatever it is called, a variable holding a secret stays out.
    if (secrets.some((s) => s !== '' && value.includes(s))) continue;
    out[name] = value;
  }
  return out;
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new EpicflowError('usage', `${name} is not set`, {
      details: ['the epicflow action runs inside a GitHub Actions job, which sets it'],
    });
  }
  return value;
}

export function readRunner(env: NodeJS.ProcessEnv): RunnerContext {
  const repository = required(env, 'GITHUB_REPOSITORY');
  const [owner, repo, ...rest] = repository.split('/');
  if (owner === undefined || repo === undefined || rest.length > 0 || owner === '' || repo === '') {
    throw new EpicflowError(
      'usage',
      `GITHUB_REPOSITORY must be owner/name, got ${JSON.stringify(repository)}`,
    );
  }
  const serverUrl = (env['GITHUB_SERVER_URL'] ?? 'https://github.com').replace(/\/+$/, '');
  const apiUrl = (env['GITHUB_API_URL'] ?? 'https://api.github.com').replace(/\/+$/, '');
  const runId = Number(env['GITHUB_RUN_ID']);
  const repositoryId = Number(env['GITHUB_REPOSITORY_ID']);
  const workflowRef = env['GITHUB_WORKFLOW_REF'] ?? '';
  const m = /^[^/]+\/[^/]+\/(.+?)@/.exec(workflowRef);
  return {
    owner,
    repo,
    serverUrl,
    apiUrl,
    workspace: env['GITHUB_WORKSPACE'] ?? process.cwd(),
    tempDir: required(env, 'RUNNER_TEMP'),
    runId: Number.isSafeInteger(runId) && runId > 0 ? runId : undefined,
    workflowPath: m?.[1],
    eventName: env['GITHUB_EVENT_NAME'],
    eventPath: env['GITHUB_EVENT_PATH'],
    refName: env['GITHUB_REF_NAME'] || undefined,
    repositoryId: Number.isSafeInteger(repositoryId) && repositoryId > 0 ? repositoryId : undefined,
    throttle: env['EPICFLOW_GITHUB_THROTTLE'] !== 'off',
  };
}

const EventRepository = z.object({ repository: z.object({ default_branch: z.string().min(1) }) });

/**
 * The repository's default branch as the event payload names it (every event
 * of a repository carries `repository.default_branch`): spares the orchestrator
 * a read. Undefined when the payload does not say; it is read from GitHub then.
 */
export function defaultBranchIn(payload: unknown): string | undefined {
  const parsed = EventRepository.safeParse(payload);
  return parsed.success ? parsed.data.repository.default_branch : undefined;
}

/** `defaultBranchIn` of the payload file the runner wrote (`GITHUB_EVENT_PATH`), if any. */
export async function readDefaultBranch(runner: RunnerContext): Promise<string | undefined> {
  if (runner.eventPath === undefined || runner.eventPath === '') return undefined;
  try {
    return defaultBranchIn(JSON.parse(await readFile(runner.eventPath, 'utf8')) as unknown);
  } catch {
    return undefined; // no payload to read: the orchestrator asks GitHub
  }
}
