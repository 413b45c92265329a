/**
 * What the planning loop does after a round: accept the plan, ask for a
 * repair, or give up. Round 1 is the first answer; rounds 2 … repairRounds + 1
 * are repairs.
 */
import type { Violation } from '../plan/types.js';
import type { QualityWarning } from './quality.js';

export type RoundDecision =
  | { readonly kind: 'accept' }
  | { readonly kind: 'repair'; readonly nextRound: number }
  | { readonly kind: 'give-up' };

interface RoundFindings {
  /** This round (1 first). */
  readonly round: number;
  /** `planner.repairRounds`. */
  readonly repairRounds: number;
  /** The plan validator's violations of the answer (none when it is valid). */
  readonly violations: readonly Violation[];
  /** Quality warnings of a valid answer. */
  readonly quality: readonly QualityWarning[];
}

/** Accept a valid plan without must-fix warnings; otherwise repair while rounds remain. */
export function decideRound(findings: RoundFindings): RoundDecision {
  const refused =
    findings.violations.length > 0 || findings.quality.some((q) => q.mustFix === true);
  if (!refused) return { kind: 'accept' };
  if (findings.round <= findings.repairRounds) {
    return { kind: 'repair', nextRound: findings.round + 1 };
  }
  return { kind: 'give-up' };
}
