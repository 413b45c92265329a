/**
 * `mode: plan` (also a run of the story workflow dispatched with the reserved story
 * `_plan`): one planning attempt of an epic in this job. The planner runs as the
 * job's untrusted user, exactly as a story's agent does: it cannot read this
 * process's token or the App's key. The outcome goes to the planning record and,
 * for a valid plan, into the issue body; then the epic is decided again (plan-job.ts).
 */
import * as core from '@actions/core';
import type { Untrusted } from '../adapters/process/untrusted.js';
import type { PlanJobRef } from '../core/epic/index.js';
import { summarizeUsage } from '../core/report/index.js';
import {
  preparePlanJob,
  runPlanJob,
  type PlanJobInput,
  type PlanJobResult,
  type PreparedPlanning,
} from '../orchestrator/plan-job.js';
import { jobInput, type ActionJob, type ActionRecipe } from './shell.js';

function summaryOf(epic: number, result: PlanJobResult, isolation: Untrusted): string {
  const { outcome, doc } = result;
  const usage = summarizeUsage(outcome.usage);
  const figure = (what: string, f: typeof usage.measured): string =>
    `${what} ${f.tokens} tokens${f.costUsd === null ? '' : `, $${f.costUsd.toFixed(4)}`}`;
  const head =
    outcome.kind === 'planned'
      ? `plan proposed: ${outcome.plan.stories.length} stories in ${outcome.plan.waves.length} waves, written into the issue; it waits for \`/approve\``
      : outcome.kind === 'invalid'
        ? 'no valid plan after the repair rounds: the epic is held with the violations listed'
        : `planning failed: ${outcome.reason}`;
  return [
    `## epicflow: planning of epic #${epic} (attempt ${doc.attempt})`,
    '',
    `**${result.superseded === true ? 'superseded by a newer attempt: nothing written' : head}**`,
    '',
    `- rounds: ${outcome.rounds}; planners: ${outcome.executors.join(', ') || 'none'}`,
    `- usage: ${figure('measured', usage.measured)}; ${figure('estimated', usage.estimated)}`,
    `- the planner ran ${isolation.description}`,
    ...(doc.problems ?? []).map((p) => `- ${p}`),
    ...outcome.notes.map((n) => `- note: ${n}`),
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

export function planJob(ref: PlanJobRef): ActionRecipe<PreparedPlanning, PlanJobResult> {
  return {
    ref,
    didNotRun: `planning of epic #${ref.epic} did not run`,
    failed: `planning of epic #${ref.epic} failed`,
    group: `epicflow: planning of epic #${ref.epic}`,
    prepare: (job) => preparePlanJob(planInput(job, ref)),
    run: (job, prepared) => runPlanJob(planInput(job, ref), prepared),
    report: (job, _prepared, result) => ({
      outputs: { status: result.superseded === true ? 'superseded' : result.doc.status },
      summary: summaryOf(ref.epic, result, job.untrusted),
      ...(result.outcome.kind !== 'planned' && result.superseded !== true
        ? {
            failure: `planning of epic #${ref.epic} ${result.doc.status}: ${(result.doc.problems ?? []).join('; ')}`,
          }
        : {}),
    }),
  };
}
