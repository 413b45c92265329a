/**
 * Deferred findings end to end: the App on the GitHub double with a story's jobs called
 * in-process as the runner (test/orchestrator/support/story-jobs.ts; the bundle's own part is
 * test/action/story.test.ts's), `judge.deferNonBlocking` on. The judge's minor finding does not hold a story back:
 * the story job merges it, its record keeps the finding, and the pull request's report
 * lists it under Deferred with `/resume deferred` as the next step. That command runs one
 * follow-up round: the story again (a new attempt on its branch) with the finding in its
 * prompt, judged and merged again.
 *
 */
import { agentScript } from '../action/support/agents.js';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import {
  botComments,
  completeStory,
  say,
  startEpic,
  writeRecord,
  type AppWorld,
} from '../app/harness.js';
import { startAppWorld } from '../action/support/app-world.js';
import { dispatched, planBody, type ActionWorld } from '../action/support/world.js';
import { runDispatchedStory } from './support/story-jobs.js';

const AGENT = agentScript('deferred-agent.mjs');

let app: AppWorld;
let w: ActionWorld;

function config(dumps: string): string {
  const command = (role: string): string => JSON.stringify(['node', AGENT, dumps, role]);
  return [
    'executors:',
    '  - id: scripted',
    '    harness: command',
    `    command: ${command('coder')}`,
    '    slots: 4',
    '  - id: reviewer',
    '    harness: command',
    `    command: ${command('judge')}`,
    '    roles: [judge]',
    'gates: ["sh check.sh"]',
    'fixRounds: 0',
    'judge: { executor: reviewer, rounds: 1, deferNonBlocking: true }',
    '',
  ].join('\n');
}

beforeAll(async () => {
  ({ app, w } = await startAppWorld('deferred', config));
});
afterAll(() => w.close());

async function prompts(epic: number, story: string, role: string): Promise<string[]> {
  const prefix = `${epic}-${story}-${role}-`;
  const files = (await readdir(w.dumps)).filter((f) => f.startsWith(prefix)).sort();
  return Promise.all(files.map((f) => readFile(join(w.dumps, f), 'utf8')));
}

/**
 * `item` is the App harness's (`completeStory`): its first attempt merges and leaves a
 * deferred finding in its record, as `list`'s job does; its follow-up drops it. Only
 * `list`'s jobs run: a second story's jobs would show the same rules again.
 */
async function completeItem(epic: number, attempt: number, deferred?: string): Promise<void> {
  await writeRecord(app, epic, 'item', ({ deferred: _, ...r }) =>
    deferred === undefined ? r : { ...r, deferred: [deferred] },
  );
  await completeStory(app, epic, 'item', attempt);
}

describe('deferred findings on GitHub', () => {
  it('a minor finding is listed under Deferred on the pull request, and /resume deferred follows it up once', async () => {
    const epic = await startEpic(app, 'Catalog', planBody([{ id: 'list' }, { id: 'item' }]));
    const finding = (story: string): string =>
      `minor: src/${story}/index.js: say what the module is for`;
    await completeItem(epic, 1, finding('item'));
    await runDispatchedStory(w, epic, 'list', 1);

    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    const records = new Map((await store.listStories()).map((r) => [r.story, r]));
    expect(records.get('list')).toMatchObject({ status: 'done', deferred: [finding('list')] });
    const pr = await w.repo.findOpenPr(`epic/${epic}`, 'main');
    expect(pr?.draft).toBe(false);
    const report = (): string =>
      botComments(app, pr?.number ?? 0).find((b) => b.includes('epicflow:report')) ?? '';
    expect(report()).toContain(
      [
        '## Deferred',
        '',
        'Findings below critical that the judge let these stories merge with:',
        '',
        '- `list` Build list',
        `  - ${finding('list')}`,
        '- `item` Build item',
        `  - ${finding('item')}`,
      ].join('\n'),
    );
    expect(report()).toContain(
      '2 deferred findings on `list`, `item` (listed under Deferred). Comment `/resume deferred` for one follow-up round over them',
    );

    await say(app, epic, '/resume deferred');
    expect(dispatched(w, epic)).toEqual(['list#1', 'item#1', 'list#2', 'item#2']);
    expect(botComments(app, epic).join('\n')).toContain(
      'Follow-up round started by @alice: 2 deferred findings on `list`, `item`',
    );
    await completeItem(epic, 2);
    await runDispatchedStory(w, epic, 'list', 2);

    const [first, again] = await prompts(epic, 'list', 'coder');
    expect(first).not.toContain('## Deferred findings');
    expect(again).toContain('## Deferred findings (a follow-up round)');
    expect(again).toContain(`- ${finding('list')}`);
    const judged = await prompts(epic, 'list', 'judge');
    expect(judged).toHaveLength(2);
    expect(judged[1]).toContain('## A follow-up round of deferred findings');

    const after = new Map((await store.listStories()).map((r) => [r.story, r]));
    expect(after.get('list')).toMatchObject({ status: 'done', attempt: 2 });
    expect(after.get('list')?.deferred).toBeUndefined();
    const merged = await w.repo.mergedStories(`epic/${epic}`);
    expect(after.get('list')?.mergeCommit).toBe(merged.get('list'));
    expect(report()).not.toContain('## Deferred');
    expect(report()).toContain('follow-up round over 1 deferred finding');
    expect((await w.repo.findOpenPr(`epic/${epic}`, 'main'))?.draft).toBe(false);

    // One round: asked again, nothing is left to follow up.
    await say(app, epic, '/resume deferred');
    expect(dispatched(w, epic)).toHaveLength(4);
    expect(botComments(app, epic).join('\n')).toContain(
      'No follow-up round: no story has deferred findings left to follow up.',
    );
  });
});
