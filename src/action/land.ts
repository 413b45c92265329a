/**
 * `mode: story` with `story: land-<n>`: bring the default branch into the epic branch
 * in this job (docs/landing.md), with the isolation and credential rules of a story
 * job: the token never reaches the coder, setup or the gates; the landed merge is
 * pushed with a lease. Then the orchestrator decides again (a queued landing starts,
 * the status comment shows a hold).
 */
import * as core from '@actions/core';
import { jobTitle } from '../core/epic/index.js';
import { describeError, isEpicflowError } from '../core/errors.js';
import type { Untrusted } from '../adapters/process/untrusted.js';
import { recordLandRefusal, runLandJob, type LandJobInput } from '../orchestrator/land-job.js';
import { connectJob } from './github.js';
import { jobOf } from './inputs.js';
import { isolateUntrusted, reconcileAfter, type StoryModeDeps } from './job.js';
import { redact, renderFailureSummary } from './summary.js';

/** `work`: the job's own folder (`inJobFolder`). */
export async function runLandMode(
  { inputs, runner, env }: StoryModeDeps,
  work: string,
): Promise<void> {
  const { gh, remote, childEnv, defaultBranch } = await connectJob(inputs, runner, env);
  const { repo, secrets } = gh;
  const epic = Number(inputs.epic);
  const write = async (markdown: string): Promise<void> => {
    await core.summary.addRaw(redact(markdown, secrets), true).write();
  };
  let result;
  try {
    const untrusted: Untrusted = await isolateUntrusted(inputs, work, childEnv);
    const job: LandJobInput = {
      epic,
      job: inputs.story,
      configPath: inputs.config,
      defaultBranch,
      repo,
      remote,
      workspace: runner.workspace,
      tempDir: work,
      env: childEnv,
      untrusted,
      onEvent: (e) => core.info(`${e.story ?? 'epic'}: ${e.message}`),
    };
    result = await core.group(`epicflow: ${inputs.story} of epic #${epic}`, () => runLandJob(job));
  } catch (e) {
    const message = redact(describeError(e), secrets);
    try {
      await recordLandRefusal(repo, { epic, job: inputs.story }, message.split('\n').join(' | '));
    } catch (w) {
      core.warning(redact(`could not record the failure: ${describeError(w)}`, secrets));
    }
    await write(
      renderFailureSummary({ title: `${inputs.story} of epic #${epic} failed`, message }),
    );
    core.setOutput('status', 'failed');
    core.setFailed(message);
    if (!isEpicflowError(e)) core.debug(String((e as Error).stack ?? e));
    return;
  }
  const { record } = result;
  core.setOutput('status', record.outcome);
  core.setOutput('merge-sha', record.epicHeadAfter ?? '');
  core.setOutput('executor', record.executors.join(' → '));
  const lines = [
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
  ];
  await write(lines.join('\n'));
  if (record.outcome !== 'landed') {
    core.setFailed(
      redact(`${record.job} not landed: ${record.reason ?? 'no reason recorded'}`, secrets),
    );
  }
  await reconcileAfter({
    repo,
    runner,
    defaultBranch,
    title: jobTitle(jobOf(inputs)),
    conclusion: record.outcome === 'landed' ? 'success' : 'failure',
  });
}
