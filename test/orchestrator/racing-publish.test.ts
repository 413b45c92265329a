/**
 * Two stories' publish jobs racing to move the epic head, called in-process against the
 * GitHub double and real git (src/jobs/github/story-publish.ts): both read the epic head
 * before either pushes (the double holds the pushes until both came), so one push is refused
 * and its job merges again on the moved head. Both are merged, once each, and recorded. How
 * the bundle reports its pushes (`pushes of the epic head` in the job summary) is
 * test/action/story.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import type { PublishJobResult } from '../../src/jobs/github/story-publish.js';
import {
  epicMergeTrailers,
  OWNER,
  planBody,
  REPO,
  startEpic,
  startWorld,
  type ActionWorld,
} from '../action/support/world.js';
import { publishJob, workInput, workJob } from './support/story-jobs.js';

describe('two publish jobs finishing at the same moment', () => {
  let w: ActionWorld;
  let epic: number;
  let published: Map<string, PublishJobResult>;
  beforeAll(async () => {
    w = await startWorld();
    epic = await startEpic(w, planBody([{ id: 'cart' }, { id: 'search' }]));
    const inputs = await Promise.all(['cart', 'search'].map((s) => workInput(w, epic, s)));
    for (const input of inputs) expect((await workJob(input)).record.status).toBe('done');
    // Both publish jobs read the epic head before either moves it.
    w.gh.holdPushes(`refs/heads/epic/${epic}`, 2);
    const results = await Promise.all(inputs.map((input) => publishJob(w, input)));
    published = new Map(results.map((r, i) => [inputs[i]?.story ?? '', r]));
  });
  afterAll(async () => {
    await w.close();
  });

  it('both merged on the epic head, one after merging again on the head the other moved', async () => {
    expect((await epicMergeTrailers(w, epic)).flat().sort()).toEqual(['cart', 'search']);
    for (const story of ['cart', 'search']) {
      expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, `src/${story}/index.js`)).toBe(
        `export const story = "${story}";\n`,
      );
    }
    const results = [...published.values()];
    expect(results.map((r) => r.pushes).sort()).toEqual([1, 2]);
    const again = results.find((r) => r.pushes === 2);
    expect(again?.events).toContain(`epic/${epic} moved on GitHub; merging again`);
    expect(again?.events).toContain('published after 2 pushes');
  });

  it('records both as done, each with its own merge commit', async () => {
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    const records = await store.listStories();
    expect(records.map((r) => [r.story, r.status])).toEqual([
      ['cart', 'done'],
      ['search', 'done'],
    ]);
    for (const r of records) {
      expect(r.mergeCommit).toBe(published.get(r.story)?.record.mergeCommit);
      expect(r.mergeCommit).toBeDefined();
    }
  });
});
