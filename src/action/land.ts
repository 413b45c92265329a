/**
 * A landing's two jobs (`story: land-<n>`), one workflow run: the work job brings the
 * default branch into the epic branch (docs/landing.md) with a token that can only read,
 * as a story's work job runs its coder, and hands the landed merge over; the publish job,
 * which holds the write credential and runs nothing of the repository's, checks it from its
 * objects and pushes it with a lease. Then the orchestrator decides again (shell.ts): a
 * queued landing starts, the status comment shows a hold.
 */
import * as core from '@actions/core';
import type { LandJobRef } from '../core/epic/index.js';
import type { LandRecord } from '../core/land/index.js';
import type { LandHandover } from '../core/publish/handover.js';
import {
  landingRecord,
  landWorkJob,
  recordLandRefusal,
  type LandJobInput,
  type PreparedLanding,
} from '../jobs/github/land-job.js';
import { publishLandJob, type LandJobResult } from '../jobs/github/land-publish.js';
import { preparation } from '../jobs/github/job-record.js';
import { handoverJob } from './handover-jobs.js';
import {
  jobInput,
  resultDir,
  type ActionJob,
  type ActionKind,
  type ActionRecipe,
} from './shell.js';

function landInput(job: ActionJob, ref: LandJobRef): LandJobInput {
  return {
    ...jobInput(job, ref),
    job: ref.job,
    onEvent: (e) => core.info(`${e.story ?? 'epic'}: ${e.message}`),
  };
}

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

/** The recipe of a landing's job of this `phase` (handover-jobs.ts). */
function landJob(
  ref: LandJobRef,
  phase: 'work' | 'publish' | undefined,
): ActionRecipe<PreparedLanding, unknown> {
  const title = `${ref.job} of epic #${ref.epic}`;
  return handoverJob<PreparedLanding, LandHandover, LandJobResult>(
    {
      ref,
      job: 'land',
      title,
      prepare: (job) => preparation(landInput(job, ref), landingRecord),
      work: (job, prepared) => landWorkJob(landInput(job, ref), prepared, resultDir(job)),
      publish: (job, prepared, handover) =>
        publishLandJob(
          { ...landInput(job, ref), resultDir: resultDir(job), secrets: job.secrets },
          prepared,
          handover,
        ),
      workReport: (_job, handover) => ({
        summary: [
          `## epicflow: ${title}, the work job`,
          '',
          `**${handover.outcome.kind === 'merged' ? `landed merge ${handover.outcome.commit.slice(0, 12)} handed over to the publish job` : handover.outcome.kind === 'unchanged' ? 'nothing to land: the epic branch holds the branch already' : `not landed: ${handover.outcome.reason}`}**`,
          '',
          ...handover.notes.map((n) => `- ${n}`),
          '',
        ].join('\n'),
      }),
      publishReport: ({ record }) => ({
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
    },
    phase,
  );
}

/** A landing's jobs. */
export const landKind: ActionKind<LandJobRef> = { recipe: landJob, refuse: recordLandRefusal };
