/**
 * A planning attempt's two jobs (`mode: plan`, or a run of the story workflow dispatched
 * with the reserved story `_plan`), one workflow run: the work job runs the planner as the
 * job's untrusted user, with a token that can only read, and hands its outcome over as an
 * artifact; the publish job, which holds the write credential and runs nothing of the
 * repository's, checks it again and writes it: the planning record and, for a valid plan,
 * the issue body; then the epic is decided again (plan-publish.ts). A workflow that still
 * runs planning in one job is refused, saying what to update.
 */
import * as core from '@actions/core';
import type { PlanJobRef } from '../core/epic/index.js';
import type { PlanHandover } from '../core/publish/handover.js';
import { summarizeUsage } from '../core/report/index.js';
import {
  draftPlanJob,
  planningRecord,
  recordPlanningRefusal,
  type PlanJobInput,
  type PreparedPlanning,
} from '../jobs/github/plan-job.js';
import { publishPlanJob, type PlanJobResult } from '../jobs/github/plan-publish.js';
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
  ref: PlanJobRef,
  handover: PlanHandover,
  published: PlanJobResult | undefined,
  where: string,
  superseded = false,
): string {
  const { outcome } = handover;
  const usage = summarizeUsage(handover.usage);
  const figure = (what: string, f: typeof usage.measured): string =>
    `${what} ${f.tokens} tokens${f.costUsd === null ? '' : `, $${f.costUsd.toFixed(4)}`}`;
  const plan = published?.plan;
  const head =
    outcome.kind === 'planned'
      ? published === undefined
        ? 'plan drafted: handed over to the publish job'
        : `plan proposed: ${plan?.stories.length ?? 0} stories in ${plan?.waves.length ?? 0} waves, written into the issue; it waits for \`/approve\``
      : outcome.kind === 'invalid'
        ? 'no valid plan after the repair rounds: the epic is held with the violations listed'
        : `planning failed: ${outcome.reason}`;
  return [
    `## epicflow: planning of epic #${ref.epic} (attempt ${ref.attempt})`,
    '',
    `**${superseded ? SUPERSEDED : head}**`,
    '',
    `- rounds: ${handover.rounds}; planners: ${handover.executors.join(', ') || 'none'}`,
    `- usage: ${figure('measured', usage.measured)}; ${figure('estimated', usage.estimated)}`,
    `- the planner ran ${where}`,
    ...(published?.doc.problems ?? []).map((p) => `- ${p}`),
    ...handover.notes.map((n) => `- note: ${n}`),
    '',
  ].join('\n');
}

function planInput(job: ActionJob, ref: PlanJobRef): PlanJobInput {
  return {
    ...jobInput(job, ref),
    attempt: ref.attempt,
    storyWorkflow: job.runner.workflowPath?.split('/').pop(),
    onEvent: (m) => core.info(`planning: ${m}`),
  };
}

/** The recipe of a planning attempt's job of this `phase` (handover-jobs.ts). */
function planJob(
  ref: PlanJobRef,
  phase: 'work' | 'publish' | undefined,
): ActionRecipe<PreparedPlanning, unknown> {
  const title = `planning of epic #${ref.epic}`;
  return handoverJob<PreparedPlanning, PlanHandover, PlanJobResult>(
    {
      ref,
      job: 'plan',
      title,
      prepare: (job) => preparation(planInput(job, ref), planningRecord),
      work: (job, prepared) => draftPlanJob(planInput(job, ref), prepared),
      publish: (job, prepared, handover) => publishPlanJob(planInput(job, ref), prepared, handover),
      workReport: (job, handover) => ({
        summary: summaryOf(ref, handover, undefined, job.untrusted.description),
      }),
      publishReport: (result, superseded) => ({
        outputs: { status: result.doc.status },
        summary: summaryOf(ref, result.handover, result, 'in the work job', superseded),
        ...(result.handover.outcome.kind !== 'planned'
          ? {
              failure: `${title} ${result.doc.status}: ${(result.doc.problems ?? []).join('; ')}`,
            }
          : {}),
      }),
    },
    phase,
  );
}

/** A planning attempt's jobs. */
export const planKind: ActionKind<PlanJobRef> = { recipe: planJob, refuse: recordPlanningRefusal };
