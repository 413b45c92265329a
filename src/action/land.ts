/**
 * A landing's job (`story: land-<n>`): bring the default branch into the epic branch
 * (docs/landing.md), with the isolation and credential rules of a story job: the
 * token never reaches the coder, setup or the gates; the landed merge is pushed with
 * a lease. Then the orchestrator decides again (shell.ts): a queued landing starts,
 * the status comment shows a hold.
 */
import * as core from '@actions/core';
import type { LandJobRef } from '../core/epic/index.js';
import type { LandRecord } from '../core/land/index.js';
import {
  prepareLandJob,
  runLandJob,
  type LandJobInput,
  type LandJobResult,
  type PreparedLanding,
} from '../orchestrator/land-job.js';
import { jobInput, type ActionJob, type ActionRecipe } from './shell.js';

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

export function landJob(ref: LandJobRef): ActionRecipe<PreparedLanding, LandJobResult> {
  // One title: a landing that could not start failed all the same.
  const failed = `${ref.job} of epic #${ref.epic} failed`;
  return {
    ref,
    didNotRun: failed,
    failed,
    group: `epicflow: ${ref.job} of epic #${ref.epic}`,
    prepare: (job) => prepareLandJob(landInput(job, ref)),
    run: (job, prepared) => runLandJob(landInput(job, ref), prepared),
    report: (_job, _prepared, { record }) => ({
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
  };
}
