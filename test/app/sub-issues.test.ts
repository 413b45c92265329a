import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { octokitFor } from '../github-double/client.js';
import {
  botComments,
  completeStory,
  dispatched,
  OWNER,
  REPO,
  say,
  startApp,
  startEpic,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
});
afterAll(() => w.close());

function storyBlock(yaml: string): string {
  return `A story of the epic.\n\n\`\`\`epicflow\n${yaml}\n\`\`\`\n`;
}

describe('a plan made of sub-issues', () => {
  it('reads one story per sub-issue, adds "blocked by" to dependsOn, and creates no sub-issue of its own', async () => {
    const { gh } = w;
    const octokit = octokitFor(gh, w.alice.token);
    const base = { owner: OWNER, repo: REPO };
    const epic = gh.seed.issue({
      ...base,
      title: 'Sub-issue epic',
      body: 'Stories are the sub-issues.',
      author: 'alice',
    });
    const db = gh.seed.issue({
      ...base,
      title: 'DB',
      author: 'alice',
      body: storyBlock('title: DB layer\ndescription: Tables.\nowns: [src/db]'),
    });
    const api = gh.seed.issue({
      ...base,
      title: 'API',
      author: 'alice',
      body: storyBlock('id: api\ntitle: API\ndescription: Routes.\nowns: [src/api]'),
    });
    const docs = gh.seed.issue({
      ...base,
      title: 'Docs',
      author: 'alice',
      body: storyBlock(
        'id: docs\ntitle: Docs\ndescription: Guide.\nowns: [docs]\ndependsOn: [api]',
      ),
    });
    for (const sub of [db, api, docs]) {
      await octokit.rest.issues.addSubIssue({
        ...base,
        issue_number: epic.number,
        sub_issue_id: sub.id,
      });
    }
    // api is blocked by the DB issue: api waits for issue-<db>.
    await octokit.rest.issues.addBlockedByDependency({
      ...base,
      issue_number: api.number,
      issue_id: db.id,
    });
    await gh.idle();

    gh.act.labelIssue('alice', { ...base, number: epic.number, label: 'epic' });
    await gh.idle();
    const dbId = `issue-${db.number}`;
    expect(dispatched(gh, epic.number)).toEqual([`${dbId}#1`]);
    expect(gh.state.issue(OWNER, REPO, epic.number)?.subIssueIds).toEqual([db.id, api.id, docs.id]);
    expect(botComments(w, epic.number)).toHaveLength(1);

    await completeStory(w, epic.number, dbId);
    expect(dispatched(gh, epic.number)).toEqual([`${dbId}#1`, 'api#1']);
    // The merged story's own sub-issue is closed.
    expect(gh.state.issue(OWNER, REPO, db.number)?.state).toBe('closed');
  });
});

describe('a report too long for one comment', () => {
  it('is cut under 65,536 characters with a note saying so', async () => {
    const epic = await startEpic(
      w,
      'Long report',
      `\`\`\`epicflow\nstories:\n  - id: big\n    title: Big\n    description: Lots.\n    owns: [src/big]\n\`\`\`\n`,
    );
    // The job recorded hundreds of handovers (each executor is shown in the report).
    const executors = Array.from(
      { length: 1500 },
      (_, i) => `executor-number-${i}-with-a-long-name`,
    );
    await completeStoryWith(w, epic, executors);
    const pr = w.gh.state
      .issues(OWNER, REPO)
      .find((i) => i.pull !== undefined && i.title.startsWith(`Epic #${epic}:`));
    const [report] = botComments(w, pr?.number ?? 0);
    expect(report?.length).toBeLessThanOrEqual(65_536);
    expect(report).toContain('… truncated');
  });
});

async function completeStoryWith(w: AppWorld, epic: number, executors: string[]): Promise<void> {
  await completeStory(w, epic, 'big');
  const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
  await store.update('big', (r) => {
    if (r === null) throw new Error('no record');
    return {
      ...r,
      executors,
      usage: executors.map((executor) => ({
        executor,
        model: 'm',
        tokens: { input: 1, cachedInput: 0, cacheWrite: 0, output: 1 },
        measured: true,
        costUsd: 0.001,
        costSource: 'cli' as const,
      })),
    };
  });
  await say(w, epic, '/status');
}
