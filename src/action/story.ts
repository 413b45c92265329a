/**
 * `mode: story`: run one story of an epic in this job, record the outcome on
 * GitHub, report it (outputs, job summary, annotations), then let the
 * orchestrator decide what comes next, so dependents start without waiting
 * for the App.
 */
import * as core from '@actions/core';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GitHubStateStore } from '../adapters/github/index.js';
import type { Untrusted } from '../adapters/process/untrusted.js';
import { jobTitle } from '../core/epic/index.js';
import { describeError, isEpicflowError } from '../core/errors.js';
import { formatChain } from '../core/model.js';
import {
  prepareStoryJob,
  recordRefusal,
  runStoryJob,
  type StoryJobInput,
} from '../orchestrator/story-job.js';
import { epicTraceParent, otelTracing } from '../adapters/telemetry/otel.js';
import { connectJob } from './github.js';
import { jobOf, type StoryInputs } from './inputs.js';
import {
  inJobFolder,
  isolateUntrusted,
  maskExecutorSecrets,
  reconcileAfter,
  type StoryModeDeps,
} from './job.js';
import { runLandMode } from './land.js';
import {
  failedGates,
  redact,
  renderFailureSummary,
  renderStorySummary,
  storyHint,
  storyTotals,
} from './summary.js';

async function writeSummary(markdown: string, secrets: readonly string[]): Promise<void> {
  await core.summary.addRaw(redact(markdown, secrets), true).write();
}

export async function runStoryMode(deps: StoryModeDeps): Promise<void> {
  // `story: land-<n>`: a landing of the default branch into the epic (docs/landing.md).
  if (jobOf(deps.inputs).kind === 'land') return inJobFolder((work) => runLandMode(deps, work));
  return inJobFolder((work) => runStory(deps, work));
}

async function runStory({ inputs, runner, env }: StoryModeDeps, work: string): Promise<void> {
  const { gh, remote, childEnv, defaultBranch } = await connectJob(inputs, runner, env);
  const { repo, secrets } = gh;
  const job: StoryJobInput = {
    epic: Number(inputs.epic),
    story: inputs.story,
    attempt: inputs.attempt,
    configPath: inputs.config,
    ...(defaultBranch === undefined ? {} : { defaultBranch }),
    repo,
    remote,
    workspace: runner.workspace,
    tempDir: work,
    // The runner's temp folder outlives this step: the workflow uploads it as an artifact.
    logsDir: join(
      runner.tempDir,
      'epicflow-logs',
      `epic-${inputs.epic}-${inputs.story}-${inputs.attempt}`,
    ),
    env: childEnv,
    onEvent: (e) => core.info(`${e.story === undefined ? 'epic' : e.story}: ${e.message}`),
  };
  const store = new GitHubStateStore({ repo, epic: inputs.epic });
  const title = `story \`${inputs.story}\` of epic #${inputs.epic} did not run`;

  let prepared;
  let untrusted: Untrusted;
  try {
    // Before anything of the repository is read: no credential may be in reach of what runs.
    untrusted = await isolateUntrusted(inputs, work, childEnv);
    prepared = await prepareStoryJob({ ...job, untrusted });
  } catch (e) {
    await refuse(e, { store, inputs, title, secrets });
    return;
  }
  maskExecutorSecrets(prepared.config.executors, childEnv, secrets);
  // With an OTLP endpoint configured, the job's spans join the epic's one trace.
  const tracing = otelTracing(env);
  const span = tracing?.root(
    `story job ${inputs.story}`,
    {
      'epicflow.epic': inputs.epic,
      'epicflow.story': inputs.story,
      'epicflow.attempt': inputs.attempt,
    },
    epicTraceParent(`${runner.owner}/${runner.repo}`, inputs.epic),
  );
  let result;
  try {
    result = await core.group(`epicflow: story ${inputs.story}`, () =>
      runStoryJob({ ...job, untrusted, ...(span === undefined ? {} : { trace: span }) }, prepared),
    );
    span?.end(
      result.record.status === 'done' ? undefined : (result.record.reason ?? result.record.status),
    );
  } catch (e) {
    span?.end('the job failed');
    await refuse(e, {
      store,
      inputs,
      title: `story \`${inputs.story}\` of epic #${inputs.epic} failed`,
      secrets,
    });
    return;
  } finally {
    await tracing?.shutdown();
  }
  const { record } = result;
  const totals = storyTotals(record);
  core.setOutput('status', record.status);
  core.setOutput('merge-sha', record.mergeCommit ?? '');
  core.setOutput('executor', formatChain(record.executors));
  core.setOutput('tokens', String(totals.tokens));
  core.setOutput('cost', totals.priced ? totals.costUsd.toFixed(4) : '');
  const logsKept = job.logsDir !== undefined && existsSync(job.logsDir);
  if (logsKept) core.setOutput('logs', job.logsDir);
  await writeSummary(
    renderStorySummary({
      epic: Number(inputs.epic),
      result,
      judged: prepared.config.judge !== undefined,
      repoUrl: `${runner.serverUrl}/${runner.owner}/${runner.repo}`,
      isolation: untrusted,
      hint: storyHint(result),
      logsKept,
    }),
    secrets,
  );
  for (const g of failedGates(result.gates).slice(0, 9)) {
    core.error(
      redact(
        `${g.command} ${g.timedOut ? 'timed out' : 'failed'} on the ${g.where === 'story' ? 'story branch' : 'merged epic tree'}`,
        secrets,
      ),
      {
        title: `epicflow gate failed: ${g.command}`,
      },
    );
  }
  if (record.status !== 'done') {
    core.setFailed(
      redact(
        `story ${inputs.story} ${record.status}: ${record.reason ?? 'no reason recorded'}`,
        secrets,
      ),
    );
  }
  await reconcileAfter({
    repo,
    runner,
    defaultBranch,
    title: jobTitle(jobOf(inputs)),
    conclusion: record.status === 'done' ? 'success' : 'failure',
  });
}

async function refuse(
  e: unknown,
  ctx: { store: GitHubStateStore; inputs: StoryInputs; title: string; secrets: readonly string[] },
): Promise<void> {
  const message = redact(describeError(e), ctx.secrets);
  const reason = message
    .split('\n')
    .map((l) => l.trim())
    .join(' | ');
  try {
    await recordRefusal(
      ctx.store,
      {
        kind: 'story',
        epic: Number(ctx.inputs.epic),
        story: ctx.inputs.story,
        attempt: ctx.inputs.attempt,
      },
      reason,
      new Date(),
    );
  } catch (w) {
    core.warning(redact(`could not record the failure: ${describeError(w)}`, ctx.secrets));
  }
  await writeSummary(renderFailureSummary({ title: ctx.title, message }), ctx.secrets);
  core.setOutput('status', 'failed');
  core.setFailed(message);
  if (!isEpicflowError(e)) core.debug(String((e as Error).stack ?? e));
}
