import { describe, expect, it } from '@jest/globals';
import {
  checksText,
  rollUpChecks,
  type CheckContext,
  type PullChecks,
} from '../../../src/core/epic/index.js';

const run = (name: string, status: string, conclusion: string | null = null): CheckContext => ({
  kind: 'check-run',
  name,
  status,
  conclusion,
});
const status = (context: string, state: string): CheckContext => ({
  kind: 'status',
  context,
  state,
});
const all = (...contexts: CheckContext[]): PullChecks => ({
  contexts,
  total: contexts.length,
  overall: null,
});

describe('rollUpChecks', () => {
  it('a commit without checks is a success with nothing to show: nothing to wait for', () => {
    const rollup = rollUpChecks(all());
    expect(rollup).toEqual({ state: 'success', pending: [], failing: [], total: 0, unread: 0 });
    expect(checksText(rollup)).toBeNull();
  });

  it.each(['QUEUED', 'IN_PROGRESS', 'WAITING', 'PENDING', 'REQUESTED'])(
    'a check run %s is pending, whatever its conclusion says',
    (state) => {
      const rollup = rollUpChecks(
        all(run('build', state, 'FAILURE'), run('lint', 'COMPLETED', 'SUCCESS')),
      );
      expect(rollup.state).toBe('pending');
      expect(rollup.pending).toEqual(['build']);
      expect(checksText(rollup)).toBe('checks: pending (1: build)');
    },
  );

  it.each(['FAILURE', 'TIMED_OUT', 'CANCELLED', 'ACTION_REQUIRED', 'STARTUP_FAILURE'])(
    'a completed check run concluded %s fails',
    (conclusion) => {
      const rollup = rollUpChecks(
        all(run('lint', 'COMPLETED', 'SUCCESS'), run('test', 'COMPLETED', conclusion)),
      );
      expect(rollup.state).toBe('failure');
      expect(rollup.failing).toEqual(['test']);
      expect(checksText(rollup)).toBe('checks: failing (test)');
    },
  );

  it.each(['SUCCESS', 'NEUTRAL', 'SKIPPED', 'STALE'])(
    'a completed check run concluded %s passes',
    (conclusion) => {
      const rollup = rollUpChecks(all(run('build', 'COMPLETED', conclusion)));
      expect(rollup.state).toBe('success');
      expect(checksText(rollup)).toBe('checks: passing');
    },
  );

  it.each([
    ['PENDING', 'pending'],
    ['EXPECTED', 'pending'],
    ['FAILURE', 'failure'],
    ['ERROR', 'failure'],
    ['SUCCESS', 'success'],
  ] as const)('a commit status %s is %s', (state, want) => {
    const rollup = rollUpChecks(all(status('ci/deploy', state)));
    expect(rollup.state).toBe(want);
    expect(checksText(rollup)).toBe(
      {
        pending: 'checks: pending (1: ci/deploy)',
        failure: 'checks: failing (ci/deploy)',
        success: 'checks: passing',
      }[want],
    );
  });

  it('pending wins over failing: a failure may still be joined by others', () => {
    const rollup = rollUpChecks(
      all(
        run('build', 'IN_PROGRESS'),
        run('test', 'COMPLETED', 'FAILURE'),
        status('lint', 'PENDING'),
        status('deploy', 'ERROR'),
      ),
    );
    expect(rollup).toEqual({
      state: 'pending',
      pending: ['build', 'lint'],
      failing: ['test', 'deploy'],
      total: 4,
      unread: 0,
    });
    expect(checksText(rollup)).toBe('checks: pending (2: build, lint)');
  });

  it('lists every failing check of a mixed list once, and counts past five', () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const rollup = rollUpChecks(
      all(
        ...names.map((n) => run(n, 'COMPLETED', 'FAILURE')),
        run('a', 'COMPLETED', 'CANCELLED'),
        run('ok', 'COMPLETED', 'SUCCESS'),
        status('ci', 'SUCCESS'),
      ),
    );
    expect(rollup.failing).toEqual(names);
    expect(checksText(rollup)).toBe('checks: failing (a, b, c, d, e and 2 more)');
  });

  it('judges checks past those read by GitHub\u2019s combined state, and says how many were not read', () => {
    const read = [run('build', 'COMPLETED', 'SUCCESS'), run('lint', 'COMPLETED', 'SUCCESS')];
    const rest = (overall: string): PullChecks => ({ contexts: read, total: 150, overall });
    expect(checksText(rollUpChecks(rest('PENDING')))).toBe('checks: pending (148 not read)');
    expect(checksText(rollUpChecks(rest('ERROR')))).toBe('checks: failing (148 not read)');
    expect(checksText(rollUpChecks(rest('SUCCESS')))).toBe('checks: passing');
    const failed = rollUpChecks({
      contexts: [...read, run('test', 'COMPLETED', 'FAILURE')],
      total: 150,
      overall: 'PENDING',
    });
    expect(failed.state).toBe('pending');
    expect(checksText(failed)).toBe('checks: pending (147 not read)');
    // The combined state is not consulted when every check was read.
    expect(rollUpChecks({ contexts: read, total: 2, overall: 'FAILURE' }).state).toBe('success');
  });
});
