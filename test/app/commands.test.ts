import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  botComments,
  completeStory,
  dispatched,
  failStory,
  OWNER,
  planBody,
  readRecord,
  REPO,
  say,
  startApp,
  startEpic,
  APP_CONFIG,
  writeConfig,
  type AppWorld,
} from './harness.js';
import { octokitFor } from '../github-double/client.js';
import type { CommentRec } from '../github-double/index.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
  w.gh.seed.user({ login: 'rita', permission: 'read' });
  w.gh.seed.user({ login: 'helper-bot[bot]', type: 'Bot', permission: 'write' });
});
afterAll(() => w.close());

const TWO = [{ id: 'api' }, { id: 'ui', dependsOn: ['api'] }];

describe('who may steer', () => {
  it('does nothing at all for a label from a user without write permission', async () => {
    const before = w.gh.stats.contentCreating;
    const decided = w.decisions().length;
    const issue = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'E', body: planBody(TWO) });
    w.gh.act.labelIssue('rita', { owner: OWNER, repo: REPO, number: issue.number, label: 'epic' });
    await w.gh.idle();
    // Decided, not crashed: the App logged why it did nothing.
    expect(w.decisions().slice(decided)).toEqual([
      {
        event: 'issues.labeled',
        outcome: 'ignored',
        reason: 'no write permission',
        epic: issue.number,
      },
    ]);
    expect(dispatched(w.gh, issue.number)).toEqual([]);
    expect(w.gh.state.comments(OWNER, REPO, issue.number)).toEqual([]);
    expect(w.gh.stats.contentCreating).toBe(before);
  });

  it('ignores bots silently and answers people without permission once', async () => {
    const epic = await startEpic(w, 'Steering', planBody(TWO));
    const before = botComments(w, epic).length;
    const decided = w.decisions().length;
    await say(w, epic, '/cancel', 'helper-bot[bot]');
    expect(botComments(w, epic)).toHaveLength(before);
    expect(w.decisions().slice(decided)).toEqual([
      { event: 'issue_comment.created', outcome: 'ignored', reason: 'sent by a bot' },
    ]);
    await say(w, epic, '/cancel', 'rita');
    const replies = botComments(w, epic).slice(before);
    expect(replies).toEqual([
      expect.stringContaining(
        '@rita only users with write permission on this repository can steer epicflow (your permission: read).',
      ),
    ]);
    expect(await readRecord(w, epic, 'api')).toMatchObject({ status: 'active' });
  });

  it('answers an unknown command with the command list, and ignores plain comments', async () => {
    const epic = await startEpic(w, 'Help', planBody(TWO));
    const before = botComments(w, epic).length;
    const decided = w.decisions().length;
    await say(w, epic, 'Looks good to me!');
    expect(botComments(w, epic)).toHaveLength(before);
    expect(w.decisions().slice(decided)).toEqual([
      { event: 'issue_comment.created', outcome: 'ignored', reason: 'not a command' },
    ]);
    await say(w, epic, '/deploy now');
    const [reply] = botComments(w, epic).slice(before);
    expect(reply).toContain('Unknown command `/deploy`.');
    expect(reply).toContain('- `/retry <story>`');
  });
});

describe('invalid input', () => {
  it('comments every plan violation once and dispatches nothing; a fixed plan starts', async () => {
    const bad = planBody([{ id: 'api', dependsOn: ['nope'] }, { id: 'Bad_Id' }]);
    const epic = await startEpic(w, 'Broken plan', bad);
    w.gh.act.editIssue('alice', { owner: OWNER, repo: REPO, number: epic, body: `${bad}\n` });
    await w.gh.idle();
    expect(dispatched(w.gh, epic)).toEqual([]);
    const comments = botComments(w, epic);
    expect(comments).toHaveLength(1);
    expect(comments[0]).toContain('**The plan of this epic is not valid**');
    expect(comments[0]).toContain('`unknown-dependency`');
    expect(comments[0]).toContain('`invalid-id`');
    expect(w.gh.state.issue(OWNER, REPO, epic)?.subIssueIds).toEqual([]);

    w.gh.act.editIssue('alice', { owner: OWNER, repo: REPO, number: epic, body: planBody(TWO) });
    await w.gh.idle();
    expect(dispatched(w.gh, epic)).toEqual(['api#1']);
    expect(botComments(w, epic)[0]).toContain('It is valid now.');
  });

  it('comments an invalid configuration naming the file and fields, and creates nothing else', async () => {
    await writeConfig(w, APP_CONFIG + 'concurrency: lots\nlabels: { epic: epic }\nbogus: 1\n');
    try {
      const issue = w.gh.seed.issue({
        owner: OWNER,
        repo: REPO,
        title: 'Cfg',
        body: planBody(TWO),
      });
      const created = w.gh.stats.contentCreating;
      w.gh.act.labelIssue('alice', {
        owner: OWNER,
        repo: REPO,
        number: issue.number,
        label: 'epic',
      });
      await w.gh.idle();
      w.gh.act.labelIssue('alice', {
        owner: OWNER,
        repo: REPO,
        number: issue.number,
        label: 'epic',
      });
      await w.gh.idle();
      const comments = botComments(w, issue.number);
      expect(comments).toHaveLength(1);
      expect(comments[0]).toContain('.github/epicflow.yml');
      expect(comments[0]).toContain('concurrency');
      expect(comments[0]).toContain('bogus');
      expect(w.gh.stats.contentCreating).toBe(created + 1);
      expect(dispatched(w.gh, issue.number)).toEqual([]);
      expect(await w.gh.state.ref(OWNER, REPO, `epic/${issue.number}`)).toBeUndefined();
    } finally {
      await writeConfig(w, `${APP_CONFIG}labels: { epic: epic }\n`);
    }
  });
  it('a configuration without a coder: says so, dispatches no job that would refuse to run, and starts once it is fixed', async () => {
    await writeConfig(w, 'labels: { epic: epic }\n');
    try {
      const epic = await startEpic(w, 'No coder', planBody(TWO));
      const comments = botComments(w, epic);
      expect(comments).toHaveLength(1);
      expect(comments[0]).toContain('invalid config in .github/epicflow.yml');
      expect(comments[0]).toContain('executors: list at least one executor with the coder role');
      expect(dispatched(w.gh, epic)).toEqual([]);
      expect(await w.gh.state.ref(OWNER, REPO, `epic/${epic}`)).toBeUndefined();

      await writeConfig(w, `${APP_CONFIG}labels: { epic: epic }\n`);
      await say(w, epic, '/resume');
      expect(dispatched(w.gh, epic)).toEqual(['api#1']);
    } finally {
      await writeConfig(w, `${APP_CONFIG}labels: { epic: epic }\n`);
    }
  });

  it('no configuration at all: says where it belongs and how to write one, and dispatches nothing', async () => {
    const bare = await startApp({ config: null });
    try {
      const epic = await startEpic(bare, 'No config', planBody(TWO));
      const comments = botComments(bare, epic);
      expect(comments).toHaveLength(1);
      expect(comments[0]).toContain(
        'no epicflow config at .github/epicflow.yml on the default branch',
      );
      expect(comments[0]).toContain('`epicflow init`');
      expect(dispatched(bare.gh, epic)).toEqual([]);
      expect(await bare.gh.state.ref(OWNER, REPO, `epic/${epic}`)).toBeUndefined();
    } finally {
      await bare.close();
    }
  });
});

describe('commands', () => {
  it('/retry, /skip, /cancel, /resume and /status steer the epic', async () => {
    const plan = [{ id: 'api' }, { id: 'db' }, { id: 'ui', dependsOn: ['api'] }];
    const epic = await startEpic(w, 'Commands', planBody(plan));
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'db#1']);

    await failStory(w, epic, 'api');
    const status = (): string =>
      botComments(w, epic).find((c) => c.includes('epicflow · epic')) ?? '';
    expect(status()).toContain('/retry api');
    const subApi = w.gh.state
      .issues(OWNER, REPO)
      .find(
        (i) => i.title.startsWith('api:') && i.parentId === w.gh.state.issue(OWNER, REPO, epic)?.id,
      );
    expect(w.gh.state.comments(OWNER, REPO, subApi?.number).map((c) => c.body)).toEqual([
      expect.stringContaining('**Story `api` failed** (attempt 1)'),
    ]);

    await say(w, epic, '/retry api');
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'db#1', 'api#2']);
    await say(w, epic, '/retry nothing-here');
    expect(botComments(w, epic).at(-1)).toContain('the plan has no story `nothing-here`');

    await say(w, epic, '/cancel');
    expect(status()).toContain('**Halted:** cancelled by `@alice`');
    await completeStory(w, epic, 'api', 2);
    // Cancelled: ui is ready but not started.
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'db#1', 'api#2']);
    expect(await readRecord(w, epic, 'ui')).toMatchObject({ status: 'waiting' });

    await say(w, epic, '/resume');
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'db#1', 'api#2', 'ui#1']);

    await failStory(w, epic, 'db');
    await say(w, epic, '/skip db');
    expect(await readRecord(w, epic, 'db')).toMatchObject({ status: 'done' });
    await say(w, epic, '/skip db');
    expect(botComments(w, epic).at(-1)).toContain('`/skip db`: story `db` is done');

    // The status comment is changed behind the App's back (its marker kept, so it is
    // still the comment epicflow keeps): `/status` writes the current board over it, in place.
    const current = status();
    const statusRec = (): CommentRec | undefined =>
      w.gh.state
        .comments(OWNER, REPO, epic)
        .find((c) => c.author === 'epicflow[bot]' && c.body.includes('<!-- epicflow:status -->'));
    const id = statusRec()?.id ?? 0;
    await octokitFor(w.gh, w.bot.token).rest.issues.updateComment({
      owner: OWNER,
      repo: REPO,
      comment_id: id,
      body: `Stale board.\n\n${current.slice(current.indexOf('<!-- epicflow:'))}`,
    });
    expect(status()).toBe('');
    const bot = botComments(w, epic).length;
    const before = w.gh.stats.rest['issues/update-comment'] ?? 0;
    await say(w, epic, '/status');
    // The board shows the time of the refresh (to the minute).
    const untimed = (body: string): string =>
      body.replace(/updated [\d-]+ [\d:]+ UTC/, 'updated <time>');
    expect(statusRec()?.id).toBe(id);
    expect(untimed(status())).toBe(untimed(current));
    expect(botComments(w, epic)).toHaveLength(bot);
    expect(w.gh.stats.rest['issues/update-comment'] ?? 0).toBeGreaterThan(before);
    await completeStory(w, epic, 'ui');
    expect(status()).toContain('all 3 stories done');
  });

  it('five concurrent /resume start a failed story once, without duplicate comments or sub-issues', async () => {
    const epic = await startEpic(w, 'Concurrent', planBody(TWO));
    await failStory(w, epic, 'api');
    const comments = botComments(w, epic).length;
    const subIssues = w.gh.state.issue(OWNER, REPO, epic)?.subIssueIds.length;
    for (let i = 0; i < 5; i++)
      w.gh.act.comment('alice', { owner: OWNER, repo: REPO, number: epic, body: '/resume' });
    await w.gh.idle();
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'api#2']);
    expect(botComments(w, epic)).toHaveLength(comments);
    expect(w.gh.state.issue(OWNER, REPO, epic)?.subIssueIds).toHaveLength(subIssues ?? -1);
  });

  it('a plan edit restarts exactly the story whose entry changed', async () => {
    const plan = [{ id: 'api' }, { id: 'db' }];
    const epic = await startEpic(w, 'Edit', planBody(plan));
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'db#1']);
    const edited = planBody([
      { id: 'api', description: 'Implement api, with paging.' },
      { id: 'db' },
    ]);
    w.gh.act.editIssue('alice', { owner: OWNER, repo: REPO, number: epic, body: edited });
    await w.gh.idle();
    // Running stories are not interrupted: the change shows until /resume.
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'db#1']);
    const status = botComments(w, epic).find((c) => c.includes('epicflow · epic')) ?? '';
    expect(status).toContain('plan entry changed');
    await say(w, epic, '/resume');
    expect(dispatched(w.gh, epic)).toEqual(['api#1', 'db#1', 'api#2']);
    expect(await readRecord(w, epic, 'db')).toMatchObject({ status: 'active', attempt: 1 });
  });
});
