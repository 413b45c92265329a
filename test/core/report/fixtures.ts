/** Builders for report inputs, written directly (the renderers take plain data). */
import type { Story, StoryRecord, StoryStatus, UsageEntry } from '../../../src/core/model.js';
import { storyBranchName } from '../../../src/core/model.js';
import type { ReportInput, ReportStory } from '../../../src/core/report/index.js';

export const EPIC = '42';

export function story(id: string, dependsOn: readonly string[] = [], title = `Story ${id}`): Story {
  return {
    id,
    title,
    description: `Build ${id}.`,
    owns: [`src/${id}/`],
    reads: [],
    dependsOn,
    provides: [],
    acceptance: [],
    testsChange: false,
  };
}

export function record(
  id: string,
  status: StoryStatus,
  extra: Partial<Omit<StoryRecord, 'version' | 'epic' | 'story' | 'status'>> = {},
): StoryRecord {
  return {
    version: 1,
    epic: EPIC,
    story: id,
    planHash: `hash-${id}`,
    status,
    branch: storyBranchName(EPIC, id),
    attempt: 1,
    executors: ['codex'],
    usage: [],
    notes: [],
    timings: {},
    ...extra,
  };
}

export function usage(
  executor: string,
  tokens: number,
  options: { measured?: boolean; costUsd?: number | null } = {},
): UsageEntry {
  const costUsd = options.costUsd === undefined ? 0 : options.costUsd;
  return {
    executor,
    model: `${executor}-model`,
    tokens: { input: tokens, cachedInput: 0, cacheWrite: 0, output: 0 },
    measured: options.measured ?? true,
    costUsd,
    costSource: costUsd === null ? 'none' : 'cli',
  };
}

export function input(
  stories: readonly ReportStory[],
  extra: Partial<ReportInput> = {},
): ReportInput {
  return {
    epic: EPIC,
    title: 'Health checks',
    epicBranch: `epic/${EPIC}`,
    startedAt: '2026-11-30T12:00:00Z',
    now: '2026-11-30T13:04:30Z',
    stories,
    halts: [],
    ...extra,
  };
}

/** A diamond: api and db both depend on base; ui depends on api and db. */
export function diamond(): ReportStory[] {
  return [
    {
      story: story('base'),
      wave: 1,
      record: record('base', 'done', {
        mergeCommit: '0123456789abcdef0123456789abcdef01234567',
        usage: [usage('codex', 1_000_000, { costUsd: 3 })],
      }),
    },
    {
      story: story('api', ['base']),
      wave: 2,
      record: record('api', 'failed', {
        reason: 'no changes',
        usage: [usage('codex', 200_000, { costUsd: 0.4 })],
      }),
    },
    {
      story: story('db', ['base']),
      wave: 2,
      record: record('db', 'active', { executors: ['claude'] }),
    },
    {
      story: story('ui', ['api', 'db']),
      wave: 3,
      record: record('ui', 'waiting', { reason: 'waiting for api', executors: [] }),
    },
    { story: story('docs'), wave: 1 },
  ];
}

/** Lines of a markdown document that open or close a code fence. */
export function fenceLines(markdown: string): string[] {
  return markdown.split('\n').filter((l) => l.startsWith('```'));
}
