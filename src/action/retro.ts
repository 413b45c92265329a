/**
 * A retro attempt's two jobs (a run of the story workflow dispatched with the reserved story
 * `_retro`), one workflow run: the work job runs the executor as the job's untrusted user,
 * exactly as a judge does, with a token that can only read, and hands its proposal over as
 * an artifact; the publish job, which holds the write credential and runs nothing of the
 * repository's, writes it to the retro record and one comment on the epic issue
 * (jobs/github/retro-job.ts). A workflow that still runs a retro in one job is refused.
 */
import * as core from '@actions/core';
import type { RetroJobRef } from '../core/epic/job-ref.js';
import type { RetroHandover } from '../core/publish/handover.js';
import {
  proposeRetroJob,
  publishRetroJob,
  type RetroJobInput,
  type RetroJobResult,
} from '../jobs/github/retro-job.js';
import {
  recordRetroRefusal,
  retroRecord,
  type PreparedRetro,
} from '../jobs/github/retro-prepare.js';
import { handoverJob } from './handover-jobs.js';
import { preparation } from '../jobs/github/job-record.js';
import {
  jobInput,
  SUPERSEDED,
  type ActionJob,
  type ActionKind,
  type ActionRecipe,
} from './shell.js';

function summaryOf(
  ref: RetroJobRef,
  handover: RetroHandover,
  published: RetroJobResult | undefined,
  where: string,
  superseded = false,
): string {
  const { outcome } = handover;
  const head = superseded
    ? SUPERSEDED
    : outcome.kind === 'proposed'
      ? published === undefined
        ? `${outcome.fixes.filter((f) => f.kind !== 'nothing').length} fixes proposed: handed over to the publish job`
        : `${outcome.fixes.filter((f) => f.kind !== 'nothing').length} fixes proposed in the retro comment on the epic; \`/resume\` applies the ticked ones`
      : `no proposal: ${outcome.reason}`;
  return [
    `## epicflow: retro of epic #${ref.epic} (attempt ${ref.attempt})`,
    '',
    `**${head}**`,
    '',
    `- the executor ran ${where}`,
    ...handover.notes.map((n) => `- note: ${n}`),
    '',
  ].join('\n');
}

function retroInput(job: ActionJob, ref: RetroJobRef): RetroJobInput {
  return {
    ...jobInput(job, ref),
    attempt: ref.attempt,
    onEvent: (m) => core.info(`retro: ${m}`),
  };
}

/** The recipe of a retro attempt's job of this `phase` (handover-jobs.ts). */
function retroJob(
  ref: RetroJobRef,
  phase: 'work' | 'publish' | undefined,
): ActionRecipe<PreparedRetro, unknown> {
  const title = `the retro of epic #${ref.epic}`;
  return handoverJob<PreparedRetro, RetroHandover, RetroJobResult>(
    {
      ref,
      job: 'retro',
      title,
      prepare: (job) => preparation(retroInput(job, ref), retroRecord),
      work: (job, prepared) => proposeRetroJob(retroInput(job, ref), prepared),
      publish: (job, prepared, handover) =>
        publishRetroJob(retroInput(job, ref), prepared, handover),
      workReport: (job, handover) => ({
        summary: summaryOf(ref, handover, undefined, job.untrusted.description),
      }),
      publishReport: (result, superseded) => ({
        outputs: { status: result.doc.status },
        summary: summaryOf(ref, result.handover, result, 'in the work job', superseded),
        ...(result.handover.outcome.kind !== 'proposed'
          ? { failure: `${title} failed: ${result.handover.outcome.reason}` }
          : {}),
      }),
    },
    phase,
  );
}

/** A retro attempt's jobs. */
export const retroKind: ActionKind<RetroJobRef> = { recipe: retroJob, refuse: recordRetroRefusal };
