/**
 * The Action's logic: read the inputs into one validated record, mask the
 * token at once, then run the mode. Every failure ends in a readable summary
 * and a failed step, never a stack trace. `main.ts` (the bundled entry) calls
 * it; tools that run an action's source (`@github/local-action`) import it
 * and call `run()` themselves.
 */
import * as core from '@actions/core';
import { describeError, isEpicflowError } from '../core/errors.js';
import { privateKeySecrets } from './github.js';
import { readInputs } from './inputs.js';
import { runOrchestrateMode } from './orchestrate.js';
import { runPlanMode } from './plan.js';
import { runRetroMode } from './retro.js';
import { readRunner } from './runner.js';
import { runStoryMode } from './story.js';
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
    if (inputs.mode === 'story') await runStoryMode({ inputs, runner, env });
    else if (inputs.mode === 'plan') await runPlanMode({ inputs, runner, env });
    else if (inputs.mode === 'retro') await runRetroMode({ inputs, runner, env });
    else await runOrchestrateMode({ inputs, runner });
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
