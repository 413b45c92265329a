/**
 * The Action's logic: read the inputs into one validated record, mask the
 * token at once, then run the mode: orchestrate, or one job of the story workflow
 * (its kind, `JobRef`, picks the recipe the job shell runs: shell.ts). Every failure ends in a readable summary
 * and a failed step, never a stack trace. `main.ts` (the bundled entry) calls
 * it; tools that run an action's source (`@github/local-action`) import it
 * and call `run()` themselves.
 */
import * as core from '@actions/core';
import { describeError, isEpicflowError } from '../core/errors.js';
import { privateKeySecrets } from './github.js';
import { jobOf, readInputs, type PlanInputs, type StoryInputs } from './inputs.js';
import type { JobRef } from '../core/epic/index.js';
import { landKind } from './land.js';
import { runOrchestrateMode } from './orchestrate.js';
import { planKind } from './plan.js';
import { retroKind } from './retro.js';
import { readRunner } from './runner.js';
import { runActionJob, type ActionKind, type JobModeDeps } from './shell.js';
import { storyKind } from './story.js';
import { redact, renderFailureSummary } from './summary.js';

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

/** Each kind of job, the one object the shell runs for it (a new kind adds a line here). */
const KINDS: { readonly [K in JobRef['kind']]: ActionKind<Extract<JobRef, { kind: K }>> } = {
  story: storyKind,
  plan: planKind,
  retro: retroKind,
  land: landKind,
};

/** A job of the story workflow: its kind's object, run by the shell. */
async function runJob(deps: JobModeDeps): Promise<void> {
  const ref = jobOf(deps.inputs);
  // Which of the job's two jobs (the work and the publish job) this is: none, the old one job.
  const { phase } = deps.inputs as StoryInputs | PlanInputs;
  // The table gives each kind its own object: `ref` is of the kind it was looked up by.
  return runActionJob(deps, KINDS[ref.kind] as ActionKind<JobRef>, ref, phase);
}
