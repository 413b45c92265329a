import { describe, expect, it } from '@jest/globals';
import type { Violation } from '../../../src/core/plan/index.js';
import {
  decideRound,
  type QualityWarning,
  type RoundDecision,
} from '../../../src/core/planner/index.js';

const cycle: Violation = { code: 'cycle', message: 'a -> b -> a' };
const tooMany: QualityWarning = {
  code: 'too-many-stories-for-config',
  message: 'x',
  mustFix: true,
};
const noAcceptance: QualityWarning = { code: 'no-acceptance', message: 'y', mustFix: false };

describe('decideRound', () => {
  it.each<[string, number, number, Violation[], QualityWarning[], RoundDecision]>([
    ['accepts a valid plan at once', 1, 2, [], [], { kind: 'accept' }],
    ['accepts a valid plan with warnings only', 1, 2, [], [noAcceptance], { kind: 'accept' }],
    [
      'asks for a repair of violations in round 1',
      1,
      2,
      [cycle],
      [],
      { kind: 'repair', nextRound: 2 },
    ],
    [
      'asks for a repair of a must-fix warning',
      1,
      2,
      [],
      [tooMany, noAcceptance],
      { kind: 'repair', nextRound: 2 },
    ],
    [
      'repairs again in the last repair round allowed',
      2,
      2,
      [cycle],
      [],
      { kind: 'repair', nextRound: 3 },
    ],
    ['gives up after the last repair round', 3, 2, [cycle], [], { kind: 'give-up' }],
    ['accepts a repaired plan in the last round', 3, 2, [], [noAcceptance], { kind: 'accept' }],
    ['gives up at once with no repair rounds', 1, 0, [cycle], [], { kind: 'give-up' }],
    ['accepts at once with no repair rounds', 1, 0, [], [], { kind: 'accept' }],
  ])('%s', (_name, round, repairRounds, violations, quality, expected) => {
    expect(decideRound({ round, repairRounds, violations, quality })).toEqual(expected);
  });
});
