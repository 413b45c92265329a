/**
 * A landing's two jobs (`story: land-<n>`), one workflow run: the work job brings the
 * default branch into the epic branch (docs/landing.md) with a token that can only read,
 * as a story's work job runs its coder, and hands the landed merge over; the publish job,
 * which holds the write credential and runs nothing of the repository's, checks it from its
 * objects and pushes it with a lease. Then the orchestrator decides again (shell.ts): a
 * queued landing starts, the status comment shows a hold.
 */
import type { LandJobRef } from '../../core/epic/index.js';
import type { LandRecord } from '../../core/land/index.js';
import type { LandHandover } from '../../core/publish/handover.js';
import { landingRecord, landWorkJob, recordLandRefusal } from './land-job.js';
import { publishLandJob, type LandJobResult, type LandPublishInput } from './land-publish.js';
import { handoverKind } from './handover-kind.js';
import { preparation } from './job-record.js';
import { jobInput, resultDir } from './job-kind.js';

function summaryOf(epic: number, record: LandRecord): string {
  return [
    `## ${record.outcome === 'landed' ? '✅' : '❌'} epicflow: ${record.job} of epic #${epic}: ${record.outcome}`,
    '',
    `${record.into} (${record.intoHeadBefore.slice(0, 12)}) into ${record.epicBranch} (${record.epicHeadBefore.slice(0, 12)})` +
      (record.epicHeadAfter === undefined ? '' : `: ${record.epicHeadAfter.slice(0, 12)}`),
    ...(record.conflicts.length === 0
      ? []
      : ['', `Conflicting paths: ${record.conflicts.join(', ')}`]),
    ...(record.rounds === 0
      ? []
      : ['', `Coder rounds: ${record.rounds} (${record.executors.join(' → ')})`]),
    ...(record.reason === undefined ? [] : ['', `Not landed: ${record.reason}`]),
    ...(record.nextStep === undefined ? [] : ['', `Next: ${record.nextStep}`]),
    ...(record.notes.length === 0 ? [] : ['', ...record.notes.map((n) => `- ${n}`)]),
    '',
  ].join('\n');
}

/** A landing's jobs (handover-kind.ts). */
export const landKind = handoverKind({
  job: 'land',
  title: (ref: LandJobRef) => `${ref.job} of epic #${ref.epic}`,
  input: (job, ref): LandPublishInput => ({
    ...jobInput(job, ref),
    job: ref.job,
    onEvent: (e) => job.log(`${e.story ?? 'epic'}: ${e.message}`),
    resultDir: resultDir(job),
    secrets: job.secrets,
  }),
  prepare: (input) => preparation(input, landingRecord),
  work: (input: LandPublishInput, prepared) => landWorkJob(input, prepared, input.resultDir),
  publish: publishLandJob,
  workReport: (_job, ref, handover: LandHandover) => ({
    summary: [
      `## epicflow: ${ref.job} of epic #${ref.epic}, the work job`,
      '',
      `**${handover.outcome.kind === 'merged' ? `landed merge ${handover.outcome.commit.slice(0, 12)} handed over to the publish job` : handover.outcome.kind === 'unchanged' ? 'nothing to land: the epic branch holds the branch already' : `not landed: ${handover.outcome.reason}`}**`,
      '',
      ...handover.notes.map((n) => `- ${n}`),
      '',
    ].join('\n'),
  }),
  publishReport: (ref, { record }: LandJobResult) => ({
    outputs: {
      status: record.outcome,
      'merge-sha': record.epicHeadAfter ?? '',
      executor: record.executors.join(' → '),
    },
    summary: summaryOf(ref.epic, record),
    ...(record.outcome === 'landed'
      ? {}
      : { failure: `${record.job} not landed: ${record.reason ?? 'no reason recorded'}` }),
    conclusion: record.outcome === 'landed' ? 'success' : 'failure',
  }),
  refuse: recordLandRefusal,
});
