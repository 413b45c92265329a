import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  botComments,
  completeStory,
  dispatched,
  OWNER,
  planBody,
  REPO,
  say,
  startApp,
  startEpic,
  type AppWorld,
} from './harness.js';
import { octokitFor } from '../github-double/client.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
});
afterAll(() => w.close());

describe("the epic pull request's checks", () => {
  it('the status comment shows them pending, failing and passing as CI reports them, and changes nothing else', async () => {
    const epic = await startEpic(w, 'Checks', planBody([{ id: 'api' }, { id: 'ui' }]));
    await completeStory(w, epic, 'api');
    const pr = w.gh.state.issues(OWNER, REPO).find((i) => i.pull?.head === `epic/${epic}`);
    if (pr === undefined) throw new Error('no epic pull request');
    const status = (): string =>
      botComments(w, epic).find((c) => c.includes('epicflow · epic')) ?? '';
    const line = (): string =>
      status()
        .split('\n')
        .find((l) => l.startsWith('Epic branch')) ?? '';
    // No CI has reported on the head commit yet: nothing to wait for, nothing shown.
    expect(line()).toMatch(
      new RegExp(
        `^Epic branch \`epic/${epic}\` · pull request #${pr.number} \\(draft\\) · updated`,
      ),
    );

    const head = (await w.gh.state.ref(OWNER, REPO, `epic/${epic}`)) ?? '';
    const ci = octokitFor(w.gh, w.gh.seed.actionsToken({ owner: OWNER, repo: REPO }).token);
    const base = { owner: OWNER, repo: REPO, head_sha: head };
    const build = await ci.rest.checks.create({ ...base, name: 'build', status: 'in_progress' });
    const lint = await ci.rest.checks.create({ ...base, name: 'lint' });
    await ci.rest.repos.createCommitStatus({
      owner: OWNER,
      repo: REPO,
      sha: head,
      state: 'success',
      context: 'test',
    });
    const started = dispatched(w.gh, epic);
    await say(w, epic, '/status');
    expect(line()).toContain(
      `· pull request #${pr.number} (draft) · checks: pending (2: build, lint) · updated`,
    );

    for (const run of [build, lint]) {
      await ci.rest.checks.update({
        owner: OWNER,
        repo: REPO,
        check_run_id: run.data.id,
        conclusion: 'success',
      });
    }
    await ci.rest.repos.createCommitStatus({
      owner: OWNER,
      repo: REPO,
      sha: head,
      state: 'failure',
      context: 'test',
    });
    await say(w, epic, '/status');
    expect(line()).toContain('· checks: failing (test) · updated');

    await ci.rest.repos.createCommitStatus({
      owner: OWNER,
      repo: REPO,
      sha: head,
      state: 'success',
      context: 'test',
    });
    await say(w, epic, '/status');
    expect(line()).toContain('· checks: passing · updated');

    // Shown, never acted on: no story started or stopped, the pull request still a draft.
    expect(dispatched(w.gh, epic)).toEqual(started);
    expect(w.gh.state.issue(OWNER, REPO, pr.number)?.pull?.draft).toBe(true);
  });
});
