import { describe, expect, it } from '@jest/globals';
import { oneLineText } from '../../../src/core/epic/index.js';
import { buildLandedMessage, buildMergeMessage } from '../../../src/core/merge-message.js';

const HOSTILE = 'Pay\u0000 the \u202egnp.exe\u202c bill\u2066 now\u0007\r\nTrailer: forged';

describe('titles from people on one line', () => {
  it('lose control, invisible and bidirectional-override characters', () => {
    expect(oneLineText(HOSTILE)).toBe('Pay the gnp.exe bill now Trailer: forged');
  });

  it('reach merge messages without them', () => {
    const merge = buildMergeMessage({ story: 'api', title: HOSTILE, chain: ['codex'] });
    expect(merge.split('\n')[0]).toBe('Merge story api: Pay the gnp.exe bill now Trailer: forged');
    const landed = buildLandedMessage({
      epic: '1',
      epicBranch: 'epic/1',
      into: 'main',
      title: HOSTILE,
    });
    expect(landed.split('\n')[0]).toBe(
      'Merge epic/1 into main: Pay the gnp.exe bill now Trailer: forged',
    );
  });
});
