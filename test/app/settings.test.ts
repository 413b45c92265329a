/**
 * The settings of an event's handling are defaulted once, at intake: an entry that
 * cannot say the default branch (the orchestrate workflow run by hand, a story job
 * without its event) costs one read of the repository for it, however many steps of
 * the handling need it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { handleEpicEvent } from '../../src/orchestrator/index.js';
import {
  botComments,
  completeStory,
  planBody,
  startApp,
  startEpic,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
});
afterAll(() => w.close());

describe('an event handled without the default branch given', () => {
  it('reads it once for /revise, which finds the pull request and then decides', async () => {
    const epic = await startEpic(w, 'Revise', planBody([{ id: 'api' }]));
    await completeStory(w, epic, 'api');
    const issue = await w.repo.labelledIssue(epic);
    const reads = (): number => w.gh.stats.rest['repos/get'] ?? 0;
    const before = reads();
    const result = await handleEpicEvent(
      { repo: w.repo },
      { kind: 'comment', issue, body: '/revise', sender: { login: 'alice', type: 'User' } },
    );
    expect(result.epic).toBe(epic);
    expect(botComments(w, epic).at(-1)).toBe(
      'No new review comments from people with write permission: no review round started.',
    );
    expect(reads() - before).toBe(1);
  });
});
