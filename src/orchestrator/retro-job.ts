/**
 * One retro attempt in one Actions job (docs/commands.md, `/retro`): the story workflow
 * dispatched with the reserved story `_retro`. As a planning job does, it reads
 * everything from GitHub by id and checks the attempt is the one the retro record names,
 * still active; then one executor with the judge role reads the evidence of the failed
 * and held stories on a read-only worktree of the job checkout, as the job's untrusted
 * user, with no credential in reach. The proposal goes to the retro record
 * (compare-and-swap: a newer attempt wins) and to one comment on the epic issue, a
 * checkbox per fix; the next `/resume` applies the ticked ones (retro.ts).
 */
import { planningGit } from '../composition/planning-tree.js';
import { join } from 'node:path';
import { GitHubStateStore, type GitHubRepo } from '../adapters/github/index.js';
import { Git } from '../adapters/git/index.js';
import type { RemoteGit } from '../adapters/git/remote-git.js';
import type { ExecutorDeps } from '../adapters/executors/index.js';
import type { Untrusted } from '../adapters/process/untrusted.js';
import { executorLookup, resolveExecutorEnvs } from '../composition/epic.js';
import { parseConfig, type EpicflowConfig } from '../core/config/index.js';
import { RETRO_MARKER } from '../core/epic/markers.js';
import { EpicflowError } from '../core/errors.js';
import { parsePlan, planOptionsFor } from '../core/plan/index.js';
import { inlineText } from '../core/report/escape.js';
import {
  renderRetro,
  RETRO_APPLY_WITH_RESUME,
  RETRO_DOC,
  RETRO_TEXTS,
  retroSubjects,
  type RetroDoc,
  type RetroProposal,
} from '../core/retro/index.js';
import { emptyRosterState, pickHelper } from '../core/roster/index.js';
import { proposeRetro, type RetroOutcome } from '../engine/retro.js';
import { readView, stateFromView } from './load.js';
import { readRetroDoc } from './retro.js';

interface RetroJobInput {
  readonly epic: number;
  readonly attempt: number;
  /** Path of the configuration on the default branch. */
  readonly configPath: string;
  readonly defaultBranch?: string | undefined;
  readonly repo: GitHubRepo;
  /** Only its credential scrub: the retro job pushes nothing. */
  readonly remote: Pick<RemoteGit, 'scrubCredentials'>;
  /** The job checkout (`GITHUB_WORKSPACE`) of the default branch. */
  readonly workspace: string;
  /** A scratch folder of the job (`RUNNER_TEMP`). */
  readonly tempDir: string;
  /** The environment executors' `${VAR}` and children start from — without the GitHub token. */
  readonly env: NodeJS.ProcessEnv;
  /** Where the executor runs (a separate user in the Action). */
  readonly untrusted?: Untrusted | undefined;
  readonly onEvent?: (message: string) => void;
  /** The configuration, once read and before any executor runs (the Action masks its secrets). */
  readonly onConfig?: (config: EpicflowConfig) => void;
  readonly now?: () => Date;
  /** How the executor adapters run their CLIs (tests). */
  readonly executorDeps?: Omit<ExecutorDeps, 'sourceEnv' | 'prices' | 'untrusted'> | undefined;
}

export interface RetroJobResult {
  readonly outcome: RetroOutcome;
  readonly doc: RetroDoc;
  /** A newer attempt took over while this one ran: nothing was written. */
  readonly superseded?: boolean;
}

export async function runRetroJob(input: RetroJobInput): Promise<RetroJobResult> {
  const { repo, epic } = input;
  const emit = input.onEvent ?? (() => undefined);
  const now = input.now?.() ?? new Date();
  const defaultBranch = input.defaultBranch ?? (await repo.defaultBranch());
  const view = await readView(repo, epic, defaultBranch, input.configPath);
  if (view.configText === null) {
    throw new EpicflowError(
      'config',
      `no epicflow config at ${input.configPath} on the default branch of ${repo.fullName}`,
    );
  }
  const config = parseConfig(view.configText, input.configPath);
  input.onConfig?.(config);
  if (view.issue === undefined) {
    throw new EpicflowError('github', `GitHub: epic #${epic} of ${repo.fullName} does not exist`);
  }
  const store = new GitHubStateStore({ repo, epic: String(epic), defaultBranch });
  const { doc, sha } = await readRetroDoc(store);
  if (doc === undefined || sha === null) {
    throw new EpicflowError(
      'state',
      `epic #${epic} has no retro record: epicflow did not dispatch this retro job`,
      { details: ['a retro starts with a /retro comment on the epic'] },
    );
  }
  if (doc.attempt !== input.attempt || doc.status !== 'active') {
    throw new EpicflowError(
      'state',
      `the retro of epic #${epic} is at attempt ${doc.attempt} (${doc.status}), not ${input.attempt}: this job is stale`,
    );
  }
  const parsed = parsePlan(view.issue.body, planOptionsFor(config, input.configPath));
  if (!parsed.ok) {
    throw new EpicflowError('plan', `epic #${epic} has no valid plan: a retro looks back on one`);
  }
  const plan = parsed.plan;
  const records = stateFromView(store, plan, view).records;
  const subjects = retroSubjects(plan, new Map(Object.entries(records)));
  const picked = pickHelper(config.executors, emptyRosterState(), {
    role: 'judge',
    preferred: config.judge?.executor,
    avoid: [],
    now,
  });
  if (picked === null) throw new EpicflowError('config', RETRO_TEXTS.noJudge);
  const executor = picked.executor;

  const removed = await input.remote.scrubCredentials();
  if (removed.length > 0) {
    emit(`removed credentials from the checkout's git config: ${removed.join(', ')}`);
  }
  const git = await Git.open(input.workspace);
  const base = await git.revParse('HEAD');
  if (base === null) throw new EpicflowError('git', 'the job checkout has no HEAD commit');
  const folder = join(input.tempDir, 'epicflow', String(epic), 'retro');
  const treePath = join(folder, 'tree');
  const outcome = await proposeRetro(
    {
      epic: String(epic),
      plan,
      subjects,
      base,
      executor,
      config,
      env: resolveExecutorEnvs([executor], input.env)[executor.id] ?? {},
      home: join(folder, 'homes', executor.id),
    },
    {
      git: planningGit(git, treePath),
      executors: executorLookup({
        config,
        env: input.env,
        untrusted: input.untrusted,
        deps: input.executorDeps,
      }),
      emit,
    },
  );
  let ended: RetroDoc;
  let proposal: RetroProposal | undefined;
  if (outcome.kind === 'proposed') {
    proposal = {
      version: 1,
      epic: String(epic),
      at: now.toISOString(),
      executor: executor.id,
      subjects: subjects.map((s) => ({
        story: s.story.id,
        state: s.state,
        ...(s.record.reason === undefined ? {} : { reason: s.record.reason }),
        planHash: plan.hashes[s.story.id] ?? '',
      })),
      fixes: outcome.fixes,
      leftOut: outcome.leftOut,
      notes: outcome.notes,
      outcomes: {},
    };
    ended = { ...doc, status: 'proposed', proposal };
  } else {
    ended = { ...doc, status: 'failed', reason: outcome.reason };
  }
  const written = await store.writeJson(RETRO_DOC, ended, sha);
  if (!written.ok) return { outcome, doc, superseded: true };
  if (proposal !== undefined) {
    await repo.ensureComment({
      issueNumber: epic,
      marker: RETRO_MARKER,
      body: renderRetro(proposal, { ticked: new Set(), applyWith: RETRO_APPLY_WITH_RESUME }),
    });
  } else if (outcome.kind === 'failed') {
    await repo.reply(epic, RETRO_TEXTS.failed(doc.attempt, inlineText(outcome.reason)));
  }
  return { outcome, doc: ended };
}
