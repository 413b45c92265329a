/**
 * `mode: plan` (also a run of the story workflow dispatched with the reserved story
 * `_plan`): one planning attempt of an epic in this job. The planner runs as the
 * job's untrusted user, exactly as a story's agent does: it cannot read this
 * process's token or the App's key. The outcome goes to the planning record and,
 * for a valid plan, into the issue body; then the epic is decided again.
 */
import * as core from '@actions/core';
import { GitHubStateStore } from '../adapters/github/index.js';
import type { Untrusted } from '../adapters/process/untrusted.js';
import { describeError, isEpicflowError } from '../core/errors.js';
import { summarizeUsage } from '../core/report/index.js';
import {
  preparePlanJob,
  recordPlanningRefusal,
  runPlanJob,
  type PlanJobInput,
  type PlanJobResult,
} from '../orchestrator/plan-job.js';
import { connectJob } from './github.js';
import type { PlanInputs } from './inputs.js';
import type { RunnerContext } from './runner.js';
import { inJobFolder, isolateUntrusted, maskExecutorSecrets } from './job.js';
import { redact, renderFailureSummary } from './summary.js';

interface PlanModeDeps {
  readonly inputs: PlanInputs;
  readonly runner: RunnerContext;
  readonly env: NodeJS.ProcessEnv;
}

function summaryOf(epic: string, result: PlanJobResult, isolation: Untrusted): string {
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

export async function runPlanMode(deps: PlanModeDeps): Promise<void> {
  return inJobFolder((work) => runPlanning(deps, work));
}

async function runPlanning({ inputs, runner, env }: PlanModeDeps, work: string): Promise<void> {
  const { gh, remote, childEnv, defaultBranch } = await connectJob(inputs, runner, env);
  const { repo, secrets } = gh;
  const store = new GitHubStateStore({ repo, epic: inputs.epic });
  const job: PlanJobInput = {
    epic: Number(inputs.epic),
    attempt: inputs.attempt,
    configPath: inputs.config,
    defaultBranch,
    repo,
    remote,
    workspace: runner.workspace,
    tempDir: work,
    env: childEnv,
    storyWorkflow: runner.workflowPath?.split('/').pop(),
    onEvent: (m) => core.info(`planning: ${m}`),
  };
  const fail = async (e: unknown, title: string): Promise<void> => {
    const message = redact(describeError(e), secrets);
    const reason = message
      .split('\n')
      .map((l) => l.trim())
      .join(' | ');
    try {
      await recordPlanningRefusal(
        repo,
        store,
        Number(inputs.epic),
        inputs.attempt,
        reason,
        new Date(),
      );
    } catch (w) {
      core.warning(redact(`could not record the failure: ${describeError(w)}`, secrets));
    }
    await core.summary
      .addRaw(redact(renderFailureSummary({ title, message }), secrets), true)
      .write();
    core.setOutput('status', 'failed');
    core.setFailed(message);
    if (!isEpicflowError(e)) core.debug(String((e as Error).stack ?? e));
  };

  let untrusted: Untrusted;
  let prepared;
  try {
    // Before anything of the repository is read: no credential may be in reach of the planner.
    untrusted = await isolateUntrusted(inputs, work, childEnv);
    prepared = await preparePlanJob({ ...job, untrusted });
  } catch (e) {
    await fail(e, `planning of epic #${inputs.epic} did not run`);
    return;
  }
  maskExecutorSecrets(prepared.config.executors, childEnv, secrets);
  let result: PlanJobResult;
  try {
    result = await core.group(`epicflow: planning of epic #${inputs.epic}`, () =>
      runPlanJob({ ...job, untrusted }, prepared),
    );
  } catch (e) {
    await fail(e, `planning of epic #${inputs.epic} failed`);
    return;
  }
  await core.summary
    .addRaw(redact(summaryOf(inputs.epic, result, untrusted), secrets), true)
    .write();
  core.setOutput('status', result.superseded === true ? 'superseded' : result.doc.status);
  if (result.outcome.kind !== 'planned' && result.superseded !== true) {
    core.setFailed(
      redact(
        `planning of epic #${inputs.epic} ${result.doc.status}: ${(result.doc.problems ?? []).join('; ')}`,
        secrets,
      ),
    );
  }
}
