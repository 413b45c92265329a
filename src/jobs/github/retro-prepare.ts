/**
 * What a retro job reads and checks before its executor runs (retro-job.ts): the job
 * opened (job-shell.ts), the retro record still this attempt's and active, the plan it
 * looks back on, the failed and held stories, and the executor with the judge role; and
 * how a retro job that could not run is refused.
 */
import { GitHubStateStore, type GitHubRepo } from '../../adapters/github/index.js';
import type { EpicflowConfig, ExecutorConfig } from '../../core/config/types.js';
import type { RetroJobRef } from '../../core/epic/job-ref.js';
import { EpicflowError } from '../../core/errors.js';
import type { Plan } from '../../core/model.js';
import { parsePlan, planOptionsFor } from '../../core/plan/index.js';
import { RETRO_TEXTS, retroSubjects, type RetroDoc } from '../../core/retro/index.js';
import { emptyRosterState, pickHelper } from '../../core/roster/index.js';
import { foundDoc, type FoundRecord, type RecordSteps } from './job-record.js';
import type { CheckoutJobInput, OpenedJob } from './job-shell.js';
import { stateFromView } from '../../orchestrator/load.js';
import { failRetroAttempt, readRetroDoc } from '../../orchestrator/retro.js';

/** Everything read and checked before the executor runs. */
export interface PreparedRetro {
  readonly config: EpicflowConfig;
  readonly store: GitHubStateStore;
  readonly doc: RetroDoc;
  readonly sha: string;
  readonly plan: Plan;
  readonly subjects: ReturnType<typeof retroSubjects>;
  readonly executor: ExecutorConfig;
}

/**
 * A retro attempt's record steps: the retro record, then the plan, the subjects and the
 * executor; any mismatch refused clearly. A lost save means a newer attempt took over.
 */
export const retroRecord: RecordSteps<
  CheckoutJobInput,
  RetroDoc,
  FoundRecord<RetroDoc>,
  PreparedRetro
> = {
  find: async (_input, { store }) => {
    return foundDoc('retro', await readRetroDoc(store));
  },
  prepare: (input, opened, _found, fresh) => prepareRetro(input, opened, fresh.record, fresh.sha),
  lostSave: 'superseded',
};

async function prepareRetro(
  input: CheckoutJobInput,
  opened: OpenedJob,
  doc: RetroDoc,
  sha: string,
): Promise<PreparedRetro> {
  const { epic } = input;
  const { config, store, view, issue } = opened;
  const parsed = parsePlan(issue.body, planOptionsFor(config, input.configPath));
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
    now: input.now?.() ?? new Date(),
  });
  if (picked === null) throw new EpicflowError('config', RETRO_TEXTS.noJudge);
  return { config, store, doc, sha, plan, subjects, executor: picked.executor };
}

/** A retro job that could not run, or failed: its attempt fails, as when its run dies (retro.ts). */
export async function recordRetroRefusal(
  repo: GitHubRepo,
  job: RetroJobRef,
  reason: string,
): Promise<void> {
  const store = new GitHubStateStore({ repo, epic: String(job.epic) });
  await failRetroAttempt(repo, store, job.epic, job.attempt, reason);
}
