/** The push and pull_request webhooks as the orchestrator's events (the App's and the Action's one mapping). */
import { describe, expect, it } from '@jest/globals';
import { isEpicflowError } from '../../src/core/errors.js';
import { toEpicEvent } from '../../src/orchestrator/index.js';

const sender = { login: 'alice', type: 'User' };

describe('toEpicEvent for landings', () => {
  it('maps a push, a branch deletion and a closed pull request', () => {
    expect(toEpicEvent('push', { ref: 'refs/heads/main', deleted: false, sender })).toEqual({
      kind: 'push',
      ref: 'refs/heads/main',
      deleted: false,
      sender,
    });
    expect(toEpicEvent('push', { ref: 'refs/heads/x', deleted: true, sender })).toMatchObject({
      deleted: true,
    });
    expect(
      toEpicEvent('pull_request', { action: 'closed', number: 4, pull_request: {}, sender }),
    ).toEqual({ kind: 'pr-closed', number: 4, sender });
  });

  it('ignores pull request actions other than closed', () => {
    for (const action of ['opened', 'synchronize', 'reopened', 'ready_for_review']) {
      expect(toEpicEvent('pull_request', { action, number: 4, sender })).toBeNull();
    }
  });

  it('refuses a payload that is not what GitHub sends, naming the field', () => {
    let error: unknown;
    try {
      toEpicEvent('push', { ref: 12, sender });
    } catch (e) {
      error = e;
    }
    expect(isEpicflowError(error, 'usage')).toBe(true);
    expect((error as Error).message).toBe('the push event payload is not what GitHub sends');
    expect((error as { details: string[] }).details.join('\n')).toContain('ref');
  });
});
