/**
 * The data of one story's rounds (core/story/lifecycle.ts decides on them): the rules a
 * story runs under, the state so far, the steps the engine performs, the effects it
 * tells and records, and the facts each step returns.
 */
import type { ExecutorConfig } from '../config/types.js';
import type { OutcomeClass } from '../executor.js';
import type { GateRun, GateVerdict } from '../gates/index.js';
import type { JudgeVerdict } from '../judge/index.js';
import type { EvaluationRound, Halt, Outgrown, StoryProgress } from '../model.js';
import type { PerimeterResult } from '../perimeter/index.js';
import type { PromptFeedback } from '../prompt/index.js';
import type { RosterExhausted } from '../roster/index.js';
import type { RetryRules, TurnEnd } from './transient.js';

/** At most this many handovers per story. */
export const MAX_HANDOVERS = 2;

/** Waits before retrying a rate-limited turn: 1 s, then 2 s (the third one excludes). */
export const RATE_LIMIT_BACKOFF_MS = 1000;

/** What the config allows a story, fixed for all its rounds. */
export interface RoundRules {
  /** `fixRounds`: turns that may follow failing gates or oracle findings. */
  readonly fixRounds: number;
  /** `review.rounds` when review lenses are configured; undefined: no review. */
  readonly reviewRounds?: number | undefined;
  /** `judge.rounds` when a judge is configured; undefined: no judge. */
  readonly judgeRounds: number | undefined;
  /** `judge.deferNonBlocking`: only critical findings block; the others are deferred. */
  readonly deferNonBlocking?: boolean;
  /** True when some executor has the verifier role. */
  readonly verifier: boolean;
  /** `retries`: the story's budget of retries for transient faults, and the backoff. */
  readonly retries: RetryRules;
  /**
   * `mergeRevisions`: turns a story gets when its checked commit turned the merged epic
   * head red (the merge undone), before it fails (absent: none).
   */
  readonly mergeRevisions?: number;
  /**
   * The rounds of a task that is not the story's last (core/story/tasks.ts): a commit
   * that passed the checks ends them (no judge, no merge yet), and a turn that changed
   * nothing completes the task.
   */
  readonly taskEnd?: boolean;
}

/** A BLOCKED_ON claim of a coder and what the plan answers it (`answerBlocked`). */
export interface BlockedClaim {
  readonly claim: string;
  /** The pushback text from the plan. */
  readonly answer: string;
  /** The plan edit that would resolve a real claim. */
  readonly suggestedEdit: string;
  /** True when the plan alone settles the claim (no verifier is asked). */
  readonly decided: boolean;
}

/** The step whose result the state waits for, with what deciding on it needs. */
export type Awaiting =
  | { readonly step: 'turn' }
  | { readonly step: 'exclusion' }
  | { readonly step: 'handover'; readonly why: string; readonly exhausted: boolean }
  | { readonly step: 'verifier'; readonly claim: BlockedClaim }
  /** `afterCatchUp`: the branch just took the epic head, which other stories moved. */
  | { readonly step: 'check'; readonly afterCatchUp?: true }
  /** The branch takes the epic head before the judge reads it. */
  | { readonly step: 'catch-up' }
  /** The checks again, after paths outside the perimeter were put back. */
  | { readonly step: 'recheck' }
  /** The reviewers read the checked commit through their lenses. */
  | { readonly step: 'review' }
  /** `inPlace`: the branch has no changes and the judge says whether the work is there. */
  | { readonly step: 'judge'; readonly inPlace: boolean }
  | { readonly step: 'end' };

/** What was decided so far about one story's rounds. */
export interface StoryRounds {
  readonly rules: RoundRules;
  readonly awaiting: Awaiting;
  /** The coder now: the first one, or the one the story was handed over to. */
  readonly executor: ExecutorConfig;
  /** Every coder of the story so far, in order. */
  readonly chain: readonly string[];
  readonly handovers: number;
  /** Rate-limited turns retried so far (reset when an executor stops). */
  readonly rateRetries: number;
  /** Turns of any kind retried after a transient fault so far (the story's budget). */
  readonly transientRetries: number;
  /** Merge revisions spent so far (absent: none). */
  readonly mergeRevisions?: number;
  /** The feedback of the coder turn that runs (or ran) last. */
  readonly feedback: PromptFeedback | undefined;
  readonly fixRoundsLeft: number;
  /** True once paths outside the perimeter were shown to the coder. */
  readonly perimeterShown: boolean;
  /** True once a BLOCKED_ON claim was pushed back. */
  readonly blockedPushback: boolean;
  readonly judgeRevisions: number;
  /** Review rounds run so far (absent: none). */
  readonly reviews?: number;
  /** Coder rounds fed with review findings so far (absent: none). */
  readonly reviewFixes?: number;
  /** The findings of the last review round (lens-prefixed), open or sent to the coder. */
  readonly reviewFindings?: readonly string[];
  /** The commit that passed every check: what is merged ('' none yet). */
  readonly checked: string;
  /** What the last check found blocking, when it sent the coder a fix round. */
  readonly blocking?: string | undefined;
}

/** How an executor that stopped is reported to the roster. */
export type ExecutorSignal =
  | { readonly kind: 'missing-binary'; readonly detail: string }
  | {
      readonly kind: 'signal';
      readonly outcome: OutcomeClass;
      readonly resetAt: string | undefined;
      readonly detail: string;
    };

/** The next step, for the engine to perform. */
export type StoryAction =
  /** A coder turn of `state.executor` with this feedback, after waiting `waitMs`. */
  | {
      readonly kind: 'code';
      readonly feedback: PromptFeedback | undefined;
      readonly waitMs: number;
    }
  /** Tell the roster the executor stopped; it answers with an exclusion or none. */
  | { readonly kind: 'exclude'; readonly executor: string; readonly signal: ExecutorSignal }
  /** Ask the roster for the next coder, excluding `state.chain`. */
  | { readonly kind: 'hand-over' }
  /** Ask a verifier whether the claim is real. */
  | { readonly kind: 'verify'; readonly claim: BlockedClaim }
  /** Gates against the baseline, oracle guard and perimeter of the branch head. */
  | { readonly kind: 'check' }
  /** Put these paths back as on the epic branch, commit, and check again. */
  | { readonly kind: 'restore'; readonly paths: readonly string[] }
  /**
   * Take the epic head into the branch (epic side wins, as at the start) when other
   * stories moved it since, so the judge reads the story as it would be merged.
   */
  | { readonly kind: 'catch-up' }
  /**
   * One review round over the checked commit: a reviewer turn per lens. `previous`: the
   * findings of the round before (lens-prefixed), for each lens to check again.
   */
  | { readonly kind: 'review'; readonly round: number; readonly previous: readonly string[] }
  /** `openReview`: review findings no round closed, for the judge to weigh. */
  | { readonly kind: 'judge'; readonly inPlace: boolean; readonly openReview?: readonly string[] }
  /** Merge this commit into the epic branch. */
  | { readonly kind: 'integrate'; readonly commit: string }
  /** Done without a merge: the work was already in place. */
  | { readonly kind: 'in-place' }
  /** The task's rounds end (`taskEnd`): at this checked commit, or where the branch is. */
  | { readonly kind: 'task-done'; readonly commit: string | undefined }
  | {
      readonly kind: 'stop';
      readonly status: 'failed' | 'waiting';
      readonly reason: string;
      /** Set when the story failed as one too big for a coder: a split may be proposed. */
      readonly outgrown?: Outgrown;
    };

/** What the engine tells and records before the next step, in this order. */
export type StoryEffect =
  /** A `story` event (with structured `data`, for a review or judge round). */
  | {
      readonly kind: 'say';
      readonly message: string;
      readonly data?: Readonly<Record<string, unknown>>;
    }
  /** A review or judge round, appended to the record and the story's findings log. */
  | { readonly kind: 'evaluation'; readonly evaluation: EvaluationRound }
  /** Notes appended to the record, in one save. */
  | { readonly kind: 'note'; readonly notes: readonly string[] }
  /** The record's executors are now these. */
  | { readonly kind: 'executors'; readonly executors: readonly string[] }
  /** Stop launching stories. */
  | { readonly kind: 'halt'; readonly halt: Halt }
  /** The record's progress: this commit passed these checks (a resume starts there). */
  | { readonly kind: 'progress'; readonly progress: StoryProgress }
  /** The judge's findings below critical the story passed with (`judge.deferNonBlocking`). */
  | { readonly kind: 'deferred'; readonly findings: readonly string[] };

export interface Decision {
  readonly state: StoryRounds;
  readonly effects: readonly StoryEffect[];
  readonly next: StoryAction;
}

/** A coder turn as it ended. */
export interface TurnFacts extends TurnEnd {
  /** The run was interrupted (SIGINT/SIGTERM) by the time the turn ended. */
  readonly interrupted: boolean;
  /** The story's turn number (`EPICFLOW_ROUND`), for people. */
  readonly round?: number | undefined;
  readonly outcome: OutcomeClass;
  readonly missingBinary: boolean;
  readonly detail: string;
  readonly resetAt?: string | undefined;
  /** Its BLOCKED_ON claim, answered from the plan, if it made one. */
  readonly blocked?: BlockedClaim | undefined;
  /** The turn committed nothing: the branch is as the round before left it. */
  readonly unchanged?: boolean | undefined;
}

/** No answer from a judge or verifier, and why. */
export interface Unavailable {
  readonly kind: 'unavailable';
  readonly why: string;
}

/** What a judge or verifier call spent of the story's retries for transient faults. */
export interface HelperRetries {
  /** The story's transient retries once the call ended; undefined: as before it. */
  readonly transientRetries?: number | undefined;
}

/** The verifier's answer on a claim, or why there is none. */
export type VerifierFacts = HelperRetries &
  (
    | Unavailable
    | {
        readonly kind: 'answer';
        readonly executor: string;
        readonly real: boolean;
        readonly reason: string;
        /** The answer a run before gave over the same fingerprint (none was asked now). */
        readonly reused?: boolean;
      }
  );

/** The checks of one commit. */
export interface CheckFacts {
  readonly interrupted: boolean;
  /** The branch changes nothing against the epic base. */
  readonly empty: boolean;
  readonly verdicts: readonly GateVerdict[];
  readonly oracle: readonly string[];
  readonly perimeter: PerimeterResult;
  readonly runs: readonly Pick<GateRun, 'command' | 'output'>[];
  /** The commit every check judged. */
  readonly commit: string;
}

/** The judge's verdict, or why there is none. */
export type JudgeFacts = HelperRetries &
  (
    | Unavailable
    | {
        readonly kind: 'verdict';
        readonly verdict: JudgeVerdict;
        readonly executor: string;
        /** False when the judge also coded the story. */
        readonly independent: boolean;
        /** The verdict a run before gave over the same fingerprint (no judge was asked now). */
        readonly reused?: boolean;
      }
  );

/** One lens's answer in a review round. */
export interface LensFacts {
  readonly lens: string;
  readonly executor: string;
  readonly score: number;
  readonly cleared: boolean;
  readonly findings: readonly string[];
  /** False when the reviewer also coded the story. */
  readonly independent: boolean;
  /** The answer kept for the same diff, lens and prompt (none was asked now). */
  readonly reused?: boolean;
}

/** A review round's answers (one per lens, in the config's order), or why there are none. */
export type ReviewFacts = HelperRetries &
  (Unavailable | { readonly kind: 'round'; readonly lenses: readonly LensFacts[] });

/** The roster's answer to a stopped executor. */
export interface ExclusionFacts {
  /** The exclusion's reason; null: a rate limit below the threshold, no exclusion. */
  readonly exclusion: string | null;
  /** Whether every coder is now out, as the roster says after the signal. */
  readonly exhausted: RosterExhausted | null;
}

/** The roster's next coder, or none. */
export interface HandoverFacts {
  readonly next: ExecutorConfig | null;
}

/** How a turn that stopped on infrastructure is reported to the roster. */
export function executorSignal(turn: {
  readonly outcome: OutcomeClass;
  readonly missingBinary: boolean;
  readonly detail: string;
  readonly resetAt?: string | undefined;
}): ExecutorSignal {
  return turn.missingBinary
    ? { kind: 'missing-binary', detail: turn.detail }
    : { kind: 'signal', outcome: turn.outcome, resetAt: turn.resetAt, detail: turn.detail };
}
