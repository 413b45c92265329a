import { describe, expect, it } from '@jest/globals';
import { botCommitIdentity, describePushRefusal } from '../../../src/core/epic/index.js';

describe("epicflow's pushes as people read them", () => {
  it("commits carry the bot's login and its noreply address", () => {
    expect(botCommitIdentity('epicflow[bot]')).toEqual({
      name: 'epicflow[bot]',
      email: 'epicflow@users.noreply.github.com',
    });
    expect(botCommitIdentity('octo-bot')).toEqual({
      name: 'octo-bot',
      email: 'octo-bot@users.noreply.github.com',
    });
  });

  it('a refused push says why, with the next step, on one line', () => {
    const detail = ' ! [remote rejected] x -> epic/7\n\n  (protected branch hook declined)';
    expect(describePushRefusal('epic/7', 'protected', detail)).toBe(
      "GitHub refused the push to epic/7: the branch is protected; allow the epicflow App (or the token's user) as a bypass actor in the branch's ruleset, or leave epic branches unprotected (! [remote rejected] x -> epic/7 | (protected branch hook declined))",
    );
    expect(describePushRefusal('epic/7', 'auth', 'denied')).toBe(
      'GitHub refused the push to epic/7 (token rejected or without Contents: write): denied',
    );
    expect(describePushRefusal('epic/7', 'other', 'boom')).toBe(
      'GitHub refused the push to epic/7 (push failed): boom',
    );
  });
});
