/**
 * A job that could not run, or failed before recording its outcome, records its
 * refusal one way whatever its kind: the record it was dispatched for fails with the
 * reason (that record only, while still its own: a retry, a cancel or a newer attempt
 * is left alone), and the epic says so where that kind says it.
 */
import { GitHubStateStore, type GitHubRepo } from '../../adapters/github/index.js';
import type { JobRef } from '../../core/epic/index.js';
import { recordLandRefusal } from './land-job.js';
import { recordPlanningRefusal } from './plan-job.js';
import { failRetroAttempt } from '../../orchestrator/retro.js';
import { recordRefusal } from './story-job.js';

export async function recordJobRefusal(
  repo: GitHubRepo,
  job: JobRef,
  reason: string,
  now: Date,
): Promise<void> {
  switch (job.kind) {
    case 'story':
      return recordRefusal(repo, job, reason, now);
    case 'plan':
      return recordPlanningRefusal(repo, job, reason, now);
    case 'retro': {
      const store = new GitHubStateStore({ repo, epic: String(job.epic) });
      await failRetroAttempt(repo, store, job.epic, job.attempt, reason);
      return;
    }
    case 'land':
      return recordLandRefusal(repo, job, reason, now);
  }
}
