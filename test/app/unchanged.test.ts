/**
 * A decision that finds nothing to change writes nothing: a redelivered
 * `workflow_run.completed`, or another decider deciding later on the same facts (as the
 * App does after a story job's own decision), leaves the comments, the state branch and
 * the board as they are. A comment is not rewritten for its time alone: it keeps showing
 * the time of its last real change.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { STATE_BRANCH } from '../../src/adapters/github/state-store.js';
import { CONFLICT_PAUSE_MS } from '../../src/orchestrator/decide.js';
import type { GitHubDouble } from '../github-double/index.js';
import {
  boardStatus,
  APP_CONFIG,
  botComments,
  completeStory,
  dispatched,
  dispatchOf,
  OWNER,
  planBody,
  REPO,
  startApp,
  startEpic,
  jobDecision,
  storyWrites,
  writeConfig,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
});
afterAll(() => w.close());

const BOARD = 'https://github.com/orgs/acme/projects/1';

/** Every request so far, by REST operation and GraphQL document. */
function requests(gh: GitHubDouble): Map<string, number> {
  return new Map([
    ...Object.entries(gh.stats.rest),
    ...Object.entries(gh.stats.graphql).map(([op, n]): [string, number] => [`graphql ${op}`, n]),
  ]);
}

function since(gh: GitHubDouble, before: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [op, n] of requests(gh)) {
    const d = n - (before.get(op) ?? 0);
    if (d > 0) out[op] = d;
  }
  return out;
}

describe('nothing changed, nothing written', () => {
  it('a redelivered workflow_run.completed and a later decision on the same facts write no comment, file or board value; a card moved by hand is still put back', async () => {
    const { gh } = w;
    gh.seed.project({ owner: OWNER, number: 1, title: 'Epics' });
    await writeConfig(w, `${APP_CONFIG}labels: { epic: epic }\nboard: { project: "${BOARD}" }\n`);
    const epic = await startEpic(
      w,
      'Quiet',
      planBody([{ id: 'api' }, { id: 'ui', dependsOn: ['api'] }]),
    );
    await completeStory(w, epic, 'api');
    expect(dispatched(gh, epic)).toEqual(['api#1', 'ui#1']);
    const pr = gh.state.issues(OWNER, REPO).find((i) => i.pull !== undefined)?.number ?? 0;
    const shown = {
      status: botComments(w, epic),
      report: botComments(w, pr),
      state: await gh.state.ref(OWNER, REPO, STATE_BRANCH),
      board: boardStatus(gh),
    };
    expect(shown.board).toEqual({ api: 'Done', ui: 'Active' });
    const now = async (): Promise<typeof shown> => ({
      status: botComments(w, epic),
      report: botComments(w, pr),
      state: await gh.state.ref(OWNER, REPO, STATE_BRANCH),
      board: boardStatus(gh),
    });

    // The run's completion again, in a delivery of its own (a redelivered one is known by
    // its id and not handled twice): the view says everything is done (the board's values
    // came with it), so the decision reads once and writes nothing, not even the report's time.
    const run = dispatchOf(gh, epic, 'api');
    const completedAgain = async (): Promise<void> => {
      gh.act.completeWorkflowRun(run.runId, 'success');
      await gh.idle();
    };
    const before = requests(gh);
    await completedAgain();
    expect(since(gh, before)).toEqual({ 'graphql EpicflowEpicView': 1 });
    expect(await now()).toEqual(shown);

    // Another decider (a fresh process, as the story job's reconcile) on the same run ten
    // minutes later: it reads, and writes nothing; the comments keep their time.
    const later = new Date(Date.now() + 10 * 60_000);
    const fresh = requests(gh);
    await jobDecision(w, epic, 'api', { now: () => later });
    // Reads only: the view (the start commit's message comes with the head) and the board
    // (this process did not know it was configured).
    expect(since(gh, fresh)).toEqual({
      'graphql EpicflowEpicView': 1,
      'graphql EpicflowBoard': 1,
    });
    expect(await now()).toEqual(shown);

    // Someone moves ui's card to Done by hand: the next decision sees it in the view's
    // values and puts the card back, with one write and no read of the board of its own.
    const project = gh.state.project(OWNER, 1);
    const status = project?.fields.find((f) => f.name === 'Status');
    const done = status?.options.find((o) => o.name === 'Done')?.id ?? '';
    const ui = gh.state.issues(OWNER, REPO).find((i) => i.title.startsWith('ui:'));
    project?.items
      .find((i) => i.contentId === ui?.nodeId)
      ?.values.set(status?.id ?? '', { singleSelectOptionId: done });
    expect(boardStatus(gh)).toEqual({ api: 'Done', ui: 'Done' });
    const moved = requests(gh);
    await completedAgain();
    expect(since(gh, moved)).toEqual({
      'graphql EpicflowEpicView': 1,
      'graphql EpicflowUpdateValues': 1,
    });
    expect(await now()).toEqual(shown);

    // A real change (ui done) is written, with the time it happened.
    await completeStory(w, epic, 'ui');
    expect(botComments(w, epic)).not.toEqual(shown.status);
    expect(botComments(w, epic)[0]).toContain('all 2 stories done');
    expect(boardStatus(gh)).toEqual({ api: 'Done', ui: 'Done' });
  });

  it('a decision that loses a compare-and-swap pauses before deciding again, then does what is left once', async () => {
    const { gh } = w;
    await writeConfig(w, `${APP_CONFIG}labels: { epic: epic }\nboard: { project: "${BOARD}" }\n`);
    const epic = await startEpic(
      w,
      'Race',
      planBody([{ id: 'cart' }, { id: 'pay', dependsOn: ['cart'] }]),
    );
    expect(dispatched(gh, epic)).toEqual(['cart#1']);
    await storyWrites(w, epic, 'cart');
    // The job's decision loses its first record write: another decider wrote meanwhile.
    gh.faults.add({ route: 'repos/create-or-update-file-contents', status: 409 });
    const pauses: number[] = [];
    const result = await jobDecision(w, epic, 'cart', {
      sleep: async (ms) => {
        pauses.push(ms);
        return Promise.resolve();
      },
    });
    // One pause, then a fresh decision: pay dispatched once, cart's sub-issue closed.
    expect(pauses).toEqual([CONFLICT_PAUSE_MS]);
    expect(result.dispatched).toEqual(['pay#1']);
    expect(dispatched(gh, epic)).toEqual(['cart#1', 'pay#1']);
    const cart = gh.state.issues(OWNER, REPO).find((i) => i.title.startsWith('cart:'));
    expect(cart?.state).toBe('closed');
    expect(botComments(w, epic)[0]).toContain('| 1 | 1 | 0 | 0 | 0 | 2 |');
    // The run completes: the App's decision finds it all done and writes nothing.
    const before = requests(gh);
    gh.act.completeWorkflowRun(dispatchOf(gh, epic, 'cart').runId, 'success');
    await gh.idle();
    expect(since(gh, before)).toEqual({ 'graphql EpicflowEpicView': 1 });
  });
});
