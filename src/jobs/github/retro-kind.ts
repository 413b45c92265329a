/**
 * A retro attempt's two jobs (a run of the story workflow dispatched with the reserved story
 * `_retro`), one workflow run: the work job runs the executor as the job's untrusted user,
 * exactly as a judge does, with a token that can only read, and hands its proposal over as
 * an artifact; the publish job, which holds the write credential and runs nothing of the
 * repository's, writes it to the retro record and one comment on the epic issue
 * (jobs/github/retro-job.ts). A workflow that still runs a retro in one job is refused.
 */
import type { RetroJobRef } from '../../core/epic/job-ref.js';
import type { RetroHandover } from '../../core/publish/handover.js';
import {
  proposeRetroJob,
  publishRetroJob,
  type RetroJobInput,
  type RetroJobResult,
} from './retro-job.js';
import { recordRetroRefusal, retroRecord } from './retro-prepare.js';
import { attemptInput, documentReports, handoverKind, type Summary } from './handover-kind.js';
import { preparation } from './job-record.js';

const summaryOf: Summary<RetroJobRef, RetroHandover, RetroJobResult> = (ref, shown) => {
  const { outcome } = shown.handover;
  const fixes =
    outcome.kind === 'proposed' ? outcome.fixes.filter((f) => f.kind !== 'nothing').length : 0;
  const head =
    outcome.kind === 'proposed'
      ? shown.published === undefined
        ? `${fixes} fixes proposed: handed over to the publish job`
        : `${fixes} fixes proposed in the retro comment on the epic; \`/resume\` applies the ticked ones`
      : `no proposal: ${outcome.reason}`;
  return {
    title: `retro of epic #${ref.epic} (attempt ${ref.attempt})`,
    head,
    lines: [`- the executor ran ${shown.where}`],
  };
};

/** A retro attempt's jobs (handover-kind.ts). */
export const retroKind = handoverKind({
  job: 'retro',
  title: (ref: RetroJobRef) => `the retro of epic #${ref.epic}`,
  input: (job, ref): RetroJobInput => attemptInput(job, ref, 'retro'),
  prepare: (input: RetroJobInput) => preparation(input, retroRecord),
  work: proposeRetroJob,
  publish: publishRetroJob,
  ...documentReports(summaryOf, (ref, result: RetroJobResult) =>
    result.handover.outcome.kind === 'proposed'
      ? undefined
      : `the retro of epic #${ref.epic} failed: ${result.handover.outcome.reason}`,
  ),
  refuse: recordRetroRefusal,
});
