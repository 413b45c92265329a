/**
 * A story that proved too big, split: when a split is proposed (failed as timed out or
 * still red, on its entry as it stands, once per failed attempt), and what the plan becomes
 * (the new stories in its place with `<story>-` ids, its dependencies inherited, its
 * dependants re-pointed to all of them, `owns` only within its own, 2–4 stories).
 */
import { describe, expect, it } from '@jest/globals';
import type { StoryRecord } from '../../../src/core/model.js';
import { MAX_ID_LENGTH, splitId, splitStory } from '../../../src/core/plan/index.js';
import {
  buildPlannerPrompt,
  readSplitAnswer,
  splitCandidates,
} from '../../../src/core/planner/index.js';
import { planDocument } from '../../../src/core/planner/split.js';
import { plan, story } from './fixtures.js';

const current = plan([
  story('db'),
  story('api', { owns: ['src/api', 'test/api'], dependsOn: ['db'] }),
  story('ui', { dependsOn: ['api'] }),
  story('docs', { dependsOn: ['api', 'db'] }),
]);
const options = { configPaths: ['.github/epicflow.yml'] };

const part = (id: string, owns: string[], dependsOn?: string[]): Record<string, unknown> => ({
  id,
  title: `Part ${id}`,
  description: `Build ${id}.`,
  owns,
  ...(dependsOn === undefined ? {} : { dependsOn }),
  acceptance: [`${id} works`],
});

function rec(id: string, over: Partial<StoryRecord> = {}): StoryRecord {
  return {
    version: 1,
    epic: 'e',
    story: id,
    planHash: current.hashes[id] ?? '',
    status: 'failed',
    branch: `epicflow/e/${id}`,
    attempt: 1,
    executors: ['alpha'],
    usage: [],
    notes: [],
    timings: {},
    reason: 'coder turn failed (alpha): timed out after 60s',
    outgrown: 'timed-out',
    ...over,
  };
}

describe('splitStory', () => {
  it('puts the new stories in its place, inherits its dependencies, re-points its dependants', () => {
    const got = splitStory(current, 'api', [
      part('routes', ['src/api/routes']),
      part('handlers', ['src/api/handlers', 'test/api'], ['routes']),
    ]);
    expect(got.added).toEqual(['api-routes', 'api-handlers']);
    if (!got.result.ok) throw new Error(JSON.stringify(got.result.violations));
    const p = got.result.plan;
    expect(p.stories.map((s) => s.id)).toEqual(['db', 'api-routes', 'api-handlers', 'ui', 'docs']);
    expect(p.stories[1]?.dependsOn).toEqual(['db']);
    expect(p.stories[2]?.dependsOn).toEqual(['db', 'api-routes']);
    expect(p.stories[3]?.dependsOn).toEqual(['api-routes', 'api-handlers']);
    expect(p.stories[4]?.dependsOn).toEqual(['api-routes', 'api-handlers', 'db']);
    // Stories the split does not touch keep their entries (and their progress).
    expect(p.hashes['db']).toBe(current.hashes['db']);
    expect(p.waves).toEqual([['db'], ['api-routes'], ['api-handlers'], ['ui', 'docs']]);
  });

  it('refuses a new story owning a path outside what the split story owned', () => {
    const got = splitStory(current, 'api', [
      part('routes', ['src/api/routes']),
      part('wide', ['src/lib']),
    ]);
    expect(got.result.ok).toBe(false);
    if (got.result.ok) return;
    expect(got.result.violations).toEqual([
      expect.objectContaining({
        story: 'api-wide',
        field: 'owns',
        message: expect.stringContaining('owns "src/lib", outside what "api" owned') as unknown,
      }),
    ]);
  });

  it('refuses fewer than 2 or more than 4 stories', () => {
    const one = splitStory(current, 'api', [part('all', ['src/api'])]);
    const five = splitStory(
      current,
      'api',
      ['a', 'b', 'c', 'd', 'e'].map((x) => part(x, [`src/api/${x}`])),
    );
    for (const got of [one, five]) {
      expect(got.result.ok).toBe(false);
      if (!got.result.ok) {
        expect(got.result.violations[0]?.message).toMatch(/a split of "api" has 2 to 4 stories/);
      }
    }
  });

  it('leaves overlaps between the new stories to the plan validator', () => {
    const got = splitStory(current, 'api', [part('a', ['src/api']), part('b', ['src/api/b'])]);
    expect(got.result.ok).toBe(false);
    if (!got.result.ok) expect(got.result.violations.map((v) => v.code)).toContain('owns-overlap');
  });

  it('gives ids with the story prefix once, within the id length limit', () => {
    expect(splitId('api', 'routes')).toBe('api-routes');
    expect(splitId('api', 'api-routes')).toBe('api-routes');
    expect(splitId('api', 'x'.repeat(60)).length).toBeLessThanOrEqual(MAX_ID_LENGTH);
  });
});

describe('splitCandidates', () => {
  it('proposes a split of a story that timed out or stayed red, in plan order', () => {
    const got = splitCandidates(
      current,
      [rec('ui', { outgrown: 'still-red', reason: 'gates failed: x' }), rec('api')],
      [],
    );
    expect(got).toEqual([
      {
        story: 'api',
        outgrown: 'timed-out',
        attempt: 1,
        reason: 'coder turn failed (alpha): timed out after 60s',
      },
      { story: 'ui', outgrown: 'still-red', attempt: 1, reason: 'gates failed: x' },
    ]);
  });

  it('proposes nothing for other failures, a changed entry, or an attempt already proposed', () => {
    const { outgrown: _o, ...plain } = rec('db', { reason: 'no changes' });
    expect(
      splitCandidates(
        current,
        [
          plain,
          rec('api', { planHash: 'edited-since' }),
          rec('ui'),
          rec('docs', { status: 'done' }),
        ],
        [{ story: 'ui', attempt: 1 }],
      ),
    ).toEqual([]);
    // A later attempt that fails as too big again is proposed again.
    expect(
      splitCandidates(current, [rec('ui', { attempt: 2 })], [{ story: 'ui', attempt: 1 }]),
    ).toHaveLength(1);
  });
});

describe('readSplitAnswer and the prompt', () => {
  const request = { story: 'api', outgrown: 'timed-out' as const, attempt: 1, reason: 'slow' };

  it('reads the planner block into the plan with the split', () => {
    const yaml = [
      'stories:',
      '  - id: routes',
      '    title: Routes',
      '    description: The routes.',
      '    owns: [src/api/routes]',
      '  - id: handlers',
      '    title: Handlers',
      '    description: The handlers.',
      '    dependsOn: [routes]',
      '    owns: [src/api/handlers]',
    ].join('\n');
    const got = readSplitAnswer(
      `Done.\n\n\`\`\`epicflow\n${yaml}\n\`\`\`\n`,
      current,
      'api',
      options,
    );
    expect(got.added).toEqual(['api-routes', 'api-handlers']);
    expect(got.result.ok).toBe(true);
  });

  it('asks for 2 to 4 stories within the story owns, and shows why it failed', () => {
    const prompt = buildPlannerPrompt({
      epic: 'e',
      epicText: 'Build it.',
      files: ['src/api/x.ts'],
      limits: { maxStories: 20, executors: [], allowWorkflowChanges: false },
      previous: current,
      split: request,
      round: 1,
    });
    expect(prompt).toContain('## The story to split: `api`');
    expect(prompt).toContain('its coder turn ran out of time');
    expect(prompt).toContain('Answer with 2 to 4 smaller stories');
    expect(prompt).toContain('the id `api-<your id>`');
  });
});

describe('planDocument', () => {
  it('rewrites the one plan block of a hand-written plan, the prose kept', () => {
    const md = '# Epic\n\nSome prose.\n\n```epicflow\nstories: []\n```\n\nAfter.\n';
    const out = planDocument(md, current, 'note');
    expect(out).toMatch(/^# Epic\n\nSome prose\.\n\n```epicflow\nstories:\n {2}- id: db/);
    expect(out).toMatch(/```\n\nAfter\.\n$/);
    expect(planDocument('no block here', current, 'note')).toBeUndefined();
  });
});
