/**
 * A story's publish job (src/jobs/github/story-publish.ts), called in-process as the Action's
 * shell calls it, given a result it cannot trust or one another publish job publishes at the
 * same time. A result record that is not one: the story is failed with the field named, and
 * nothing is pushed. The shell's part of such a refusal (the publish step failing, its summary,
 * the record saved) is shown through the bundle by the publish job of a killed work job, which
 * finds no result at all (test/action/killed-job.test.ts). Two publish jobs of one work job's
 * result racing (a re-run while the first still runs): the story is merged once. A re-run after
 * the story was published is refused as stale through the bundle (test/action/work-publish.test.ts).
 * Two stories' publish jobs racing to move the epic head: both read it before either pushes
 * (the double holds the pushes until both came), so one push is refused and its job merges
 * again on the moved head; both are merged, once each, and recorded. How the bundle reports
 * its pushes (`pushes of the epic head` in the job summary) is test/action/story.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { describeError } from '../../src/core/errors.js';
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

let w: ActionWorld;
beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => {
  await w.close();
});

describe('the publish job refuses a result it cannot trust, on the story', () => {
  it('a malformed result record: the field is named, the story failed, nothing pushed', async () => {
    const epic = await startEpic(w, planBody([{ id: 'cart' }]));
    // The work job's input, its result folder holding a record that is not one.
    const input = await workInput(w, epic, 'cart');
    await mkdir(input.resultDir, { recursive: true });
    await writeFile(
      join(input.resultDir, 'result.json'),
      JSON.stringify({ version: 1, epic: String(epic), story: 'cart', attempt: 'one' }),
    );
    const events: string[] = [];
    const published = await publishJob(w, input, (m) => events.push(m));
    expect(published.record).toMatchObject({ status: 'failed' });
    expect(published.record.reason).toMatch(
      /^the publish job refused the work job's result: .*not a version 1 result: attempt/,
    );
    expect(published.pushes).toBe(0);
    expect(events.join('\n')).toMatch(/refused the work job's result: .*attempt/);
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('cart'))?.record).toMatchObject({
      status: 'failed',
      reason: published.record.reason,
    });
    expect(await w.gh.state.ref(OWNER, REPO, `story/${epic}/cart`)).toBeUndefined();
    expect(await w.gh.state.file(OWNER, REPO, `epic/${epic}`, 'src/cart/index.js')).toBeUndefined();
  });

  it('two publish jobs of one result racing: the story is merged once, both say so, nothing half-pushed', async () => {
    const epic = await startEpic(w, planBody([{ id: 'pay' }]));
    const input = await workInput(w, epic, 'pay');
    expect((await workJob(input)).record.status).toBe('done');
    // The second publish job of the same result, in a folder of its own.
    const again = { ...input, workspace: `${input.workspace}-again` };
    const ended = await Promise.all(
      [input, again].map((i) =>
        publishJob(w, i).then(
          (published) => ({ published }),
          (e: unknown) => ({ refused: describeError(e) }),
        ),
      ),
    );
    const head = await w.gh.state.ref(OWNER, REPO, `epic/${epic}`);
    const merges = (await epicMergeTrailers(w, epic)).flat();
    expect(merges).toEqual(['pay']);
    // One merged it; the other found it merged (the same merge recorded, nothing pushed),
    // or, starting after the record was written, was refused as stale, or, merging in the
    // same second on the same head, made the very same merge commit, so its push changed nothing.
    const said = ended.map((e) => {
      if ('refused' in e)
        return /this job is stale|is done/.test(e.refused) ? 'stale' : `unexpected: ${e.refused}`;
      const { record, events } = e.published;
      if (record.status !== 'done' || record.mergeCommit !== head)
        return `unexpected: ${record.status} ${record.reason ?? ''}`;
      return events.some((m) =>
        /already merged into epic\/\d+ \([0-9a-f]{12}\): nothing to push/.test(m),
      )
        ? 'found it merged'
        : 'merged';
    });
    expect([
      ['merged', 'stale'],
      ['found it merged', 'merged'],
      ['merged', 'merged'],
    ]).toContainEqual(said.sort());
    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    expect((await store.read('pay'))?.record).toMatchObject({ status: 'done', mergeCommit: head });
  });
});

describe("two stories' publish jobs finishing at the same moment", () => {
  let epic: number;
  let published: Map<string, PublishJobResult>;
  beforeAll(async () => {
    epic = await startEpic(w, planBody([{ id: 'cart' }, { id: 'search' }]));
    const inputs = await Promise.all(['cart', 'search'].map((s) => workInput(w, epic, s)));
    for (const input of inputs) expect((await workJob(input)).record.status).toBe('done');
    // Both publish jobs read the epic head before either moves it.
    w.gh.holdPushes(`refs/heads/epic/${epic}`, 2);
    const results = await Promise.all(inputs.map((input) => publishJob(w, input)));
    published = new Map(results.map((r, i) => [inputs[i]?.story ?? '', r]));
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
