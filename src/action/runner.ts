/**
 * What the Action needs from the runner, read once: the repository, the
 * GitHub URLs, the job's folders, and the environment children may start
 * from — with every token the runner or the workflow put there taken out.
 */
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

/** The environment without the Action's inputs and the known credential variables. */
export function childEnvironment(env: NodeJS.ProcessEnv, token: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (name.startsWith('INPUT_') || CREDENTIAL_NAMES.includes(name)) continue;
    if (name.startsWith('GIT_CONFIG_')) continue;
    // Whatever it is called, a variable holding the token stays out.
    if (token !== '' && value.includes(token)) continue;
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
    throttle: env['EPICFLOW_GITHUB_THROTTLE'] !== 'off',
  };
}
