/**
 * The story job's summary says what to do about a protected epic branch when the git
 * adapter says the push was refused for that reason, and only then: a message that
 * merely contains the word (an isolation error about fs.protected_hardlinks, a story
 * title) gets no such advice.
 */
import { describe, expect, it } from '@jest/globals';
import { renderStorySummary, storyHint } from '../../src/jobs/github/job-summary.js';
import type { StoryRecord } from '../../src/core/model.js';
import type { StorySummaryFacts } from '../../src/jobs/github/job-summary.js';

const BYPASS = 'bypass actor in the ruleset protecting epic branches';

function result(reason: string, extra: Partial<StorySummaryFacts> = {}): StorySummaryFacts {
  const record: StoryRecord = {
    version: 1,
    epic: '7',
    story: 'protected-paths',
    planHash: 'abc',
    status: 'failed',
    branch: 'story/7/protected-paths',
    attempt: 1,
    executors: ['codex'],
    usage: [],
    reason,
    notes: [],
    timings: {},
  };
  return {
    record,
    story: {
      id: 'protected-paths',
      title: 'Keep protected paths protected',
      description: 'd',
      owns: ['src/'],
      reads: [],
      dependsOn: [],
      provides: [],
      acceptance: [],
      testsChange: false,
    },
    gates: [],
    events: [],
    pushes: 1,
    ...extra,
  };
}

const summary = (r: StorySummaryFacts): string =>
  renderStorySummary({
    epic: 7,
    result: r,
    phase: 'publish',
    judged: false,
    repoUrl: 'https://github.com/o/r',
    isolation: { isolated: true, description: 'as the user epicflow-agent' },
    hint: storyHint(r),
  });

describe('the hint of a story summary', () => {
  it('tells how to let epicflow push when GitHub refused the push as protected', () => {
    const r = result('GitHub refused the push to epic/7: the branch is protected', {
      refusedPush: 'protected',
    });
    expect(summary(r)).toContain(BYPASS);
  });

  it('is not read from the words of a reason', () => {
    for (const reason of [
      'cannot isolate the agent: the kernel setting fs.protected_hardlinks is not 1',
      'gates failed: test "keeps protected branch names" failed',
    ]) {
      expect(summary(result(reason))).not.toContain(BYPASS);
    }
  });

  it('gives no bypass advice for a push refused for another reason', () => {
    const r = result('GitHub refused the push to epic/7 (token rejected)', { refusedPush: 'auth' });
    expect(storyHint(r)).toBeUndefined();
    expect(summary(r)).not.toContain(BYPASS);
  });
});

describe('the deferred findings of a story summary', () => {
  it('lists the findings the judge let the story merge with', () => {
    const base = result('');
    const { reason: _r, ...record } = base.record;
    const text = summary({
      ...base,
      record: {
        ...record,
        status: 'done',
        deferred: ['minor: name the helper | after what it returns', 'major: no test for []'],
      },
    });
    expect(text).toContain(
      '| deferred | minor: name the helper \\| after what it returns; major: no test for [] |',
    );
    expect(summary(result('x'))).not.toContain('| deferred |');
  });
});

describe('who ran untrusted code, in a story summary', () => {
  const row = (isolation: { isolated: boolean; walled?: boolean; description: string }) =>
    renderStorySummary({
      epic: 7,
      result: result('x'),
      phase: 'work',
      judged: false,
      repoUrl: 'https://github.com/o/r',
      isolation,
      hint: undefined,
    })
      .split('\n')
      .find((line) => line.startsWith('| untrusted code |'));

  it("warns only when neither another user nor the kernel's walls kept it from the job", () => {
    expect(row({ isolated: false, walled: true, description: 'in the sandbox' })).toBe(
      '| untrusted code | ran in the sandbox |',
    );
    expect(row({ isolated: true, description: 'as the user a' })).toBe(
      '| untrusted code | ran as the user a |',
    );
    expect(row({ isolated: false, walled: false, description: 'as the runner' })).toBe(
      "| untrusted code | ⚠️ ran as the runner: it could read this job's credentials (allow-unisolated-agent) |",
    );
  });
});
