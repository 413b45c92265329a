import { describe, expect, it } from '@jest/globals';
import type { ExecutorConfig } from '../../../src/core/config/types.js';
import {
  decideAfterRedMerge,
  startRounds,
  type RoundRules,
} from '../../../src/core/story/index.js';

const alpha: ExecutorConfig = {
  id: 'alpha',
  harness: 'command',
  command: ['true'],
  args: [],
  slots: 1,
  priority: 1,
  roles: ['coder'],
  env: {},
};
const rules = (mergeRevisions?: number): RoundRules => ({
  fixRounds: 2,
  judgeRounds: undefined,
  verifier: false,
  retries: { transient: 0, backoffMs: 0 },
  ...(mergeRevisions === undefined ? {} : { mergeRevisions }),
});
const failures = [{ command: 'npm test', lines: ['not ok - clash'], output: 'not ok 1 - clash\n' }];
const facts = {
  failures,
  reason: 'epic gates failed after merging; merge undone: npm test: clash',
};

describe('a merge that turned the epic head red', () => {
  it('goes back to the coder with the red lines while merge revisions last, said and noted', () => {
    const first = decideAfterRedMerge(startRounds(rules(1), alpha, ['alpha']).state, facts);
    const message =
      'the merged epic head failed its gates (merge undone): merge revision 1 of 1, on the epic head';
    expect(first.next).toEqual({ kind: 'code', feedback: { gateFailures: failures }, waitMs: 0 });
    expect(first.effects).toEqual([
      { kind: 'say', message },
      { kind: 'note', notes: [message] },
    ]);
    // The next red merge, with none left, fails as before.
    expect(decideAfterRedMerge(first.state, facts).next).toEqual({
      kind: 'stop',
      status: 'failed',
      reason: facts.reason,
    });
  });

  it('fails at once without merge revisions', () => {
    for (const r of [rules(0), rules()]) {
      expect(decideAfterRedMerge(startRounds(r, alpha, ['alpha']).state, facts).next).toMatchObject(
        { kind: 'stop', status: 'failed', reason: facts.reason },
      );
    }
  });
});
