/**
 * The index of an epic's local runs (`runs.json` in its state folder): one entry per
 * `epicflow run`, with when it started, when it ended and how. Pure: the entry reads and
 * writes the file. A run that never wrote its end (killed, the machine lost) is marked so
 * by the next run.
 */
import { z } from 'zod';
import { EpicflowError } from '../errors.js';

/** What became of a run. */
type RunOutcome =
  /** Still going (or, seen by a later run, ended without saying: see `startRun`). */
  | 'running'
  /** Every story of the plan is done. */
  | 'finished'
  /** It ended with stories failed or waiting. */
  | 'unfinished'
  /** It stopped on an error before its stories were decided. */
  | 'error'
  /** It never wrote its end: killed, or its machine lost. */
  | 'lost';

interface RunEntry {
  /** `run-1`, `run-2`, … */
  readonly id: string;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly outcome: RunOutcome;
  /** Counts at the end, `2 done, 1 failed, 0 waiting`, or the error; null while running. */
  readonly summary: string | null;
}

interface RunIndex {
  readonly version: 1;
  readonly runs: readonly RunEntry[];
}

const RunIndexSchema = z.object({
  version: z.literal(1),
  runs: z.array(
    z.object({
      id: z.string(),
      startedAt: z.string(),
      endedAt: z.string().nullable(),
      outcome: z.enum(['running', 'finished', 'unfinished', 'error', 'lost']),
      summary: z.string().nullable(),
    }),
  ),
});

/** The file's name in the epic's state folder. */
export const RUN_INDEX_FILE = 'runs.json';

/** The index as read back (null: no file yet), or a typed error naming `where`. */
export function readRunIndex(json: unknown, where: string): RunIndex {
  if (json === null) return { version: 1, runs: [] };
  const parsed = RunIndexSchema.safeParse(json);
  if (!parsed.success) {
    throw new EpicflowError('state', `unreadable index of runs: ${where}`, {
      details: [
        ...parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
        'delete the file to start the index over',
      ],
    });
  }
  return parsed.data;
}

/**
 * A new run: added at the end as running. Only one run holds an epic at a time, so a run
 * still marked running is one that never wrote its end: it is marked lost.
 */
export function startRun(index: RunIndex, startedAt: string): { index: RunIndex; id: string } {
  const id = `run-${index.runs.length + 1}`;
  const runs = index.runs.map((r): RunEntry =>
    r.outcome === 'running' ? { ...r, outcome: 'lost' } : r,
  );
  return {
    index: {
      version: 1,
      runs: [...runs, { id, startedAt, endedAt: null, outcome: 'running', summary: null }],
    },
    id,
  };
}

/** The run's end. */
export function endRun(
  index: RunIndex,
  id: string,
  end: {
    readonly endedAt: string;
    readonly outcome: Exclude<RunOutcome, 'running' | 'lost'>;
    readonly summary: string;
  },
): RunIndex {
  return {
    version: 1,
    runs: index.runs.map((r) =>
      r.id === id ? { ...r, endedAt: end.endedAt, outcome: end.outcome, summary: end.summary } : r,
    ),
  };
}

/** The counts a run ended with, as its end line and the index say them. */
export function runSummary(counts: {
  readonly done: number;
  readonly failed: number;
  readonly waiting: number;
}): string {
  return `${counts.done} done, ${counts.failed} failed, ${counts.waiting} waiting`;
}
