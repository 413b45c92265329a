/**
 * How the App knows which story a finished run was: the story workflow's `run-name`
 * puts the ids into the run's title. A workflow without it names no story; the run is
 * left alone with a warning that says which line is missing.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { handleEpicEvent } from '../../src/orchestrator/index.js';
import {
  completeStory,
  dispatched,
  dispatchOf,
  OWNER,
  planBody,
  REPO,
  startApp,
  startEpic,
  type AppWorld,
} from './harness.js';

let w: AppWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const NO_RUN_NAME = 'name: epicflow story\non:\n  workflow_dispatch:\njobs: {}\n';
const TWO = [{ id: 'cart' }, { id: 'pay', dependsOn: ['cart'] }];
const RUN_NAME_LINE =
  '`run-name: epicflow epic ${{ inputs.epic }} story ${{ inputs.story }} attempt ${{ inputs.attempt }}`';

describe('runs of a story workflow without run-name', () => {
  it('are left alone with a warning naming the missing line', async () => {
    w = await startApp({ files: { '.github/workflows/epicflow-story.yml': NO_RUN_NAME } });
    const epic = await startEpic(w, 'Checkout', planBody(TWO));
    await completeStory(w, epic, 'cart');
    // The run completed, but its title is the workflow's name: nothing says it was cart's.
    expect(dispatched(w.gh, epic)).toEqual(['cart#1']);

    const { runId } = dispatchOf(w.gh, epic, 'cart');
    const run = w.gh.state.runs(OWNER, REPO).find((r) => r.id === runId);
    expect(run?.displayTitle).toBe('epicflow story');
    const event = {
      kind: 'workflow-run',
      runId,
      workflowPath: '.github/workflows/epicflow-story.yml',
      displayTitle: 'epicflow story',
      conclusion: 'success',
    } as const;
    const warnings: string[] = [];
    const log = { info: () => undefined, warn: (m: string) => warnings.push(m) };
    const ignored = await handleEpicEvent({ repo: w.repo, log }, event);
    const reason =
      `run ${runId} of .github/workflows/epicflow-story.yml, titled "epicflow story", names no story: ` +
      `the story workflow needs the top-level line ${RUN_NAME_LINE}`;
    expect(ignored).toEqual({ outcome: 'ignored', reason, dispatched: [] });
    expect(warnings).toEqual([reason]);
  });
});
