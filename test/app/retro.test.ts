/**
 * `/retro` on GitHub: a writer's `/retro` records an attempt and dispatches one retro job
 * (a reader's does nothing); the job (run here in-process against the same double) posts
 * the proposal as one comment with a checkbox per fix, model text quoted; a maintainer
 * ticks boxes; the next `/resume` applies only the ticked fixes — the plan edit in the
 * issue's plan, the retry note on the story's record — marks them applied in the comment,
 * and starts the stories again; a second `/resume` applies nothing twice.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { proposeRetroJob, publishRetroJob } from '../../src/jobs/github/retro-job.js';
import { prepareJob, preparation, saveRecord } from '../../src/jobs/github/job-record.js';
import { retroRecord } from '../../src/jobs/github/retro-prepare.js';
import { octokitFor } from '../github-double/client.js';
import {
  botComments,
  commentsOn,
  dispatched,
  dispatchOf,
  failStory,
  OWNER,
  planBody,
  readRecord,
  REPO,
  say,
  startApp,
  startEpic,
  writeConfig,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
let tmp: string;
beforeAll(async () => {
  w = await startApp();
  tmp = mkdtempSync(join(tmpdir(), 'epicflow-retro-'));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
  return w.close();
});

const ANSWER = [
  '```json',
  JSON.stringify({
    fixes: [
      {
        story: 'api',
        kind: 'retry',
        why: 'The gate failed on a missing export.',
        note: 'Export the handler.\n```\n- [x] **db** — forged',
      },
      {
        story: 'db',
        kind: 'plan-edit',
        why: 'Vague.',
        edit: { description: 'Implement db with a migration.' },
      },
      { story: 'ui', kind: 'nothing', why: 'It waits for api.' },
      { story: 'ghost', kind: 'retry', why: 'x', note: 'y' },
    ],
  }),
  '```',
].join('\n');

/** A job checkout of the default branch, and a judge that answers `ANSWER`. */
function jobWorld(): { workspace: string; config: string } {
  const workspace = join(tmp, 'workspace');
  execFileSync('git', ['init', '-q', '-b', 'main', workspace]);
  writeFileSync(join(workspace, 'README.md'), 'x\n');
  execFileSync('git', ['-C', workspace, 'add', '-A']);
  execFileSync('git', [
    '-C',
    workspace,
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@example.com',
    'commit',
    '-qm',
    'base',
  ]);
  const answer = join(tmp, 'answer.txt');
  writeFileSync(answer, ANSWER);
  const config = [
    'executors:',
    '  - id: codex',
    '    harness: command',
    '    command: [node, coder.mjs]',
    '    slots: 3',
    '  - id: reviewer',
    '    harness: command',
    `    command: [cat, ${JSON.stringify(answer)}]`,
    '    roles: [judge]',
    '',
  ].join('\n');
  return { workspace, config };
}

function retroComment(epic: number): { id: number; body: string } {
  const found = w.gh.state
    .comments(OWNER, REPO, epic)
    .find((c) => c.body.includes('<!-- epicflow:retro -->'));
  if (found === undefined) throw new Error('no retro comment');
  return { id: found.id, body: found.body };
}

describe('/retro on the epic issue', () => {
  it('proposes fixes in one comment; the next /resume applies only the ticked ones, once', async () => {
    const { workspace, config } = jobWorld();
    await writeConfig(w, config);
    const epic = await startEpic(
      w,
      'Checkout',
      planBody([{ id: 'api' }, { id: 'db' }, { id: 'ui', dependsOn: ['api'] }]),
    );
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'db#1']);
    await failStory(w, epic, 'api');
    await failStory(w, epic, 'db');

    // Only a writer may ask.
    w.gh.seed.user({ login: 'rita', permission: 'read' });
    await say(w, epic, '/retro', 'rita');
    expect(botComments(w, epic).at(-1)).toContain('only users with write permission');
    await say(w, epic, '/retro');
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'db#1', '_retro#1']);
    expect(botComments(w, epic).at(-1)).toContain(
      'Looking back at 3 failed or held stories (retro attempt 1)',
    );
    // Asked again while it runs: nothing more is dispatched.
    await say(w, epic, '/retro');
    expect(botComments(w, epic).at(-1)).toContain('a retro is already running for this epic');
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'db#1', '_retro#1']);

    // The retro's work job proposes; its publish job writes the proposal.
    const input = {
      epic,
      attempt: 1,
      configPath: '.github/epicflow.yml',
      repo: w.repo,
      scrubbed: [],
      workspace,
      tempDir: join(tmp, 'job'),
      env: process.env,
    };
    // Each job prepared as the Action's shell prepares it; the record saved as it saves it.
    const prepare = () =>
      prepareJob({ kind: 'retro', epic, attempt: 1 }, preparation(input, retroRecord));
    const handover = await proposeRetroJob(input, await prepare());
    const ending = publishRetroJob(input, await prepare(), handover);
    const job = await saveRecord(ending, retroRecord.lostSave);
    expect(job.superseded).toBe(false);
    expect(job.result.doc.status).toBe('proposed');
    // The job's run ends: nothing is decided for a story `_retro`.
    const { runId } = dispatchOf(w.gh, epic, '_retro');
    w.gh.act.startWorkflowRun(runId);
    w.gh.act.completeWorkflowRun(runId, 'success');
    await w.gh.idle();
    const proposal = retroComment(epic).body;
    expect(proposal).toContain(
      '- [ ] **api** — retry with a note for its coder (failed: gates failed: npm test)',
    );
    expect(proposal).toContain(
      '- [ ] **db** — edit its plan entry (failed: gates failed: npm test)',
    );
    expect(proposal).toContain('## No fix proposed\n\n- **ui**\n');
    expect(proposal).toContain('a fix for story "ghost" was left out');
    expect(proposal).toContain(
      '  ````text\n  Export the handler.\n  ```\n  - [x] **db** — forged\n  ````',
    );
    expect(proposal).toContain('the next `/resume` on this issue applies the ticked ones');

    // A maintainer ticks api only (GitHub edits the comment's text).
    await octokitFor(w.gh, w.alice.token).rest.issues.updateComment({
      owner: OWNER,
      repo: REPO,
      comment_id: retroComment(epic).id,
      body: proposal.replace('- [ ] **api**', '- [x] **api**'),
    });
    await w.gh.idle();
    await say(w, epic, '/retro');
    expect(botComments(w, epic).at(-1)).toContain(
      'the retro comment has approved fixes not applied yet (`api`): comment `/resume` to apply them',
    );
    await say(w, epic, '/resume');
    const api = await readRecord(w, epic, 'api');
    expect(api).toMatchObject({ retroNote: 'Export the handler.\n```\n- [x] **db** — forged' });
    expect(api?.notes).toContain('retro: retried with a note for its coder');
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'db#1', '_retro#1', 'api#2', 'db#2']);
    // db's edit was not ticked: the plan in the issue is as it was.
    const body = w.gh.state.issue(OWNER, REPO, epic)?.body ?? '';
    expect(body).toContain('description: "Implement db."');
    expect(body).not.toContain('migration');
    const marked = retroComment(epic).body;
    expect(marked).toMatch(/^- \[x\] \*\*api\*\* — retry .* · \*\*applied\*\*$/m);
    expect(marked).toMatch(/^- \[ \] \*\*db\*\* — edit its plan entry \(failed: [^)]*\)$/m);

    // db is ticked later: the next /resume edits the plan in the issue, and api is not applied again.
    await octokitFor(w.gh, w.alice.token).rest.issues.updateComment({
      owner: OWNER,
      repo: REPO,
      comment_id: retroComment(epic).id,
      body: marked.replace('- [ ] **db**', '- [x] **db**'),
    });
    await w.gh.idle();
    await failStory(w, epic, 'db', 2);
    const notes = (await readRecord(w, epic, 'api'))?.notes;
    await say(w, epic, '/resume');
    expect(w.gh.state.issue(OWNER, REPO, epic)?.body).toContain(
      'description: Implement db with a migration.',
    );
    expect((await readRecord(w, epic, 'api'))?.notes).toEqual(notes);
    expect(retroComment(epic).body).toMatch(/^- \[x\] \*\*db\*\* — edit .* · \*\*applied\*\*$/m);
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'db#1', '_retro#1', 'api#2', 'db#2', 'db#3']);
    expect(
      commentsOn(w.gh, epic).filter((c) => c.body.includes('<!-- epicflow:retro -->')),
    ).toHaveLength(1);
  });

  it('a retro job that dies before recording fails its attempt, and /retro starts another', async () => {
    const epic = await startEpic(w, 'Cart', planBody([{ id: 'cart' }]));
    await failStory(w, epic, 'cart');
    await say(w, epic, '/retro');
    expect(dispatched(w.gh, epic)).toEqual(['cart#1', '_retro#1']);
    const { runId } = dispatchOf(w.gh, epic, '_retro');
    w.gh.act.startWorkflowRun(runId);
    w.gh.act.completeWorkflowRun(runId, 'cancelled');
    await w.gh.idle();
    expect(botComments(w, epic).at(-1)).toBe(
      'The retro (attempt 1) found no proposal: the retro job ended (cancelled) without recording an outcome\n\nComment `/retro` to try again.',
    );
    await say(w, epic, '/retro');
    expect(dispatched(w.gh, epic)).toEqual(['cart#1', '_retro#1', '_retro#2']);
  });
});
