/**
 * A story's job (`story: <id>`): run one story of an epic, record the outcome on
 * GitHub, report it (outputs, job summary, annotations), then let the orchestrator
 * decide what comes next (shell.ts), so dependents start without waiting for the App.
 */
import * as core from '@actions/core';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { epicTraceParent, otelTracing } from '../adapters/telemetry/otel.js';
import type { StoryJobRef } from '../core/epic/index.js';
import { formatChain } from '../core/model.js';
import {
  prepareStoryJob,
  runStoryJob,
  type PreparedStory,
  type StoryJobInput,
  type StoryJobResult,
} from '../orchestrator/story-job.js';
import { jobInput, type ActionJob, type ActionRecipe } from './shell.js';
import { failedGates, renderStorySummary, storyHint, storyTotals } from './summary.js';

function storyInput(job: ActionJob, ref: StoryJobRef): StoryJobInput {
  const { runner } = job;
  return {
    ...jobInput(job, ref),
    story: ref.story,
    attempt: ref.attempt,
    // The runner's temp folder outlives this step: the workflow uploads it as an artifact.
    logsDir: join(runner.tempDir, 'epicflow-logs', `epic-${ref.epic}-${ref.story}-${ref.attempt}`),
    onEvent: (e) => core.info(`${e.story === undefined ? 'epic' : e.story}: ${e.message}`),
  };
}

/** With an OTLP endpoint configured, the job's spans join the epic's one trace. */
async function traced(
  job: ActionJob,
  ref: StoryJobRef,
  prepared: PreparedStory,
): Promise<StoryJobResult> {
  const tracing = otelTracing(job.env);
  const span = tracing?.root(
    `story job ${ref.story}`,
    {
      'epicflow.epic': String(ref.epic),
      'epicflow.story': ref.story,
      'epicflow.attempt': ref.attempt,
    },
    epicTraceParent(`${job.runner.owner}/${job.runner.repo}`, String(ref.epic)),
  );
  try {
    const input = storyInput(job, ref);
    const result = await runStoryJob(
      { ...input, ...(span === undefined ? {} : { trace: span }) },
      prepared,
    );
    span?.end(
      result.record.status === 'done' ? undefined : (result.record.reason ?? result.record.status),
    );
    return result;
  } catch (e) {
    span?.end('the job failed');
    throw e;
  } finally {
    await tracing?.shutdown();
  }
}

export function storyJob(ref: StoryJobRef): ActionRecipe<PreparedStory, StoryJobResult> {
  const title = `story \`${ref.story}\` of epic #${ref.epic}`;
  return {
    ref,
    didNotRun: `${title} did not run`,
    failed: `${title} failed`,
    group: `epicflow: story ${ref.story}`,
    prepare: (job) => prepareStoryJob(storyInput(job, ref)),
    run: (job, prepared) => traced(job, ref, prepared),
    report: (job, prepared, result) => {
      const { record } = result;
      const { runner } = job;
      const totals = storyTotals(record);
      const logsDir = storyInput(job, ref).logsDir;
      const logsKept = logsDir !== undefined && existsSync(logsDir);
      return {
        outputs: {
          status: record.status,
          'merge-sha': record.mergeCommit ?? '',
          executor: formatChain(record.executors),
          tokens: String(totals.tokens),
          cost: totals.priced ? totals.costUsd.toFixed(4) : '',
          ...(logsKept && logsDir !== undefined ? { logs: logsDir } : {}),
        },
        summary: renderStorySummary({
          epic: ref.epic,
          result,
          judged: prepared.config.judge !== undefined,
          repoUrl: `${runner.serverUrl}/${runner.owner}/${runner.repo}`,
          isolation: job.untrusted,
          hint: storyHint(result),
          logsKept,
        }),
        errors: failedGates(result.gates)
          .slice(0, 9)
          .map((g) => ({
            message: `${g.command} ${g.timedOut ? 'timed out' : 'failed'} on the ${g.where === 'story' ? 'story branch' : 'merged epic tree'}`,
            title: `epicflow gate failed: ${g.command}`,
          })),
        ...(record.status === 'done'
          ? {}
          : {
              failure: `story ${ref.story} ${record.status}: ${record.reason ?? 'no reason recorded'}`,
            }),
        conclusion: record.status === 'done' ? 'success' : 'failure',
      };
    },
  };
}
