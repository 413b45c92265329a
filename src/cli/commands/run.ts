/**
 * `epicflow run FILE`: deliver the epic locally, one line per
 * story event (a lane per story), then the paths of the board and reports.
 * Exit 0 when every story merged, 1 otherwise, 2 for usage/config/plan errors.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import { extractPlanBlocks } from '../../core/plan/index.js';
import type { AgentUserFlag } from '../../core/agent-user.js';
import type { CrashPoint, RunClock } from '../../engine/ports.js';
import { runLocalEpic } from '../../jobs/local/local.js';
import { defaultOutFile } from '../../jobs/local/plan-local.js';
import { formatEvent, LiveBoard } from './live.js';
import { onInterrupt } from '../../adapters/process/interrupt.js';

export { formatEvent, LiveBoard, renderLiveLine } from './live.js';

export interface RunCommandOptions {
  readonly file: string;
  readonly repo?: string;
  readonly config?: string;
  readonly epic?: string;
  readonly concurrency?: number;
  readonly failFast?: boolean;
  /** `--deferred`: one follow-up round over the findings the judge deferred. */
  readonly deferred?: boolean;
  readonly worktrees?: string;
  /** Who untrusted code runs as (see core/agent-user.ts). */
  readonly agentUser?: AgentUserFlag;
  /** `--no-sandbox`: untrusted code runs without the kernel sandbox. */
  readonly sandbox?: boolean;
  /** `--executors a,b`: this run's roster narrowed to those ids. */
  readonly executors?: readonly string[];
}

interface RunCommandIo {
  stdout(s: string): void;
  stderr(s: string): void;
  readonly cwd: string;
  readonly isTTY: boolean;
}

/** Test hooks; never set by the CLI itself. */
export interface RunCommandHooks {
  readonly onCheckpoint?: (point: CrashPoint, story: string) => void;
  /** The environment (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /** The waits before retries (default: the wall clock's). */
  readonly sleep?: RunClock['sleep'];
}

/**
 * An epic written in prose, not yet planned: the error saying to draft a plan
 * first. Undefined when the file holds a block (or cannot be read: the run
 * reports that itself).
 */
async function notPlannedYet(file: string, cwd: string): Promise<EpicflowError | undefined> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, file), 'utf8');
  } catch {
    return undefined;
  }
  if (text.trim() === '' || extractPlanBlocks(text).length > 0) return undefined;
  return new EpicflowError('plan', `${file} has no plan yet: no \`\`\`epicflow block`, {
    details: [
      `draft one from its prose first: epicflow plan draft ${file}`,
      `then run the plan it writes: epicflow run ${defaultOutFile(file)}`,
    ],
  });
}

export async function runCommand(
  opts: RunCommandOptions,
  io: RunCommandIo,
  hooks: RunCommandHooks = {},
): Promise<number> {
  const prose = await notPlannedYet(opts.file, io.cwd);
  if (prose !== undefined) throw prose;
  const live = io.isTTY ? new LiveBoard((t) => io.stdout(t)) : undefined;
  const interrupt = onInterrupt({
    say: (name) =>
      io.stderr(
        `epicflow: ${name}: stopping running stories and writing the report (again to quit at once)\n`,
      ),
    secondQuits: true,
  });
  // The live line moves on during long agent turns too.
  const ticking = live === undefined ? undefined : setInterval(() => live.tick(), 1000);
  ticking?.unref();
  try {
    const result = await runLocalEpic(opts, {
      cwd: io.cwd,
      env: hooks.env ?? process.env,
      onEvent: (event) => (live ? live.event(event) : io.stdout(`${formatEvent(event)}\n`)),
      ...(live === undefined
        ? {}
        : {
            onStart: (stories, records) => live.start(stories, records),
            onRecord: (record) => live.record(record),
          }),
      interrupt: interrupt.signal,
      onCheckpoint: hooks.onCheckpoint,
      sleep: hooks.sleep,
      onWarning: (line) => io.stdout(`epicflow: ${line}\n`),
    });
    if (ticking !== undefined) clearInterval(ticking);
    live?.tick();
    const counts = { done: 0, failed: 0, waiting: 0 };
    for (const r of result.records) {
      if (r.status === 'done') counts.done += 1;
      else if (r.status === 'failed') counts.failed += 1;
    }
    counts.waiting = Math.max(0, result.records.length - counts.done - counts.failed);
    io.stdout(
      [
        `epicflow: ${counts.done} done, ${counts.failed} failed, ${counts.waiting} waiting`,
        `board:       ${result.files.board}`,
        `board.json:  ${result.files.boardJson}`,
        `report:      ${result.files.report}`,
        `report.json: ${result.files.reportJson}`,
        `events:      ${result.events}`,
        `runs:        ${result.runs}`,
        '',
      ].join('\n'),
    );
    return result.exitCode;
  } finally {
    if (ticking !== undefined) clearInterval(ticking);
    interrupt.release();
  }
}
