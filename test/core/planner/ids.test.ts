import { describe, expect, it } from '@jest/globals';
import type { Story } from '../../../src/core/model.js';
import { keepStoryIds } from '../../../src/core/planner/index.js';
import { plan, story } from './fixtures.js';

/** `id<-deps` per story of the result, and the renames. */
function kept(previous: Story[], proposed: Story[]): { ids: string[]; renamed: string[] } {
  const r = keepStoryIds(plan(previous), plan(proposed));
  return {
    ids: r.plan.stories.map((s) =>
      s.dependsOn.length === 0 ? s.id : `${s.id}<-${s.dependsOn.join(',')}`,
    ),
    renamed: r.renamed.map((x) => `${x.from}->${x.to}`),
  };
}

const api = story('api', { owns: ['src/api'] });
const ui = story('ui', { owns: ['src/ui'], dependsOn: ['api'] });
const docs = story('docs', { owns: ['docs'], dependsOn: ['ui'] });

describe('keepStoryIds', () => {
  it.each<[string, Story[], Story[], { ids: string[]; renamed: string[] }]>([
    [
      'changes nothing in an identical plan',
      [api, ui],
      [api, ui],
      { ids: ['api', 'ui<-api'], renamed: [] },
    ],
    [
      'gives a renamed unchanged story its id back',
      [api, ui],
      [
        { ...api, id: 'backend' },
        { ...ui, dependsOn: ['backend'] },
      ],
      { ids: ['api', 'ui<-api'], renamed: ['backend->api'] },
    ],
    [
      'keeps the ids of a whole renamed chain',
      [api, ui, docs],
      [
        { ...api, id: 'a1' },
        { ...ui, id: 'u1', dependsOn: ['a1'] },
        { ...docs, id: 'd1', dependsOn: ['u1'] },
      ],
      { ids: ['api', 'ui<-api', 'docs<-ui'], renamed: ['a1->api', 'u1->ui', 'd1->docs'] },
    ],
    [
      'keeps the id the planner gave a changed story',
      [api, ui],
      [{ ...api, description: 'Build the API, with pagination.' }, ui],
      { ids: ['api', 'ui<-api'], renamed: [] },
    ],
    [
      'keeps a renamed dependent whose dependency changed but kept its id',
      [api, ui],
      [
        { ...api, title: 'A better API' },
        { ...ui, id: 'frontend' },
      ],
      { ids: ['api', 'ui<-api'], renamed: ['frontend->ui'] },
    ],
    [
      'does not match a story whose dependencies changed',
      [api, ui, docs],
      [api, ui, { ...docs, id: 'manual', dependsOn: ['api'] }],
      { ids: ['api', 'ui<-api', 'manual<-api'], renamed: [] },
    ],
    [
      'moves a changed story off an id an unchanged one takes back',
      [api, ui],
      [
        { ...api, id: 'server' },
        { ...ui, id: 'api', dependsOn: [], owns: ['src/web'] },
      ],
      { ids: ['api', 'api-2'], renamed: ['server->api', 'api->api-2'] },
    ],
    [
      'does not match a story to one whose dependency it no longer has once ids are final',
      [api, ui],
      [{ ...api, id: 'server' }, story('api', { owns: ['src/web'] }), { ...ui, id: 'ui2' }],
      { ids: ['api', 'api-2', 'ui2<-api-2'], renamed: ['server->api', 'api->api-2'] },
    ],
    [
      'never hands out a fresh id the previous plan had',
      [api, ui, story('api-2', { owns: ['old'] })],
      [{ ...api, id: 'server' }, story('api', { owns: ['src/web'] })],
      { ids: ['api', 'api-3'], renamed: ['server->api', 'api->api-3'] },
    ],
    [
      'matches regardless of the order of paths and dependencies',
      [story('x', { owns: ['a', 'b'], reads: ['c', 'd'], dependsOn: ['api'] }), api],
      [
        story('y', {
          owns: ['b', 'a'],
          reads: ['d', 'c'],
          dependsOn: ['api'],
          title: 'Story x',
          description: 'Build x.',
          acceptance: ['x works'],
        }),
        api,
      ],
      { ids: ['x<-api', 'api'], renamed: ['y->x'] },
    ],
    [
      'tells apart stories that differ only in acceptance',
      [api],
      [{ ...api, id: 'api2', acceptance: ['api works', 'and is fast'] }],
      { ids: ['api2'], renamed: [] },
    ],
  ])('%s', (_name, previous, proposed, expected) => {
    expect(kept(previous, proposed)).toEqual(expected);
  });

  it('gives back a plan with the same hashes as the previous one for kept stories', () => {
    const previous = plan([api, ui]);
    const r = keepStoryIds(
      previous,
      plan([
        { ...api, id: 'backend' },
        { ...ui, dependsOn: ['backend'] },
      ]),
    );
    expect(r.plan.hashes).toEqual(previous.hashes);
    expect(r.plan.waves).toEqual([['api'], ['ui']]);
  });

  it('keeps a fresh id within 48 characters', () => {
    const long = 'x'.repeat(48);
    const r = keepStoryIds(
      plan([story(long, { owns: ['a'] })]),
      plan([
        story('other', { ...story(long, { owns: ['a'] }), id: 'other' }),
        story(long, { owns: ['b'] }),
      ]),
    );
    expect(r.renamed).toEqual([
      { from: 'other', to: long },
      { from: long, to: `${'x'.repeat(46)}-2` },
    ]);
  });
});
