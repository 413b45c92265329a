/**
 * What every job of the story workflow reads first on GitHub, whatever it runs (a
 * story, a planning attempt, a retro, a landing): the epic's view in one request (the
 * configuration on the default branch, the issue with its sub-issues, every record
 * with its blob sha), the configuration parsed, and the epic's state store. A job
 * kind's recipe (story-job.ts, plan-job.ts, retro-job.ts, land-job.ts) then checks
 * its own record against `jobStaleness` and runs; a refusal is recorded one way
 * (job-refusal.ts).
 */
import { GitHubStateStore, type EpicView, type GitHubRepo } from '../adapters/github/index.js';
import { statusOf } from '../adapters/github/errors.js';
import { TOKEN_REFUSED_HINT } from '../adapters/git/remote-git.js';
import { parseConfig } from '../core/config/index.js';
import type { EpicflowConfig } from '../core/config/types.js';
import { EpicflowError } from '../core/errors.js';
import type { Plan } from '../core/model.js';
import { loadPlan, readView } from './load.js';

/** What a job is given to open itself. */
interface JobOpening {
  readonly repo: GitHubRepo;
  readonly epic: number;
  /** Path of the configuration on the default branch. */
  readonly configPath: string;
  /** The repository's default branch when the caller knows it (spares a read). */
  readonly defaultBranch?: string | undefined;
}

/** A job opened: everything each kind reads before it checks its own record. */
interface OpenedJob {
  readonly defaultBranch: string;
  readonly view: EpicView;
  readonly config: EpicflowConfig;
  readonly issue: NonNullable<EpicView['issue']>;
  readonly store: GitHubStateStore;
}

/** Reads the epic's view and configuration; refuses clearly when either is missing. */
export async function openJob(input: JobOpening): Promise<OpenedJob> {
  const { repo, epic, configPath } = input;
  const defaultBranch = input.defaultBranch ?? (await repo.defaultBranch());
  const view = await readJobView(input, defaultBranch);
  if (view.configText === null) {
    throw new EpicflowError(
      'config',
      `no epicflow config at ${configPath} on the default branch of ${repo.fullName}`,
      { details: ['add the file (see docs/config.md), or point the "config" input at it'] },
    );
  }
  const config = parseConfig(view.configText, configPath);
  if (view.issue === undefined) {
    throw new EpicflowError('github', `GitHub: epic #${epic} of ${repo.fullName} does not exist`);
  }
  const store = new GitHubStateStore({ repo, epic: String(epic), defaultBranch });
  return { defaultBranch, view, config, issue: view.issue, store };
}

/** The view in one request; a token GitHub refuses is said to be one. */
async function readJobView(input: JobOpening, defaultBranch: string): Promise<EpicView> {
  const { repo, epic } = input;
  try {
    return await readView(repo, epic, defaultBranch, input.configPath);
  } catch (e) {
    // `attempt` wraps Octokit's failure: GitHub's status is on its cause.
    if ((statusOf(e) ?? statusOf((e as { cause?: unknown }).cause)) !== 401) throw e;
    throw new EpicflowError(
      'github',
      `GitHub refused the token while reading epic #${epic} of ${repo.fullName}`,
      { details: [TOKEN_REFUSED_HINT], cause: e },
    );
  }
}

/** The epic's plan as every decision reads it (sub-issues included); an invalid one refuses. */
export async function jobPlan(input: JobOpening, opened: OpenedJob): Promise<Plan> {
  const { repo, epic } = input;
  const load = await loadPlan(repo, { number: epic, body: opened.issue.body }, opened.config, {
    subIssues: opened.issue.subIssues,
    configFile: input.configPath,
  });
  if (!load.ok) {
    throw new EpicflowError('plan', `the plan of epic #${epic} is not valid`, {
      details: load.violations.map((v) => `${v.code}: ${v.message}`),
    });
  }
  return load.plan;
}
