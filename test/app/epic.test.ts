import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import type { GitHubDouble } from '../github-double/index.js';
import {
  boardStatus,
  botComments,
  completeStory,
  dispatched,
  OWNER,
  planBody,
  REPO,
  startApp,
  APP_CONFIG,
  writeConfig,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
});
afterAll(() => w.close());

const FIVE = [
  { id: 'api' },
  { id: 'db' },
  { id: 'ui', dependsOn: ['api'] },
  { id: 'sync', dependsOn: ['api', 'db'] },
  { id: 'docs', dependsOn: ['ui', 'sync'] },
];

/** Plain git in the double's bare repository. */
async function git(gh: GitHubDouble, args: readonly string[]): Promise<string> {
  return Promise.resolve(
    execFileSync('git', args, { cwd: gh.state.repoDir(OWNER, REPO), encoding: 'utf8' }).trim(),
  );
}

describe('a 5-story epic in 3 waves, from label to delivered', () => {
  it('runs every story once, in dependency order, keeps a board from nothing, and finishes the pull request', async () => {
    const { gh } = w;
    gh.seed.project({ owner: OWNER, number: 1, title: 'Epics' });
    await writeConfig(
      w,
      `${APP_CONFIG}labels: { epic: epic }\nboard: { project: "https://github.com/orgs/acme/projects/1" }\n`,
    );
    const epic = gh.seed.issue({
      owner: OWNER,
      repo: REPO,
      title: 'Checkout',
      body: planBody(FIVE),
      author: 'alice',
    });
    gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: epic.number, label: 'epic' });
    await gh.idle();
    expect(dispatched(gh, epic.number)).toEqual(['api#1', 'db#1']);

    // The same delivery ten times: nothing new.
    const label = gh.deliveries.find((d) => d.event === 'issues' && d.action === 'labeled');
    if (label === undefined) throw new Error('no label delivery');
    for (let i = 0; i < 10; i++) await gh.redeliver(label.id);
    await gh.idle();
    expect(dispatched(gh, epic.number)).toEqual(['api#1', 'db#1']);
    // The label again (a new delivery): decided again from the state, still nothing new.
    gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: epic.number, label: 'epic' });
    await gh.idle();
    expect(dispatched(gh, epic.number)).toEqual(['api#1', 'db#1']);

    const subs = gh.state.issue(OWNER, REPO, epic.number)?.subIssueIds ?? [];
    expect(subs).toHaveLength(5);
    const fields = gh.state.project(OWNER, 1)?.fields.map((f) => f.name);
    expect(fields).toEqual(['Title', 'Status', 'Wave', 'Executor', 'Tokens', 'Cost']);
    expect(boardStatus(gh)).toEqual({
      api: 'Active',
      db: 'Active',
      ui: 'Planned',
      sync: 'Planned',
      docs: 'Planned',
    });
    // The epic branch starts with one empty commit on main, so the draft opens right away.
    const main = await gh.state.ref(OWNER, REPO, 'main');
    const start = await gh.state.ref(OWNER, REPO, `epic/${epic.number}`);
    const startCommit = await git(gh, ['log', '-1', '--format=%P%n%s', start ?? '']);
    expect(startCommit).toBe(`${main}\nStart epic #${epic.number}: Checkout`);
    expect(await git(gh, ['diff', '--stat', main ?? '', start ?? ''])).toBe('');
    const pulls = (): ReturnType<GitHubDouble['state']['issues']> =>
      gh.state.issues(OWNER, REPO).filter((i) => i.pull !== undefined);
    expect(pulls().map((p) => [p.title, p.pull?.draft])).toEqual([['Epic #1: Checkout', true]]);

    await completeStory(w, epic.number, 'api');
    expect(dispatched(gh, epic.number)).toEqual(['api#1', 'db#1', 'ui#1']);
    expect(boardStatus(gh)).toMatchObject({ api: 'Done', ui: 'Active' });
    expect(pulls()).toHaveLength(1);
    await completeStory(w, epic.number, 'db');
    expect(dispatched(gh, epic.number)).toEqual(['api#1', 'db#1', 'ui#1', 'sync#1']);
    await completeStory(w, epic.number, 'ui');
    await completeStory(w, epic.number, 'sync');
    expect(dispatched(gh, epic.number)).toEqual(['api#1', 'db#1', 'ui#1', 'sync#1', 'docs#1']);
    await completeStory(w, epic.number, 'docs');

    expect(pulls()).toHaveLength(1);
    const pr = pulls()[0];
    expect(pr?.pull?.draft).toBe(false);
    const status = botComments(w, epic.number);
    expect(status).toHaveLength(1);
    expect(status[0]).toContain('all 5 stories done');
    expect(status[0]).toContain('Pull request #');
    const report = botComments(w, pr?.number ?? 0);
    expect(report).toHaveLength(1);
    expect(report[0]).toContain('```mermaid');
    for (const id of subs) {
      expect(gh.state.issues(OWNER, REPO).find((i) => i.id === id)?.state).toBe('closed');
    }
    expect(boardStatus(gh)).toEqual({
      api: 'Done',
      db: 'Done',
      ui: 'Done',
      sync: 'Done',
      docs: 'Done',
    });
    expect(gh.deliveries.filter((d) => d.status !== 200)).toEqual([]);
  });
});
