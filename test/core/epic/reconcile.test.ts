import { describe, expect, it } from '@jest/globals';
import { reconcile } from '../../../src/core/epic/index.js';
import { SUB_ISSUES_PER_DECISION } from '../../../src/core/epic/reconcile.js';
import { buildPlan } from '../../../src/core/plan/index.js';
import { completed, dispatches, kinds, recordsIn, story, World } from './world.js';

describe('reconcile: first label', () => {
  it('creates the branch, the draft PR, one sub-issue per story, the comments, and dispatches wave 1 within capacity', () => {
    const world = new World();
    world.coderSlots = 1;
    const actions = world.step({ kind: 'label' });

    expect(kinds(actions).slice(0, 2)).toEqual(['ensure-epic-branch', 'ensure-draft-pr']);
    expect(actions[0]).toEqual({ kind: 'ensure-epic-branch', branch: 'epic/12' });
    expect(actions[1]).toMatchObject({ head: 'epic/12', title: 'Epic #12: Checkout rewrite' });
    expect(
      actions
        .filter((a) => a.kind === 'ensure-sub-issue')
        .map((a) => a.kind === 'ensure-sub-issue' && a.story),
    ).toEqual(['a', 'b', 'c', 'd', 'e']);
    // One free slot: the critical path (a → b → d) goes first.
    expect(dispatches(actions)).toEqual([{ story: 'a', attempt: 1, fresh: true }]);
    const record = actions.findIndex(
      (a) => a.kind === 'record' && a.record.story === 'a' && a.record.status === 'active',
    );
    const dispatch = actions.findIndex((a) => a.kind === 'dispatch');
    expect(record).toBeGreaterThan(-1);
    expect(record).toBeLessThan(dispatch);
    expect(world.recordOf('a')).toMatchObject({
      status: 'active',
      attempt: 1,
      branch: 'story/12/a',
      startedAt: world.now,
      planHash: world.plan.hashes['a'],
    });
    expect(kinds(actions).slice(-2)).toEqual(['ensure-status-comment', 'ensure-report-comment']);
    expect(world.status()).toContain('<!-- epicflow:status -->');
    expect(world.comments.get('report')).toContain('<!-- epicflow:report -->');
  });

  it('dispatches the ready stories before any sub-issue is created, and creates at most ten sub-issues a decision, the starting ones first', () => {
    const world = new World();
    // 25 stories: the last three are ready (no dependencies), the others a chain.
    world.plan = buildPlan(
      Array.from({ length: 25 }, (_, i) =>
        i >= 22 || i === 0 ? story(`s${i}`) : story(`s${i}`, [`s${i - 1}`]),
      ),
    );
    const actions = world.step({ kind: 'label' });
    const created = (list: typeof actions): string[] =>
      list.flatMap((a) => (a.kind === 'ensure-sub-issue' ? [a.story] : []));
    const started = dispatches(actions).map((d) => d.story);
    expect(started.sort()).toEqual(['s0', 's22', 's23', 's24']);
    const firstSub = actions.findIndex((a) => a.kind === 'ensure-sub-issue');
    const lastDispatch = actions.map((a) => a.kind).lastIndexOf('dispatch');
    expect(lastDispatch).toBeLessThan(firstSub);
    const first = created(actions);
    expect(first).toHaveLength(SUB_ISSUES_PER_DECISION);
    expect(first.slice(0, 4).sort()).toEqual(['s0', 's22', 's23', 's24']);
    // Each later decision creates the next ones, none twice, until every story has one.
    const seen = new Set(first);
    for (let round = 0; round < 3; round++) {
      for (const id of created(world.step({ kind: 'resume', by: 'alice' }))) {
        expect(seen.has(id)).toBe(false);
        seen.add(id);
      }
    }
    expect(seen.size).toBe(25);
    expect(Object.keys(world.subIssues)).toHaveLength(25);
  });

  it('creates no sub-issue in a decision told to create none (a story job beside the App), and still dispatches', () => {
    const world = new World();
    const actions = reconcile({ ...world.input({ kind: 'label' }), subIssuesPerDecision: 0 });
    expect(kinds(actions)).not.toContain('ensure-sub-issue');
    expect(dispatches(actions).map((d) => d.story)).toEqual(['a', 'e']);
  });

  it('starts every ready story when slots and concurrency allow', () => {
    const world = new World();
    expect(dispatches(world.step({ kind: 'label' })).map((d) => d.story)).toEqual(['a', 'e']);
  });

  it('is idempotent: the same decision again, after applying the records, dispatches nothing and writes nothing', () => {
    const world = new World();
    world.step({ kind: 'label' });
    const again = world.step({ kind: 'label' });
    expect(dispatches(again)).toEqual([]);
    expect(recordsIn(again)).toEqual([]);
    expect(kinds(again)).not.toContain('ensure-sub-issue');
    expect(kinds(again)).not.toContain('ensure-draft-pr');
    // A redelivered /resume is just as harmless.
    expect(dispatches(world.step({ kind: 'resume', by: 'alice' }))).toEqual([]);
    expect(world.dispatched).toHaveLength(2);
  });

  it('adds a board update per story only when a board is configured', () => {
    const without = reconcile(new World().input({ kind: 'label' }));
    expect(kinds(without)).not.toContain('update-board');
    const world = new World(undefined, {
      board: { project: 'https://github.com/orgs/acme/projects/1' },
    });
    const actions = world.step({ kind: 'label' });
    const board = actions.filter((a) => a.kind === 'update-board');
    expect(board).toHaveLength(5);
    expect(board[0]).toEqual({
      kind: 'update-board',
      story: 'a',
      values: { Status: 'Active', Wave: 1, Executor: '', Tokens: 0, Cost: null },
    });
    expect(board[3]).toMatchObject({ story: 'd', values: { Status: 'Planned', Wave: 3 } });
  });
});

describe('reconcile: jobs finishing', () => {
  it('closes the sub-issue of a merged story and dispatches its dependents', () => {
    const world = new World();
    world.step({ kind: 'label' });
    world.jobMerges('a');
    const actions = world.step(completed('a'));
    expect(actions).toContainEqual({ kind: 'close-sub-issue', story: 'a' });
    expect(dispatches(actions)).toEqual([
      { story: 'b', attempt: 1, fresh: true },
      { story: 'c', attempt: 1, fresh: true },
    ]);
    expect(world.subIssues['a']?.state).toBe('closed');
    expect(world.status()).toMatch(/\| 1 \| 3 \| 0 \| 0 \| 1 \| 5 \|/);
  });

  it('takes merged-ness from the epic branch over the records', () => {
    const world = new World();
    world.step({ kind: 'label' });
    world.jobFails('a', 'no changes');
    world.merged.set('a', 'feedbeef00000000000000000000000000000000');
    const actions = world.step(completed('a'));
    expect(recordsIn(actions).find((r) => r.story === 'a')).toMatchObject({
      status: 'done',
      mergeCommit: 'feedbeef00000000000000000000000000000000',
    });
    expect(recordsIn(actions).find((r) => r.story === 'a')).not.toHaveProperty('reason');
    expect(dispatches(actions).map((d) => d.story)).toEqual(['b', 'c']);
    expect(kinds(actions)).not.toContain('comment-sub-issue-failure');
  });

  it('holds the dependents of a failed story and comments the failure on its sub-issue', () => {
    const world = new World();
    world.step({ kind: 'label' });
    world.jobMerges('a');
    world.step(completed('a'));
    world.jobFails('b', 'gate `npm test` failed: 3 tests failing, cc @carol');
    const actions = world.step(completed('b'));
    expect(world.recordOf('d')).toMatchObject({ status: 'waiting', reason: 'waiting for b' });
    const comment = actions.find((a) => a.kind === 'comment-sub-issue-failure');
    expect(comment).toMatchObject({ story: 'b', attempt: 1, marker: 'failure:b:1' });
    const body = comment?.kind === 'comment-sub-issue-failure' ? comment.body : '';
    expect(body).toContain(
      '**Story `b` failed** (attempt 1): gate `npm test` failed: 3 tests failing, cc `@carol`',
    );
    expect(body).toContain('Waiting for it: `d`.');
    expect(body).toContain('`/retry b` on #12');
    expect(body.trimEnd().endsWith('<!-- epicflow:failure:b:1 -->')).toBe(true);
    expect(world.status()).toContain('- `b` failed — gate `npm test` failed');
    expect(world.status()).toContain('- `d` waiting — waiting for b');
    expect(world.status()).toContain(
      '**Next:** 2 running; fix the cause of the failure, then comment `/retry b`',
    );
  });

  it('fails a story whose job ended without recording an outcome', () => {
    const world = new World();
    world.step({ kind: 'label' });
    world.step(completed('a', 1, 'cancelled'));
    expect(world.recordOf('a')).toMatchObject({
      status: 'failed',
      reason: 'the job ended (cancelled) without recording an outcome',
    });
    // A late event of an older attempt changes nothing.
    const world2 = new World();
    world2.step({ kind: 'label' });
    expect(recordsIn(world2.step(completed('a', 7, 'failure')))).toEqual([]);
  });

  it('marks the PR ready and finishes when every story is merged', () => {
    const world = new World();
    world.step({ kind: 'label' });
    for (const id of ['a', 'e', 'b', 'c', 'd']) {
      world.jobMerges(id);
      world.step(completed(id));
    }
    expect(world.finished).toBe(true);
    expect(world.pr).toEqual({ number: 50, draft: false });
    expect(Object.values(world.subIssues).every((s) => s.state === 'closed')).toBe(true);
    expect(world.status()).toContain('**all 5 stories done**');
    expect(world.status()).toContain(
      '**Next:** Every story is done. Pull request #50 is ready for review.',
    );
    // Once ready, the PR is not marked again.
    const again = world.step({ kind: 'status' });
    expect(kinds(again)).not.toContain('mark-pr-ready');
    expect(kinds(again)).toContain('finish');
    expect(world.dispatched.map((d) => d.story)).toEqual(['a', 'e', 'b', 'c', 'd']);
  });
});

describe('reconcile: plan edits', () => {
  function edited(world: World, id: string): void {
    world.plan = buildPlan(
      world.plan.stories.map((s) =>
        s.id === id ? { ...s, description: `${s.description} Now with tests.` } : s,
      ),
    );
  }

  it('restarts a changed story that has not started at once, from the epic head', () => {
    const world = new World();
    world.coderSlots = 1;
    world.step({ kind: 'label' });
    world.jobMerges('a');
    world.halt = { kind: 'cancel', message: 'cancelled by @alice' };
    world.step(completed('a'));
    expect(world.recordOf('c')).toMatchObject({
      status: 'waiting',
      reason: 'not started: cancelled by @alice',
    });
    world.halt = undefined;
    world.coderSlots = Infinity;
    edited(world, 'c');
    const actions = world.step(world.bodyEdit());
    expect(dispatches(actions)).toContainEqual({ story: 'c', attempt: 1, fresh: true });
    expect(world.recordOf('c').planHash).toBe(world.plan.hashes['c']);
  });

  it('creates the sub-issue of a story added to the plan and starts it when ready', () => {
    const world = new World();
    world.step({ kind: 'label' });
    world.plan = buildPlan([...world.plan.stories, story('f')]);
    const actions = world.step(world.bodyEdit());
    expect(actions).toContainEqual(
      expect.objectContaining({ kind: 'ensure-sub-issue', story: 'f' }),
    );
    expect(dispatches(actions)).toEqual([{ story: 'f', attempt: 1, fresh: true }]);
  });

  it('restarts a changed story that started only on /resume, with a new attempt', () => {
    const world = new World();
    world.step({ kind: 'label' });
    world.jobMerges('a');
    world.step(completed('a'));
    edited(world, 'c');
    const onEdit = world.step(world.bodyEdit());
    expect(dispatches(onEdit)).toEqual([]);
    expect(world.status()).toContain(
      'plan entry changed: restarts from the epic head on `/resume`',
    );
    expect(world.status()).toContain(
      '- `c` active — plan entry changed: restarts from the epic head on `/resume`',
    );
    expect(world.status()).toContain(
      '**Next:** Comment `/resume` to restart the stories whose plan entry changed.',
    );

    world.jobFails('c', 'no changes');
    expect(dispatches(world.step(completed('c')))).toEqual([]);

    const onResume = world.step({ kind: 'resume', by: 'alice' });
    expect(dispatches(onResume)).toEqual([{ story: 'c', attempt: 2, fresh: true }]);
    expect(world.recordOf('c')).toMatchObject({
      status: 'active',
      attempt: 2,
      planHash: world.plan.hashes['c'],
    });
    expect(world.recordOf('c').notes).toContain(
      'resumed by @alice; plan entry changed: restarted from the epic head',
    );
    expect(world.status()).not.toContain('restarts from the epic head on');
  });

  it('supersedes a running story whose plan entry changed on /resume', () => {
    const world = new World();
    world.step({ kind: 'label' });
    edited(world, 'a');
    expect(dispatches(world.step(world.bodyEdit()))).toEqual([]);
    expect(dispatches(world.step({ kind: 'resume', by: 'alice' }))).toEqual([
      { story: 'a', attempt: 2, fresh: true },
    ]);
    // The superseded attempt's run ending later is ignored.
    expect(recordsIn(world.step(completed('a', 1, 'success')))).toEqual([]);
  });
});

describe('reconcile: commands', () => {
  function failedB(): World {
    const world = new World();
    world.step({ kind: 'label' });
    world.jobMerges('a');
    world.step(completed('a'));
    world.jobFails('b', 'no changes');
    world.step(completed('b'));
    return world;
  }

  it('/resume retries failed stories on their branch with the next attempt', () => {
    const world = failedB();
    const actions = world.step({ kind: 'resume', by: 'alice' });
    expect(dispatches(actions)).toEqual([{ story: 'b', attempt: 2, fresh: false }]);
    expect(world.recordOf('b').notes).toContain('resumed by @alice');
    expect(world.recordOf('b')).not.toHaveProperty('reason');
    // d waited for b; b runs again, so d is planned again (blocked on b, not held).
    expect(world.recordOf('d')).toMatchObject({ status: 'planned' });
    expect(world.recordOf('d')).not.toHaveProperty('reason');
  });

  it('/retry <story> runs one failed story again', () => {
    const world = failedB();
    const actions = world.step({ kind: 'retry', story: 'b', by: 'alice' });
    expect(dispatches(actions)).toEqual([{ story: 'b', attempt: 2, fresh: false }]);
    expect(world.recordOf('b').notes).toContain('retried by @alice');
    expect(world.replies).toEqual([]);
  });

  it('/retry of a story that is not failed explains why and changes nothing', () => {
    const world = failedB();
    world.step({ kind: 'retry', story: 'c', by: 'alice' });
    world.step({ kind: 'retry', story: 'd', by: 'alice' });
    world.step({ kind: 'retry', story: 'a', by: 'alice' });
    expect(world.replies).toEqual([
      '`/retry c`: story `c` is active; only a failed story can be retried.',
      '`/retry d`: story `d` is waiting (waiting for b); only a failed story can be retried.',
      '`/retry a`: story `a` is done; only a failed story can be retried.',
    ]);
    expect(world.dispatched.filter((d) => d.story === 'b')).toHaveLength(1);
  });

  it('/retry or /skip of a story the plan no longer has says so', () => {
    const world = failedB();
    world.step({ kind: 'skip', story: 'gone', by: 'alice' });
    expect(world.replies).toEqual([
      '`/skip gone`: the plan has no story `gone`. Stories: `a`, `b`, `c`, `d`, `e`.',
    ]);
  });

  it('/skip <story> counts the story as done for its dependents and closes its sub-issue', () => {
    const world = failedB();
    world.jobMerges('c');
    const actions = world.step({ kind: 'skip', story: 'b', by: 'alice' });
    expect(world.recordOf('b')).toMatchObject({ status: 'done', notes: ['skipped by @alice'] });
    expect(world.recordOf('b')).not.toHaveProperty('mergeCommit');
    expect(actions).toContainEqual({ kind: 'close-sub-issue', story: 'b' });
    expect(dispatches(actions)).toEqual([{ story: 'd', attempt: 1, fresh: true }]);
    expect(world.comments.get('report')).toMatch(
      /\| `b` Story b \| done \| 2 \| `story\/12\/b` \| — \| — \| — \| — \| skipped by `@alice` \|/,
    );
    // Skipped stays skipped on later decisions.
    expect(recordsIn(world.step({ kind: 'status' }))).toEqual([]);
  });

  it('/skip of a running story is refused', () => {
    const world = failedB();
    world.step({ kind: 'skip', story: 'c', by: 'alice' });
    expect(world.replies).toEqual([
      '`/skip c`: story `c` is active; it is running; skip it once it stops.',
    ]);
    expect(world.recordOf('c').status).toBe('active');
  });

  it('/cancel halts launches, lets running stories finish, and /resume continues', () => {
    const world = new World();
    world.step({ kind: 'label' });
    const cancel = world.step({ kind: 'cancel', by: 'alice' });
    expect(cancel[0]).toEqual({
      kind: 'set-halt',
      halt: { kind: 'cancel', message: 'cancelled by @alice' },
    });
    expect(world.recordOf('a').status).toBe('active');
    expect(world.recordOf('b')).toMatchObject({
      status: 'waiting',
      reason: 'not started: cancelled by @alice',
    });

    world.jobMerges('a');
    expect(dispatches(world.step(completed('a')))).toEqual([]);
    expect(world.status()).toContain('**Halted:** cancelled by `@alice`');
    expect(world.status()).toContain('**Next:** Comment `/resume` to continue.');

    const resume = world.step({ kind: 'resume', by: 'bob' });
    expect(resume[0]).toEqual({ kind: 'clear-halt' });
    expect(dispatches(resume).map((d) => d.story)).toEqual(['b', 'c']);
    expect(world.recordOf('d')).toMatchObject({ status: 'planned' });
  });

  it('a spent budget halts launches until it is raised', () => {
    const world = new World(undefined, { budget: { usd: 1 } });
    world.step({ kind: 'label' });
    world.records['a'] = {
      ...world.recordOf('a'),
      status: 'done',
      usage: [
        {
          executor: 'codex',
          model: 'm',
          tokens: { input: 10, cachedInput: 0, cacheWrite: 0, output: 5 },
          measured: true,
          costUsd: 1.5,
          costSource: 'cli',
        },
      ],
    };
    world.merged.set('a', 'abcdef0000000000000000000000000000000000');
    const actions = world.step(completed('a'));
    expect(dispatches(actions)).toEqual([]);
    expect(world.recordOf('b')).toMatchObject({
      status: 'waiting',
      reason: 'not started: budget of $1.00 spent ($1.50)',
    });
    expect(world.status()).toContain('Raise `budget`');
    // /resume does not lift a budget: the records still say it is spent.
    expect(dispatches(world.step({ kind: 'resume', by: 'alice' }))).toEqual([]);
  });

  it('a recorded merge missing from the epic branch is shown as failed, and /retry runs the story again', () => {
    const world = new World();
    world.step({ kind: 'label' });
    world.jobMerges('a');
    world.step(completed('a'));
    world.merged.delete('a');
    const actions = world.step({ kind: 'status' });
    expect(world.status()).toContain('merge a000000 is no longer on epic/12');
    expect(actions).toContainEqual(
      expect.objectContaining({ kind: 'comment-sub-issue-failure', story: 'a' }),
    );
    expect(dispatches(world.step({ kind: 'retry', story: 'a', by: 'alice' }))).toEqual([
      { story: 'a', attempt: 2, fresh: false },
    ]);
    expect(world.subIssues['a']?.state).toBe('open');
  });
});

describe('reconcile: size', () => {
  it('keeps the status and report comments of a 150-story epic under 65,536 characters', () => {
    const long = 'x'.repeat(300);
    // 75 independent stories, each with one dependent: everything fits in one wave of jobs.
    const stories = Array.from({ length: 150 }, (_, i) => ({
      ...story(`story-${i}`, i < 75 ? [] : [`story-${i - 75}`]),
      title: `Title ${i} ${long}`,
    }));
    const world = new World(buildPlan(stories), { concurrency: 200 });
    world.step({ kind: 'label' });
    expect(world.dispatched).toHaveLength(75);
    for (let i = 0; i < 75; i += 3) world.jobFails(`story-${i}`, `failure ${i}: ${long}`);
    world.step({ kind: 'status' });
    const status = world.status();
    const report = world.comments.get('report') ?? '';
    expect(status.length).toBeLessThan(65_536);
    expect(report.length).toBeLessThan(65_536);
    expect(status).toContain('```mermaid');
    expect(status).toContain('- … and 25 more in the report on the pull request');
    expect(status.trimEnd().endsWith('<!-- epicflow:status -->')).toBe(true);
    expect(report.trimEnd().endsWith('<!-- epicflow:report -->')).toBe(true);
  });
});
