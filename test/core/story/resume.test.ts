import { describe, expect, it } from '@jest/globals';
import type { ExecutorConfig } from '../../../src/core/config/types.js';
import {
  decideAfterCheck,
  resumePoint,
  resumeRounds,
  startRounds,
  type ResumeFacts,
  type ResumePoint,
  type RoundRules,
} from '../../../src/core/story/index.js';

const alpha: ExecutorConfig = {
  id: 'alpha',
  harness: 'command',
  args: [],
  slots: 1,
  priority: 100,
  roles: ['coder'],
  env: {},
};
const rules: RoundRules = {
  fixRounds: 2,
  judgeRounds: undefined,
  verifier: false,
  retries: { transient: 3, backoffMs: 2000 },
};
const C = 'c'.repeat(40);
const M = 'm'.repeat(40);

describe('resumePoint: where a resumed story starts', () => {
  const base: ResumeFacts = { progress: undefined, head: C, changed: true, judge: false };
  const rows: [string, Partial<ResumeFacts>, ResumePoint][] = [
    ['no progress recorded (a first start, a retry after a failure)', {}, { kind: 'code' }],
    [
      'progress, but the branch changes nothing',
      { progress: { commit: C, passed: 'checks' }, changed: false },
      { kind: 'code' },
    ],
    ['committed, not checked', { progress: { commit: C, passed: 'none' } }, { kind: 'check' }],
    [
      'checked, but the branch moved since (it caught up with a newer epic head)',
      { progress: { commit: C, passed: 'checks' }, head: M },
      { kind: 'check' },
    ],
    // A record's word never skips epicflow's own checks: they run again on the commit.
    [
      'checked, the branch is that commit, no judge',
      { progress: { commit: C, passed: 'checks' } },
      { kind: 'check' },
    ],
    [
      'cleared by the judge, the branch is that commit',
      { progress: { commit: C, passed: 'judge' }, judge: true },
      { kind: 'check' },
    ],
  ];
  it.each(rows)('%s', (_name, over, expected) => {
    expect(resumePoint({ ...base, ...over })).toEqual(expected);
  });
});

describe('resumeRounds: the rounds start at the resume point', () => {
  it('a coder turn is the fresh start', () => {
    expect(resumeRounds(rules, alpha, ['alpha'], { kind: 'code' })).toEqual(
      startRounds(rules, alpha, ['alpha']),
    );
  });

  it('check: the checks decide, and a pass is merged and recorded as progress', () => {
    const d = resumeRounds(rules, alpha, ['alpha'], { kind: 'check' });
    expect(d.next).toEqual({ kind: 'check' });
    const after = decideAfterCheck(d.state, {
      interrupted: false,
      empty: false,
      verdicts: [],
      oracle: [],
      perimeter: { owned: ['src/a.txt'], readOnly: [], outside: [], forbidden: [] },
      runs: [],
      commit: C,
    });
    expect(after.next).toEqual({ kind: 'integrate', commit: C });
    expect(after.effects).toContainEqual({
      kind: 'progress',
      progress: { commit: C, passed: 'checks' },
    });
  });
});
