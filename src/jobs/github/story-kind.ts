/**
 * A story's two jobs (`story: <id>`), one workflow run: the work job runs the story with a
 * token that can only read and hands its result over as an artifact; the publish job, which
 * holds the write credential and runs nothing of the repository's, checks the result again,
 * merges and records it, reports it (outputs, job summary, annotations), then lets the
 * orchestrator decide what comes next (shell.ts), so dependents start without waiting for
 * the App. A workflow that still runs a story in one job is refused, saying what to update.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { epicTraceParent, otelTracing } from '../../adapters/telemetry/otel.js';
import type { StoryJobRef } from '../../core/epic/index.js';
import { formatChain, type StoryRecord } from '../../core/model.js';
import {
  recordRefusal,
  runStoryJob,
  storyRecord,
  type PreparedStory,
  type StoryJobInput,
  type StoryJobResult,
} from './story-job.js';
import { preparation } from './job-record.js';
import { publishStoryJob, type PublishJobResult } from './story-publish.js';
import {
  jobInput,
  oneJobRefusal,
  requireDispatch,
  resultDir,
  type GitHubJob,
  type JobKind,
  type JobRecipe,
  type JobReport,
} from './job-kind.js';
import { failedGates, renderStorySummary, storyHint, storyTotals } from './job-summary.js';

function storyInput(job: GitHubJob, ref: StoryJobRef): StoryJobInput {
  const { runner } = job;
  return {
    ...jobInput(job, ref),
    story: ref.story,
    attempt: ref.attempt,
    // The runner's temp folder outlives this step: the workflow uploads it as an artifact.
    logsDir: join(runner.tempDir, 'epicflow-logs', `epic-${ref.epic}-${ref.story}-${ref.attempt}`),
    resultDir: resultDir(job),
    onEvent: (e) => job.log(`${e.story === undefined ? 'epic' : e.story}: ${e.message}`),
  };
}

/** With an OTLP endpoint configured, the job's spans join the epic's one trace. */
async function traced(
  job: GitHubJob,
  ref: StoryJobRef,
  prepared: PreparedStory,
): Promise<StoryJobResult> {
  const tracing = await otelTracing(job.env);
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

const title = (ref: StoryJobRef): string => `story \`${ref.story}\` of epic #${ref.epic}`;

/** The outputs every story job sets from the record it ends with. */
function recordOutputs(record: StoryRecord): Record<string, string> {
  const totals = storyTotals(record);
  return {
    status: record.status,
    'merge-sha': record.mergeCommit ?? '',
    executor: formatChain(record.executors),
    tokens: String(totals.tokens),
    cost: totals.priced ? totals.costUsd.toFixed(4) : '',
  };
}

function gateErrors(gates: StoryJobResult['gates']): NonNullable<JobReport['errors']> {
  return failedGates(gates)
    .slice(0, 9)
    .map((g) => ({
      message: `${g.command} ${g.timedOut ? 'timed out' : 'failed'} on the ${g.where === 'story' ? 'story branch' : 'merged epic tree'}`,
      title: `epicflow gate failed: ${g.command}`,
    }));
}

/** The work job: the story runs; its result is handed over for the publish job. */
function storyWorkJob(ref: StoryJobRef): JobRecipe<PreparedStory, StoryJobResult> {
  return {
    ref,
    didNotRun: `${title(ref)} did not run`,
    failed: `${title(ref)} failed`,
    group: `epicflow: story ${ref.story}`,
    readsOnly: true,
    prepare: (job) => preparation(storyInput(job, ref), storyRecord),
    run: (job, prepared) => traced(job, ref, prepared),
    report: (job, prepared, result) => {
      const { record } = result;
      const { runner } = job;
      const logsDir = storyInput(job, ref).logsDir;
      const logsKept = logsDir !== undefined && existsSync(logsDir);
      return {
        outputs: {
          ...recordOutputs(record),
          // Not merged yet: the publish job sets it.
          'merge-sha': '',
          result: resultDir(job),
          ...(logsKept && logsDir !== undefined ? { logs: logsDir } : {}),
        },
        summary: renderStorySummary({
          epic: ref.epic,
          result,
          phase: 'work',
          judged: prepared.config.judge !== undefined,
          repoUrl: `${runner.serverUrl}/${runner.owner}/${runner.repo}`,
          isolation: job.untrusted,
          hint: undefined,
          logsKept,
        }),
        errors: gateErrors(result.gates),
        ...(record.status === 'done'
          ? {}
          : {
              failure: `story ${ref.story} ${record.status}: ${record.reason ?? 'no reason recorded'}`,
            }),
      };
    },
  };
}

/** The publish job: the work job's result checked again, merged and recorded. */
function storyPublishJob(ref: StoryJobRef): JobRecipe<PreparedStory, PublishJobResult> {
  return {
    ref,
    didNotRun: `${title(ref)} was not published`,
    failed: `${title(ref)} could not be published`,
    group: `epicflow: publish story ${ref.story}`,
    runsNothingUntrusted: true,
    prepare: (job) => {
      requireDispatch(job);
      return preparation(storyInput(job, ref), storyRecord);
    },
    run: (job, prepared) => {
      const { inputs } = job;
      return publishStoryJob(
        {
          epic: ref.epic,
          story: ref.story,
          attempt: ref.attempt,
          resultDir: resultDir(job),
          workOutcome: inputs.workOutcome,
          configPath: inputs.config,
          tempDir: job.work,
          remote: job.remote,
          botLogin: job.repo.botLogin,
          secrets: job.secrets,
          onEvent: (message) => job.log(`${ref.story}: ${message}`),
        },
        prepared,
      );
    },
    report: (job, prepared, result) => {
      const { record } = result;
      const { runner } = job;
      const at = new Date().toISOString();
      return {
        outputs: recordOutputs(record),
        summary: renderStorySummary({
          epic: ref.epic,
          result: {
            ...result,
            story: prepared.story,
            events: result.events.map((message) => ({ at, message })),
          },
          phase: 'publish',
          judged: prepared.config.judge !== undefined,
          repoUrl: `${runner.serverUrl}/${runner.owner}/${runner.repo}`,
          isolation: { isolated: true, description: 'in the work job' },
          hint: storyHint(result),
        }),
        errors: gateErrors(result.gates),
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

/**
 * A story's jobs: the work job, the publish job, and the one job of earlier versions,
 * refused before anything runs, saying what to update.
 */
export const storyKind: JobKind<StoryJobRef> = {
  recipe: (ref, phase) => {
    if (phase === 'work') return storyWorkJob(ref);
    if (phase === 'publish') return storyPublishJob(ref);
    return oneJobRefusal<PreparedStory>(ref, title(ref));
  },
  refuse: recordRefusal,
};
