/** A turn request for builder tests (pure: no file is touched). */
import type { Harness } from '../../../src/core/config/types.js';
import type { TurnRequest } from '../../../src/core/executor.js';

export function requestFor(harness: Harness, overrides: Partial<TurnRequest> = {}): TurnRequest {
  return {
    epic: '42',
    story: 'api',
    round: 1,
    role: 'coder',
    prompt: 'Build the API.',
    worktree: '/repo/worktree',
    executor: {
      id: harness,
      harness,
      model: 'm-1',
      args: ['--extra'],
      slots: 2,
      priority: 1,
      roles: ['coder'],
      env: {},
    },
    env: { SOME_KEY: 'k', GITHUB_TOKEN: 'ghs_1', GH_TOKEN: 'gho_1' },
    home: `/homes/${harness}`,
    timeoutMs: 1000,
    ...overrides,
  };
}
