import { describe, expect, it } from '@jest/globals';
import type { Permission, SenderDecision } from '../../../src/core/epic/index.js';
import { decideSender } from '../../../src/core/epic/index.js';

const BOT = 'epicflow[bot]';

describe('decideSender', () => {
  const table: [string, string, string, Permission | null, SenderDecision][] = [
    ['admin', 'User', 'alice', 'admin', 'act'],
    ['maintainer', 'User', 'alice', 'maintain', 'act'],
    ['writer', 'User', 'alice', 'write', 'act'],
    ['epicflow itself', 'Bot', BOT, 'write', { ignore: 'bot' }],
    ['epicflow itself, typed as a user', 'User', BOT, 'admin', { ignore: 'bot' }],
    ['another bot', 'Bot', 'dependabot[bot]', 'write', { ignore: 'bot' }],
    ['a [bot] login whatever its type', 'User', 'renovate[bot]', 'admin', { ignore: 'bot' }],
    ['epicflow without the suffix', 'User', 'EpicFlow', 'admin', { ignore: 'bot' }],
    [
      'reader',
      'User',
      'bob',
      'read',
      {
        reply:
          '@bob only users with write permission on this repository can steer epicflow (your permission: read). Ask a maintainer to comment the command.',
      },
    ],
    [
      'triager',
      'User',
      'bob',
      'triage',
      {
        reply:
          '@bob only users with write permission on this repository can steer epicflow (your permission: triage). Ask a maintainer to comment the command.',
      },
    ],
    [
      'not a collaborator',
      'User',
      'eve',
      null,
      {
        reply:
          '@eve only users with write permission on this repository can steer epicflow (your permission: none). Ask a maintainer to comment the command.',
      },
    ],
  ];
  it.each(table)('%s', (_name, senderType, login, permission, expected) => {
    expect(decideSender({ senderType, login, botLogin: BOT, permission })).toEqual(expected);
  });

  it('never echoes characters a login cannot have', () => {
    const decision = decideSender({
      senderType: 'User',
      login: 'x<img>',
      botLogin: BOT,
      permission: 'none',
    });
    expect(decision).toEqual({ reply: expect.stringMatching(/^@ximg only users/) });
  });
});
