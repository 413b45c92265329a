/**
 * A run of the story workflow dispatched with the reserved story `_retro`: one retro
 * attempt of an epic in this job (orchestrator/retro-job.ts). The executor runs as the
 * job's untrusted user, exactly as a judge does: it cannot read this process's token or
 * the App's key. The proposal goes to the retro record and one comment on the epic issue.
 */
import * as core from '@actions/core';
import type { Untrusted } from '../adapters/process/untrusted.js';
import type { RetroJobRef } from '../core/epic/job-ref.js';
import { runRetroJob, type RetroJobInput, type RetroJobResult } from '../orchestrator/retro-job.js';
import { prepareRetroJob, type PreparedRetro } from '../orchestrator/retro-prepare.js';
import { jobInput, type ActionJob, type ActionRecipe } from './shell.js';

function summaryOf(epic: number, result: RetroJobResult, isolation: Untrusted): string {
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

function retroInput(job: ActionJob, ref: RetroJobRef): RetroJobInput {
  return {
    ...jobInput(job, ref),
    attempt: ref.attempt,
    onEvent: (m) => core.info(`retro: ${m}`),
  };
}

export function retroJob(ref: RetroJobRef): ActionRecipe<PreparedRetro, RetroJobResult> {
  return {
    ref,
    didNotRun: `the retro of epic #${ref.epic} did not run`,
    failed: `the retro of epic #${ref.epic} failed`,
    group: `epicflow: retro of epic #${ref.epic}`,
    prepare: (job) => prepareRetroJob(retroInput(job, ref)),
    run: (job, prepared) => runRetroJob(retroInput(job, ref), prepared),
    report: (job, _prepared, result) => ({
      outputs: { status: result.superseded === true ? 'superseded' : result.doc.status },
      summary: summaryOf(ref.epic, result, job.untrusted),
      ...(result.outcome.kind !== 'proposed' && result.superseded !== true
        ? { failure: `the retro of epic #${ref.epic} failed: ${result.outcome.reason}` }
        : {}),
    }),
  };
}
