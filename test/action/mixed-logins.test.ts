/**
 * The App hosts the orchestration while the story jobs run on another identity
 * (the workflow's own token, `bot-login` left at its default): each job ends
 * with the orchestrator's decision, which must find the App's sub-issues and
 * sticky comments rather than open a second set. The first story is delivered by the App
 * harness (`completeStory`, the App deciding after it); the second is a bundle job acting as
 * the workflow's token, and its decision completes the epic.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import YAML from 'yaml';
import { STATE_BRANCH } from '../../src/adapters/github/state-store.js';
import type { SeededUser } from '../github-double/index.js';
import { completeStory, OWNER, REPO, startEpic, type AppWorld } from '../app/harness.js';
import { startAppActionWorld, type AppActionWorld } from './support/app-world.js';
import {
  checkout,
  configText,
  dispatchOf,
  dispatched,
  planBody,
  runJob,
  type ActionWorld,
} from './support/world.js';

let world: AppActionWorld;
let bundle: string;
let app: AppWorld;
let w: ActionWorld;
/** The identity of a workflow's own token. */
let actions: SeededUser;

beforeAll(async () => {
  world = await startAppActionWorld('mixed', (dumps: string) => configText(dumps, {}));
  ({ app, w, bundle } = world);
  actions = app.gh.seed.user({ login: 'github-actions[bot]', type: 'Bot', permission: 'write' });
});
afterAll(() => world.close());

describe('story jobs acting as another login than the App', () => {
  it('reuse the sub-issues and comments the App made: one of each after the epic completes', async () => {
    const epic = await startEpic(
      app,
      'Checkout',
      planBody([{ id: 'cart' }, { id: 'pay', dependsOn: ['cart'] }]),
    );
    expect(dispatched(w, epic)).toEqual(['cart#1']);
    // A marker in someone else's comment is never epicflow's.
    const planted = 'Mine now.\n\n<!-- epicflow:status -->';
    w.gh.act.comment('alice', { owner: OWNER, repo: REPO, number: epic, body: planted });
    await w.gh.idle();
    // cart as the App's harness delivers it (its module as the gate wants it), pay as a job.
    await completeStory(app, epic, 'cart', 1, undefined, {
      path: 'src/cart/index.js',
      content: 'export const story = "cart";\n',
    });
    const story = 'pay';
    const { runId } = dispatchOf(w, epic, story);
    w.gh.act.startWorkflowRun(runId);
    await w.gh.idle();
    const job = await runJob(w, bundle, {
      name: story,
      workspace: await checkout(w, story),
      // The workflow's own token and no `bot-login`: the job acts as github-actions[bot].
      inputs: {
        mode: 'story',
        epic: String(epic),
        story,
        attempt: '1',
        'github-token': actions.token,
      },
      env: { GITHUB_TOKEN: actions.token },
      runId,
    });
    expect({ code: job.code, stderr: job.stderr }).toEqual({ code: 0, stderr: '' });
    w.gh.act.completeWorkflowRun(runId, 'success');
    await w.gh.idle();
    expect(dispatched(w, epic)).toEqual(['cart#1', 'pay#1']);
    const pr = await w.repo.findOpenPr(`epic/${epic}`, 'main');
    expect(pr?.draft).toBe(false);

    // One sub-issue per story, all the App's, all closed.
    const subs = w.gh.state
      .issues(OWNER, REPO)
      .filter((i) => /<!-- epicflow:story:/.test(i.body ?? ''));
    expect(subs.map((s) => [s.title, s.author, s.state])).toEqual([
      ['cart: Build cart', 'epicflow[bot]', 'closed'],
      ['pay: Build pay', 'epicflow[bot]', 'closed'],
    ]);
    // One status comment on the epic, one report comment on the pull request.
    const marked = (issue: number, marker: string): string[] =>
      w.gh.state
        .comments(OWNER, REPO, issue)
        .filter((c) => c.body.includes(`<!-- epicflow:${marker} -->`))
        .map((c) => c.author);
    expect(marked(epic, 'status')).toEqual(['epicflow[bot]', 'alice']);
    expect(marked(pr?.number ?? 0, 'report')).toEqual(['epicflow[bot]']);
    // The jobs brought them up to date: the status tells the epic is complete.
    const comments = w.gh.state.comments(OWNER, REPO, epic);
    expect(comments.find((c) => c.author === 'alice')?.body).toBe(planted);
    // The epic's first decision recorded who opened it.
    const doc = await w.gh.state.file(OWNER, REPO, STATE_BRANCH, `epics/${epic}/epic.json`);
    expect(JSON.parse(doc ?? '{}')).toMatchObject({ owner: 'epicflow[bot]' });
  });
});

describe('the orchestrate template', () => {
  it('gives the action the App credentials the way the story template does, the login left to them', async () => {
    /** The action's inputs in `job` of `file` (the story template: its publish job, which writes). */
    const withOf = async (file: string, job?: string): Promise<Record<string, string>> => {
      const doc = YAML.parse(await readFile(new URL(`../../${file}`, import.meta.url), 'utf8')) as {
        jobs: Record<string, { steps: { uses?: string; with?: Record<string, string> }[] }>;
      };
      const steps = Object.entries(doc.jobs)
        .filter(([name]) => job === undefined || name === job)
        .flatMap(([, j]) => j.steps);
      return steps.find((s) => s.uses === 'epicflow/epicflow@v0')?.with ?? {};
    };
    const pick = (w: Record<string, string>): Record<string, string | undefined> => ({
      'app-id': w['app-id'],
      'app-private-key': w['app-private-key'],
      'github-token': w['github-token'],
      'bot-login': w['bot-login'],
    });
    for (const variant of ['app', 'github-token']) {
      const story = await withOf(`examples/workflows/${variant}/epicflow-story.yml`, 'publish');
      const orchestrate = await withOf(`examples/workflows/${variant}/epicflow-orchestrate.yml`);
      expect(orchestrate['mode']).toBe('orchestrate');
      expect(pick(orchestrate)).toEqual(pick(story));
      expect(orchestrate['bot-login']).toBe('${{ vars.EPICFLOW_BOT_LOGIN }}');
    }
  });
});
