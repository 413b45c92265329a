/**
 * The Action's logic: read the inputs into one validated record, mask the
 * token at once, then run the mode: orchestrate, or one job of the story workflow
 * (its kind, `JobRef`, picks the object the job shell runs: jobs/github/kinds.ts, shell.ts). Every failure ends in a readable summary
 * and a failed step, never a stack trace. `main.ts` (the bundled entry) calls
 * it; tools that run an action's source (`@github/local-action`) import it
 * and call `run()` themselves.
 */
import * as core from '@actions/core';
import { describeError, isEpicflowError } from '../core/errors.js';
import { privateKeySecrets } from './github.js';
import { jobOf, readInputs, type PlanInputs, type StoryInputs } from './inputs.js';
import { kindOf } from '../jobs/github/kinds.js';
import { redact, renderFailureSummary } from '../jobs/github/job-summary.js';
import { runOrchestrateMode } from './orchestrate.js';
import { readRunner } from './runner.js';
import { runActionJob, type JobModeDeps } from './shell.js';

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // Mask before anything else can print them, even when other inputs are wrong.
  const token = (env['INPUT_GITHUB-TOKEN'] ?? '').trim();
  const secrets = [
    ...(token === '' ? [] : [token]),
    ...privateKeySecrets(env['INPUT_APP-PRIVATE-KEY'] ?? ''),
  ];
  for (const s of secrets) core.setSecret(s);
  try {
    const inputs = readInputs(env);
    const runner = readRunner(env);
    // Nothing started from here on may inherit them.
    delete env['INPUT_GITHUB-TOKEN'];
    delete env['INPUT_APP-PRIVATE-KEY'];
    if (inputs.mode === 'orchestrate') await runOrchestrateMode({ inputs, runner });
    else await runJob({ inputs, runner, env });
  } catch (e) {
    const message = redact(describeError(e), secrets);
    try {
      await core.summary
        .addRaw(renderFailureSummary({ title: 'the action could not run', message }), true)
        .write();
    } catch {
      // No summary file outside a runner: the failed step still says why.
    }
    core.setFailed(message);
    if (!isEpicflowError(e)) core.debug(String((e as Error).stack ?? e));
  }
}

/** A job of the story workflow: its kind's object (jobs/github/kinds.ts), run by the shell. */
async function runJob(deps: JobModeDeps): Promise<void> {
  const ref = jobOf(deps.inputs);
  // Which of the job's two jobs (the work and the publish job) this is: none, the old one job.
  const { phase } = deps.inputs as StoryInputs | PlanInputs;
  return runActionJob(deps, kindOf(ref), ref, phase);
}
