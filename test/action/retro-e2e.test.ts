/**
 * A retro on GitHub, end to end: a real probot App hears `/retro` and dispatches a retro
 * job; the job is the Action's bundle run as a process, with a scripted `command` judge
 * as the model. Its proposal comes as one comment with a checkbox per fix; a maintainer
 * ticks the retry; `/resume` applies it, and the story's next work job (called in-process:
 * test/orchestrator/support/story-jobs.ts) gives its coder the note in its prompt. The story's failed first attempt is the App harness's (`failStory`:
 * its record failed, its run completed as a failure), as in test/app/retro.test.ts; a
 * story job failing its gates is story.test.ts's.
 *
 * @needs root
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { botComments, failStory, planBody, say, startEpic, type AppWorld } from '../app/harness.js';
import { octokitFor } from '../github-double/client.js';
import { startAppActionWorld, type AppActionWorld } from './support/app-world.js';
import {
  CODER,
  OWNER,
  REPO,
  checkout,
  dispatchOf,
  dispatched,
  runJob,
  storyInputs,
  type ActionWorld,
  type JobRun,
} from './support/world.js';
import { workInput, workJob } from '../orchestrator/support/story-jobs.js';

const ANSWER = [
  '```json',
  JSON.stringify({
    fixes: [
      {
        story: 'broken-api',
        kind: 'retry',
        why: 'The gate rejects the module.',
        note: 'Export `story` from src/broken-api/index.js.',
      },
    ],
  }),
  '```',
].join('\n');

function config(dumps: string): string {
  return [
    'executors:',
    '  - id: scripted',
    '    harness: command',
    `    command: ${JSON.stringify(['node', CODER, dumps])}`,
    '  - id: reviewer',
    '    harness: command',
    `    command: ${JSON.stringify(['node', '-e', 'process.stdout.write(process.argv[1])', ANSWER])}`,
    '    roles: [judge]',
    'gates: ["sh check.sh"]',
    'fixRounds: 0',
    '',
  ].join('\n');
}

let world: AppActionWorld;
let bundle: string;
let app: AppWorld;
let w: ActionWorld;

beforeAll(async () => {
  world = await startAppActionWorld('retro-e2e', config);
  ({ app, w, bundle } = world);
});
afterAll(() => world.close());

async function runDispatchedJob(epic: number, story: string, attempt = 1): Promise<JobRun> {
  const { runId } = dispatchOf(w, epic, story, attempt);
  w.gh.act.startWorkflowRun(runId);
  await w.gh.idle();
  const name = `${epic}-${story}-${attempt}`;
  const job = await runJob(w, bundle, {
    name,
    workspace: await checkout(w, name),
    inputs: storyInputs(w, epic, story, attempt),
    runId,
  });
  w.gh.act.completeWorkflowRun(runId, job.code === 0 ? 'success' : 'failure');
  await w.gh.idle();
  return job;
}

describe('/retro with the Action', () => {
  it('runs the retro job, and a ticked retry reaches the story job as a note in its prompt', async () => {
    const epic = await startEpic(app, 'Checkout', planBody([{ id: 'broken-api' }]));
    expect(dispatched(w, epic)).toEqual(['broken-api#1']);
    await failStory(app, epic, 'broken-api');

    await say(app, epic, '/retro');
    expect(dispatched(w, epic)).toEqual(['broken-api#1', '_retro#1']);
    const retro = await runDispatchedJob(epic, '_retro');
    expect(retro.stderr).not.toContain('::error::');
    expect(retro.code).toBe(0);
    const comment = w.gh.state
      .comments(OWNER, REPO, epic)
      .find((c) => c.body.includes('<!-- epicflow:retro -->'));
    expect(comment?.body).toContain('- [ ] **broken-api** — retry with a note for its coder');
    expect(comment?.body).toContain('  Export `story` from src/broken-api/index.js.');

    await octokitFor(w.gh, w.alice.token).rest.issues.updateComment({
      owner: OWNER,
      repo: REPO,
      comment_id: comment?.id ?? 0,
      body: (comment?.body ?? '').replace('- [ ] **broken-api**', '- [x] **broken-api**'),
    });
    await w.gh.idle();
    await say(app, epic, '/resume');
    expect(dispatched(w, epic)).toEqual(['broken-api#1', '_retro#1', 'broken-api#2']);
    expect(botComments(app, epic).find((b) => b.includes('<!-- epicflow:retro -->'))).toMatch(
      /^- \[x\] \*\*broken-api\*\* — retry .* · \*\*applied\*\*$/m,
    );
    // No coder ran before: the dump is the second attempt's.
    expect(existsSync(join(w.dumps, 'broken-api.json'))).toBe(false);
    // The retried story's work job, in-process: the same engine reads the note from the
    // record on GitHub as the bundle's job would (the bundle's own part is story.test.ts's).
    // (Its coder, as scripted, breaks the module again: the gate fails it, as it did the first.)
    const work = await workJob(await workInput(w, epic, 'broken-api', { attempt: 2 }));
    expect(work.record).toMatchObject({ attempt: 2, status: 'failed' });
    const seen = JSON.parse(readFileSync(join(w.dumps, 'broken-api.json'), 'utf8')) as {
      prompt: string;
    };
    expect(seen.prompt).toContain('## A note for this attempt');
    expect(seen.prompt).toContain('> Export `story` from src/broken-api/index.js.');
  }, 540_000);
});
