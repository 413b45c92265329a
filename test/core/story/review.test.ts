import { describe, expect, it } from '@jest/globals';
import type { ExecutorConfig } from '../../../src/core/config/types.js';
import {
  decideAfterCheck,
  decideAfterReview,
  startRounds,
  type CheckFacts,
  type LensFacts,
  type RoundRules,
} from '../../../src/core/story/index.js';

const alpha: ExecutorConfig = {
  id: 'alpha',
  harness: 'command',
  command: ['a'],
  args: [],
  slots: 1,
  priority: 1,
  roles: ['coder'],
  env: {},
};
const none = { transient: 0, backoffMs: 0 };
const reviewing: RoundRules = {
  fixRounds: 1,
  judgeRounds: 1,
  reviewRounds: 1,
  verifier: false,
  retries: none,
};
const green: CheckFacts = {
  interrupted: false,
  empty: false,
  verdicts: [],
  oracle: [],
  perimeter: { owned: ['src/a.ts'], readOnly: [], outside: [], forbidden: [] },
  runs: [],
  commit: 'c1',
};
const lens = (name: string, findings: string[], executor = 'rev'): LensFacts => ({
  lens: name,
  executor,
  score: findings.length === 0 ? 2 : 1,
  cleared: findings.length === 0,
  findings,
  independent: true,
});

/** The rounds of a story whose checks just passed on c1, with `rules`. */
function checked(rules: RoundRules) {
  const started = startRounds(rules, alpha, ['alpha']).state;
  return decideAfterCheck({ ...started, awaiting: { step: 'check' } }, green);
}

describe('review rounds in the story rounds', () => {
  it('a checked commit goes to the reviewers before the judge; without review, to the judge', () => {
    expect(checked(reviewing).next).toEqual({ kind: 'review', round: 1, previous: [] });
    expect(checked({ ...reviewing, reviewRounds: undefined }).next).toEqual({ kind: 'catch-up' });
    // A task that is not the story's last ends at its checks: the story's end is reviewed.
    expect(checked({ ...reviewing, taskEnd: true }).next.kind).toBe('task-done');
  });

  it('findings: a coder round with them, then the round after shows each lens what it found', () => {
    const first = decideAfterReview(checked(reviewing).state, {
      kind: 'round',
      lenses: [lens('correctness', ['a.ts: empty list throws']), lens('tests', [])],
    });
    expect(first.next).toEqual({
      kind: 'code',
      feedback: { review: { findings: ['correctness: a.ts: empty list throws'] } },
      waitMs: 0,
    });
    // The coder's turn ended ok (decideAfterTurn asks for the checks), which pass on c2.
    const again = decideAfterCheck(
      { ...first.state, awaiting: { step: 'check' } },
      { ...green, commit: 'c2' },
    );
    expect(again.next).toEqual({
      kind: 'review',
      round: 2,
      previous: ['correctness: a.ts: empty list throws'],
    });
    // The fix rounds are spent: the findings stay open and go to the judge with the note.
    const open = decideAfterReview(again.state, {
      kind: 'round',
      lenses: [lens('correctness', ['a.ts: still throws']), lens('tests', [])],
    });
    expect(open.next).toEqual({ kind: 'catch-up' });
    expect(open.effects).toContainEqual({
      kind: 'note',
      notes: ['review left 1 finding open after 1 fix round: correctness: a.ts: still throws'],
    });
    expect(open.effects).toContainEqual({
      kind: 'evaluation',
      evaluation: {
        kind: 'review',
        round: 2,
        commit: 'c2',
        cleared: false,
        findings: ['correctness: a.ts: still throws'],
        scores: { correctness: 1, tests: 2 },
        executors: ['rev'],
        outcome: 'open',
      },
    });
    expect(open.state.reviewFindings).toEqual(['correctness: a.ts: still throws']);
  });

  it('a reused lens answer counts for the round, and the story says which lens was reused', () => {
    const d = decideAfterReview(checked(reviewing).state, {
      kind: 'round',
      lenses: [{ ...lens('correctness', ['a.ts: throws']), reused: true }, lens('tests', [])],
    });
    expect(d.next).toMatchObject({
      feedback: { review: { findings: ['correctness: a.ts: throws'] } },
    });
    const note = 'review round 1: reused the answer of the correctness lens for an unchanged diff';
    expect(d.effects).toContainEqual({ kind: 'note', notes: [note] });
    expect(d.effects).toContainEqual(expect.objectContaining({ kind: 'say', message: note }));
    const fresh = decideAfterReview(checked(reviewing).state, {
      kind: 'round',
      lenses: [lens('tests', [])],
    });
    expect(JSON.stringify(fresh.effects)).not.toContain('reused');
  });

  it('a lens that did not clear but named nothing still gives the coder a reason', () => {
    const d = decideAfterReview(checked(reviewing).state, {
      kind: 'round',
      lenses: [{ ...lens('security', []), cleared: false, score: 0 }],
    });
    expect(d.next).toMatchObject({
      feedback: {
        review: {
          findings: ['security: scored 0/2 and named no finding: look again through this lens'],
        },
      },
    });
  });

  it('cleared without a judge: merged, with a note naming the reviewer who also coded', () => {
    const d = decideAfterReview(checked({ ...reviewing, judgeRounds: undefined }).state, {
      kind: 'round',
      lenses: [{ ...lens('tests', [], 'alpha'), independent: false }],
    });
    expect(d.next).toEqual({ kind: 'integrate', commit: 'c1' });
    expect(d.effects).toContainEqual({
      kind: 'note',
      notes: ['reviewer of tests was not independent: alpha also coded the story'],
    });
  });

  it('no review to be had fails the story', () => {
    const d = decideAfterReview(checked(reviewing).state, {
      kind: 'unavailable',
      why: 'tests lens: no executor can take the reviewer role',
    });
    expect(d.next).toEqual({
      kind: 'stop',
      status: 'failed',
      reason: 'review unavailable: tests lens: no executor can take the reviewer role',
    });
  });
});
