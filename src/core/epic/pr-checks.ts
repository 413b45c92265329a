/**
 * The checks of the epic pull request rolled up into one state (docs/commands.md, "The
 * status comment"): pending while anything still runs, else failing when anything
 * failed, else passing. Pure: the GitHub adapter reads the head commit's check runs and
 * commit statuses, this decides what they add up to.
 */

/** One check on the head commit, in GitHub's GraphQL values (`CheckRun`, `StatusContext`). */
export type CheckContext =
  | {
      readonly kind: 'check-run';
      readonly name: string;
      /** `CheckStatusState`: QUEUED, IN_PROGRESS, COMPLETED, WAITING, PENDING, REQUESTED. */
      readonly status: string;
      /** `CheckConclusionState` once completed, else null. */
      readonly conclusion: string | null;
    }
  | {
      readonly kind: 'status';
      readonly context: string;
      /** `StatusState`: PENDING, EXPECTED, SUCCESS, FAILURE, ERROR. */
      readonly state: string;
    };

/** What the adapter read of the head commit's checks. */
export interface PullChecks {
  /** The checks read (GitHub gives at most 100 in one request). */
  readonly contexts: readonly CheckContext[];
  /** How many checks the commit has in all (more than `contexts` when some were not read). */
  readonly total: number;
  /** GitHub's own combined state of all of them (`StatusState`); null when it has none. */
  readonly overall: string | null;
}

type ChecksState = 'pending' | 'failure' | 'success';

interface ChecksRollup {
  readonly state: ChecksState;
  /** Names of the checks not finished yet, in the order read, each once. */
  readonly pending: readonly string[];
  /** Names of the checks that failed, in the order read, each once. */
  readonly failing: readonly string[];
  /** How many checks the commit has in all. */
  readonly total: number;
  /** Checks not read (past the first 100): judged only by GitHub's combined state. */
  readonly unread: number;
}

/** Conclusions of a finished check run that fail it; any other (success, neutral, skipped, stale) passes. */
const FAILED_CONCLUSIONS: ReadonlySet<string> = new Set([
  'FAILURE',
  'TIMED_OUT',
  'CANCELLED',
  'ACTION_REQUIRED',
  'STARTUP_FAILURE',
]);
/** Commit status states still waiting for a result. */
const WAITING_STATES: ReadonlySet<string> = new Set(['PENDING', 'EXPECTED']);
/** Commit status states that fail. */
const FAILED_STATES: ReadonlySet<string> = new Set(['FAILURE', 'ERROR']);

function verdict(c: CheckContext): ChecksState {
  if (c.kind === 'check-run') {
    if (c.status !== 'COMPLETED') return 'pending';
    return c.conclusion !== null && FAILED_CONCLUSIONS.has(c.conclusion) ? 'failure' : 'success';
  }
  if (WAITING_STATES.has(c.state)) return 'pending';
  return FAILED_STATES.has(c.state) ? 'failure' : 'success';
}

function nameOf(c: CheckContext): string {
  return c.kind === 'check-run' ? c.name : c.context;
}

/**
 * Pending when any check has not finished; else failure when any failed; else success.
 * A commit without checks is a success: there is nothing to wait for. Checks past the
 * ones read count by GitHub's combined state of all of them.
 */
export function rollUpChecks(checks: PullChecks): ChecksRollup {
  const named = (want: ChecksState): string[] => [
    ...new Set(checks.contexts.filter((c) => verdict(c) === want).map(nameOf)),
  ];
  const pending = named('pending');
  const failing = named('failure');
  const unread = Math.max(0, checks.total - checks.contexts.length);
  const overall = unread > 0 ? checks.overall : null;
  const state: ChecksState =
    pending.length > 0 || (overall !== null && WAITING_STATES.has(overall))
      ? 'pending'
      : failing.length > 0 || (overall !== null && FAILED_STATES.has(overall))
        ? 'failure'
        : 'success';
  return { state, pending, failing, total: checks.total, unread };
}

/** Names listed in the text before the rest are counted. */
const NAMES_SHOWN = 5;

function nameList(names: readonly string[], unread: number): string {
  const shown = names.slice(0, NAMES_SHOWN);
  const more = names.length - shown.length;
  const tail = [
    ...(more > 0 ? [`${more} more`] : []),
    ...(unread > 0 ? [`${unread} not read`] : []),
  ];
  return [shown.join(', '), tail.join(', ')].filter((s) => s !== '').join(' and ');
}

/**
 * The rollup in one line for people: `checks: pending (2: build, lint)`, `checks: failing
 * (test)`, `checks: passing`; null when the commit has no checks at all (nothing to show).
 */
export function checksText(rollup: ChecksRollup): string | null {
  if (rollup.total === 0) return null;
  if (rollup.state === 'pending') {
    // The count is known only when every check was read.
    const count = rollup.unread === 0 ? `${rollup.pending.length}: ` : '';
    return `checks: pending (${count}${nameList(rollup.pending, rollup.unread)})`;
  }
  if (rollup.state === 'failure') {
    return `checks: failing (${nameList(rollup.failing, rollup.unread)})`;
  }
  return 'checks: passing';
}
