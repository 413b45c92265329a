/**
 * A decision that finds nothing to change writes nothing: a redelivered
 * `workflow_run.completed`, or another decider deciding later on the same facts (as the
 * App does after a story job's own decision), leaves the comments, the state branch and
 * the board as they are. A comment is not rewritten for its time alone: it keeps showing
 * the time of its last real change.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { STATE_BRANCH } from '../../src/adapters/github/state-store.js';
import { runTitle } from '../../src/core/epic/index.js';
import { handleEpicEvent } from '../../src/orchestrator/index.js';
import type { GitHubDouble } from '../github-double/index.js';
import {
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
  writeConfig,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
});
afterAll(() => w.close());

const BOARD = 'https://github.com/orgs/acme/projects/1';
const STORY_WORKFLOW = '.github/workflows/epicflow-story.yml';

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

/** Issue title prefix (story id) → its Status option name on the board. */
function boardStatus(gh: GitHubDouble): Record<string, string> {
  const project = gh.state.project(OWNER, 1);
  const status = project?.fields.find((f) => f.name === 'Status');
  const out: Record<string, string> = {};
  for (const item of project?.items ?? []) {
    const issue = gh.state.issues(OWNER, REPO).find((i) => i.nodeId === item.contentId);
    const value = status === undefined ? undefined : item.values.get(status.id);
    const option =
      value !== undefined && 'singleSelectOptionId' in value
        ? status?.options.find((o) => o.id === value.singleSelectOptionId)?.name
        : undefined;
    out[issue?.title.split(':')[0] ?? item.contentId] = option ?? '';
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
    const self = { id: w.repoId, fullName: `${OWNER}/${REPO}` };
    const later = new Date(Date.now() + 10 * 60_000);
    const fresh = requests(gh);
    await handleEpicEvent(
      {
        repo: w.repo,
        defaultBranch: 'main',
        storyWorkflow: 'epicflow-story.yml',
        now: () => later,
        createsSubIssues: false,
      },
      {
        kind: 'workflow-run',
        runId: run.runId,
        workflowPath: STORY_WORKFLOW,
        displayTitle: runTitle({ epic, story: 'api', attempt: 1 }),
        conclusion: 'success',
        origin: {
          event: 'workflow_dispatch',
          path: STORY_WORKFLOW,
          headBranch: run.ref,
          repository: self,
          headRepository: self,
        },
        repositoryId: w.repoId,
      },
    );
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
});
