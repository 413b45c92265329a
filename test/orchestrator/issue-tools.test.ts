/**
 * A coder asks for labels and assignees on its story's sub-issue (`issueTools`), in a story's
 * two jobs called in-process against the GitHub double and real git: its work job keeps what
 * the repository's lists allow and notes the rest; its publish job decides again from the
 * configuration it read itself and applies it to the story's own sub-issue only. A coder
 * asking for the epic label, a label not listed, or a login not listed gets nothing of it, on
 * its sub-issue or on the epic. With `issueTools` left out, nothing is applied and the coder
 * is told nothing of it: the publish job's side is test/app/issue-requests.test.ts's, the work
 * job's `decideIssueRequests` and the prompt are test/core/story/issue-requests.test.ts's and
 * test/core/prompt/prompt.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GitHubStateStore } from '../../src/adapters/github/state-store.js';
import { hasMarker, storyMarker } from '../../src/core/epic/markers.js';
import { agentScript } from '../action/support/agents.js';
import {
  OWNER,
  planBody,
  REPO,
  startEpic,
  startWorld,
  type ActionWorld,
} from '../action/support/world.js';
import { storyJobs } from './support/story-jobs.js';

const CODER = agentScript('issue-tools-coder.mjs');

describe('labels and assignees a coder asks for on its sub-issue', () => {
  let w: ActionWorld;
  afterAll(async () => {
    await w?.close();
  });

  let epic: number;
  let sub: number;
  let epicLabels: string[];
  beforeAll(async () => {
    w = await startWorld({
      config: (dumps) =>
        [
          'executors:',
          '  - id: scripted',
          '    harness: command',
          `    command: ${JSON.stringify(['node', CODER, dumps])}`,
          'gates: ["sh check.sh"]',
          'fixRounds: 0',
          'issueTools: { labels: [needs-docs, wip], assignees: [octocat] }',
          '',
        ].join('\n'),
    });
    w.gh.seed.user({ login: 'octocat', permission: 'write' });
    w.gh.seed.user({ login: 'mallory', permission: 'write' });
    epic = await startEpic(w, planBody([{ id: 'cart' }]));
    const issue = w.gh.state
      .issues(OWNER, REPO)
      .find((i) => hasMarker(i.body ?? '', storyMarker('cart')));
    if (issue === undefined) throw new Error('no sub-issue of cart');
    sub = issue.number;
    w.gh.act.labelIssue('alice', { owner: OWNER, repo: REPO, number: sub, label: 'wip' });
    epicLabels = [...(w.gh.state.issue(OWNER, REPO, epic)?.labels ?? [])];
    const { publish } = await storyJobs(w, epic, 'cart');
    expect(publish.record.status).toBe('done');
  });

  it('applies only what issueTools allows, to the story sub-issue only, and notes what it dropped', async () => {
    // The coder was told what it may ask for.
    const { prompt } = JSON.parse(await readFile(join(w.dumps, 'cart.json'), 'utf8')) as {
      prompt: string;
    };
    expect(prompt).toContain(
      '`add-label: <name>` or `remove-label: <name>` (labels: needs-docs, wip)',
    );

    // Exactly the allowed label added, the allowed one removed, the allowed login assigned.
    const after = w.gh.state.issue(OWNER, REPO, sub);
    expect(after?.labels).toEqual(['needs-docs']);
    expect(after?.assignees).toEqual(['octocat']);
    // The epic and its label are untouched.
    expect(w.gh.state.issue(OWNER, REPO, epic)?.labels).toEqual(epicLabels);
    expect(w.gh.state.issue(OWNER, REPO, epic)?.assignees).toEqual([]);

    const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
    const record = (await store.read('cart'))?.record;
    expect(record?.issueRequests).toEqual({
      addLabels: ['needs-docs'],
      removeLabels: ['wip'],
      assignees: ['octocat'],
    });
    expect(record?.notes).toEqual(
      expect.arrayContaining([
        'issue tools: dropped the request to add the label "epic": it is not in issueTools.labels (needs-docs, wip)',
        'issue tools: dropped the request to add the label "deploy-now": it is not in issueTools.labels (needs-docs, wip)',
        'issue tools: dropped the request to assign "mallory": it is not in issueTools.assignees (octocat)',
        `issue tools: #${sub} labelled needs-docs, unlabelled wip, assigned octocat`,
      ]),
    );
    w.gh.assertNoViolations();
  });
});
