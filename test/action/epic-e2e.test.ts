/**
 * The whole epic end to end with the App: a real probot App hears the label,
 * each finished run and a person's /retry; every story job is the Action's
 * bundle run as a process against GitHub, merging over HTTP git. Six stories
 * in three waves show a stray restored, a fix round, a failure that /retry
 * fixes and a handover through exit 75.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { say, startEpic, type AppWorld } from '../app/harness.js';
import { startAppActionWorld, type AppActionWorld } from './support/app-world.js';
import { SIX, expectSixDelivered, runDispatched, sixStoryConfig, viaApp } from './support/epic.js';
import { OWNER, dispatched, planBody, type ActionWorld } from './support/world.js';

let world: AppActionWorld;
let bundle: string;
let app: AppWorld;
let w: ActionWorld;

beforeAll(async () => {
  world = await startAppActionWorld('epic-e2e', sixStoryConfig);
  ({ app, w, bundle } = world);
  app.gh.seed.project({ owner: OWNER, number: 1, title: 'Epics' });
});
afterAll(() => world.close());

describe('a six-story epic with the App, from label to a ready pull request', () => {
  it('delivers every story through a stray, a fix round, /retry and a handover', async () => {
    const epic = await startEpic(app, 'Checkout', planBody(SIX));
    expect(dispatched(w, epic)).toEqual(['stray#1', 'fix#1', 'cart#1']);

    const done = new Set<number>();
    const first = await runDispatched(w, bundle, epic, done, viaApp(w));
    expect(first.map((r) => [`${r.story}#${r.attempt}`, r.code])).toEqual([
      ['stray#1', 0],
      ['fix#1', 0],
      ['cart#1', 0],
      ['handover#1', 0],
      ['retry#1', 1],
    ]);
    expect(dispatched(w, epic)).not.toContain('docs#1');

    await say(app, epic, '/retry retry');
    expect(dispatched(w, epic)).toContain('retry#2');
    const second = await runDispatched(w, bundle, epic, done, viaApp(w));
    expect(second.map((r) => [`${r.story}#${r.attempt}`, r.code])).toEqual([
      ['retry#2', 0],
      ['docs#1', 0],
    ]);

    await expectSixDelivered(w, epic);
    // Each story dispatched once per attempt, by whoever got there first (job or App).
    expect([...dispatched(w, epic)].sort()).toEqual([
      'cart#1',
      'docs#1',
      'fix#1',
      'handover#1',
      'retry#1',
      'retry#2',
      'stray#1',
    ]);
  }, 720_000);
});
