/**
 * A run of the story workflow dispatched with the reserved story `_retro`: one retro
 * attempt of an epic in this job (orchestrator/retro-job.ts). The executor runs as the
 * job's untrusted user, exactly as a judge does: it cannot read this process's token or
 * the App's key. The proposal goes to the retro record and one comment on the epic issue.
 */
import * as core from '@actions/core';
import { GitHubStateStore } from '../adapters/github/index.js';
import type { Untrusted } from '../adapters/process/untrusted.js';
import { describeError, isEpicflowError } from '../core/errors.js';
import { failRetroAttempt } from '../orchestrator/retro.js';
import { runRetroJob, type RetroJobResult } from '../orchestrator/retro-job.js';
import { connectJob } from './github.js';
import type { RetroInputs } from './inputs.js';
import type { RunnerContext } from './runner.js';
import { inJobFolder, isolateUntrusted, maskExecutorSecrets } from './job.js';
import { redact, renderFailureSummary } from './summary.js';

interface RetroModeDeps {
  readonly inputs: RetroInputs;
  readonly runner: RunnerContext;
  readonly env: NodeJS.ProcessEnv;
}

function summaryOf(epic: string, result: RetroJobResult, isolation: Untrusted): string {
  const { outcome, doc } = result;
  const head =
    result.superseded === true
      ? 'superseded by a newer attempt: nothing written'
      : outcome.kind === 'proposed'
        ? `${outcome.fixes.filter((f) => f.kind !== 'nothing').length} fixes proposed in the retro comment on the epic; \`/resume\` applies the ticked ones`
        : `no proposal: ${outcome.reason}`;
  return [
    `## epicflow: retro of epic #${epic} (attempt ${doc.attempt})`,
    '',
    `**${head}**`,
    '',
    `- the executor ran ${isolation.description}`,
    ...outcome.notes.map((n) => `- note: ${n}`),
    '',
  ].join('\n');
}

export async function runRetroMode(deps: RetroModeDeps): Promise<void> {
  return inJobFolder((work) => runRetro(deps, work));
}

async function runRetro({ inputs, runner, env }: RetroModeDeps, work: string): Promise<void> {
  const { gh, remote, childEnv, defaultBranch } = await connectJob(inputs, runner, env);
  const { repo, secrets } = gh;
  const store = new GitHubStateStore({ repo, epic: inputs.epic });
  const fail = async (e: unknown, title: string): Promise<void> => {
    const message = redact(describeError(e), secrets);
    const reason = message
      .split('\n')
      .map((l) => l.trim())
      .join(' | ');
    try {
      await failRetroAttempt(repo, store, Number(inputs.epic), inputs.attempt, reason);
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
  try {
    // Before anything of the repository is read: no credential may be in reach of the executor.
    untrusted = await isolateUntrusted(inputs, work, childEnv);
  } catch (e) {
    await fail(e, `the retro of epic #${inputs.epic} did not run`);
    return;
  }
  let result: RetroJobResult;
  try {
    result = await core.group(`epicflow: retro of epic #${inputs.epic}`, () =>
      runRetroJob({
        epic: Number(inputs.epic),
        attempt: inputs.attempt,
        configPath: inputs.config,
        defaultBranch,
        repo,
        remote,
        workspace: runner.workspace,
        tempDir: work,
        env: childEnv,
        untrusted,
        onConfig: (config) => maskExecutorSecrets(config.executors, childEnv, secrets),
        onEvent: (m) => core.info(`retro: ${m}`),
      }),
    );
  } catch (e) {
    await fail(e, `the retro of epic #${inputs.epic} failed`);
    return;
  }
  await core.summary
    .addRaw(redact(summaryOf(inputs.epic, result, untrusted), secrets), true)
    .write();
  core.setOutput('status', result.superseded === true ? 'superseded' : result.doc.status);
  if (result.outcome.kind !== 'proposed' && result.superseded !== true) {
    core.setFailed(
      redact(`the retro of epic #${inputs.epic} failed: ${result.outcome.reason}`, secrets),
    );
  }
}
