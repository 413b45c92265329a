/**
 * A planning attempt's two jobs (`mode: plan`, or a run of the story workflow dispatched
 * with the reserved story `_plan`), one workflow run: the work job runs the planner as the
 * job's untrusted user, with a token that can only read, and hands its outcome over as an
 * artifact; the publish job, which holds the write credential and runs nothing of the
 * repository's, checks it again and writes it: the planning record and, for a valid plan,
 * the issue body; then the epic is decided again (plan-publish.ts). A workflow that still
 * runs planning in one job is refused, saying what to update.
 */
import type { PlanJobRef } from '../../core/epic/index.js';
import type { PlanHandover } from '../../core/publish/handover.js';
import { summarizeUsage } from '../../core/report/index.js';
import {
  draftPlanJob,
  planningRecord,
  recordPlanningRefusal,
  type PlanJobInput,
} from './plan-job.js';
import { publishPlanJob, type PlanJobResult } from './plan-publish.js';
import { attemptInput, documentReports, handoverKind, type Summary } from './handover-kind.js';
import { preparation } from './job-record.js';

const summaryOf: Summary<PlanJobRef, PlanHandover, PlanJobResult> = (ref, shown) => {
  const { handover, published, where } = shown;
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
  return {
    title: `planning of epic #${ref.epic} (attempt ${ref.attempt})`,
    head,
    lines: [
      `- rounds: ${handover.rounds}; planners: ${handover.executors.join(', ') || 'none'}`,
      `- usage: ${figure('measured', usage.measured)}; ${figure('estimated', usage.estimated)}`,
      `- the planner ran ${where}`,
      ...(published?.doc.problems ?? []).map((p) => `- ${p}`),
    ],
  };
};

/** A planning attempt's jobs (handover-kind.ts). */
export const planKind = handoverKind({
  job: 'plan',
  title: (ref: PlanJobRef) => `planning of epic #${ref.epic}`,
  input: (job, ref): PlanJobInput => ({
    ...attemptInput(job, ref, 'planning'),
    storyWorkflow: job.runner.workflowPath?.split('/').pop(),
  }),
  prepare: (input) => preparation(input, planningRecord),
  work: draftPlanJob,
  publish: publishPlanJob,
  ...documentReports(summaryOf, (ref, result: PlanJobResult) =>
    result.handover.outcome.kind === 'planned'
      ? undefined
      : `planning of epic #${ref.epic} ${result.doc.status}: ${(result.doc.problems ?? []).join('; ')}`,
  ),
  refuse: recordPlanningRefusal,
});
