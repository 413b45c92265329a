/**
 * The `command` harness (a fixed contract, docs/executors.md): any program as an
 * agent. It runs in the story worktree with the prompt on stdin and in
 * `EPICFLOW_PROMPT_FILE`; exit 0 finished the turn, exit 75 means out of quota,
 * anything else failed. `EPICFLOW_USAGE {json}` lines report usage and a last
 * line `BLOCKED_ON: <need>` is a blocked claim.
 */
import { join } from 'node:path';
import { formatMs } from '../../core/config/duration.js';
import { EpicflowError } from '../../core/errors.js';
import type { ExecutorPort, OutcomeClass, RunRecord, TurnRequest } from '../../core/executor.js';
import { baseEnv, type ProcessResult } from '../process/run-process.js';
import { sameUser, type Untrusted } from '../process/untrusted.js';
import { writeHomeFile } from './home-files.js';
import { StallWatch } from './stall-watch.js';
import {
  blockedOnClaim,
  estimateUsage,
  isUsageLine,
  parseUsageLine,
  sumUsage,
  type ParsedUsage,
} from './usage-line.js';

/** Exit status of a command agent that is out of quota (EX_TEMPFAIL). */
const USAGE_LIMIT_EXIT = 75;
/**
 * What is kept of the agent's output: the tail, for people (a cut says so in
 * its first line). Nothing read from it needs more: usage comes line by line
 * through `onLine`, a blocked claim is the last line.
 */
const OUTPUT_TAIL_BYTES = 1024 * 1024;
const DETAIL_CAP = 2000;

interface CommandExecutorOptions {
  /** Where the base environment comes from (default: this process's). Tests pass their own. */
  readonly sourceEnv?: NodeJS.ProcessEnv;
  /** Where the agent runs (default: as epicflow's own user). */
  readonly untrusted?: Untrusted;
}

function tail(text: string, cap: number): string {
  return text.length <= cap ? text : text.slice(text.length - cap);
}

function outcomeOf(result: ProcessResult): { outcome: OutcomeClass; why: string } {
  if (result.spawnError) return { outcome: 'failed', why: result.spawnError.message };
  if (result.timedOut) return { outcome: 'failed', why: 'timed out' };
  if (result.aborted) return { outcome: 'failed', why: 'aborted' };
  if (result.exitCode === 0) return { outcome: 'ok', why: '' };
  if (result.exitCode === USAGE_LIMIT_EXIT) {
    return { outcome: 'usage-limit', why: `exit code ${USAGE_LIMIT_EXIT}: out of quota` };
  }
  if (result.exitCode === null) {
    return { outcome: 'failed', why: `killed by ${result.signal ?? 'a signal'}` };
  }
  return { outcome: 'failed', why: `exit code ${result.exitCode}` };
}

export class CommandExecutor implements ExecutorPort {
  private readonly sourceEnv: NodeJS.ProcessEnv;
  private readonly untrusted: Untrusted;

  constructor(options: CommandExecutorOptions = {}) {
    this.sourceEnv = options.sourceEnv ?? process.env;
    this.untrusted = options.untrusted ?? sameUser();
  }

  async runTurn(
    request: TurnRequest,
    signal?: AbortSignal,
    onOutput?: (line: string) => void,
  ): Promise<RunRecord> {
    const { executor } = request;
    const command = executor.command ?? [];
    if (command.length === 0 || command[0] === '') {
      throw new EpicflowError(
        'config',
        `executor ${executor.id}: harness "command" needs a non-empty "command" argv`,
      );
    }

    // The prompt file lives in the executor's home, never in the worktree (it would be committed).
    const promptFile = join(
      request.home,
      `epicflow-prompt-${request.story}-${request.round}-${request.role}.md`,
    );
    // Never through a link the last turn planted where this prompt goes.
    await writeHomeFile(request.home, promptFile, request.prompt);

    const env: Record<string, string> = {
      ...baseEnv(this.sourceEnv),
      ...request.env,
      HOME: request.home,
      EPICFLOW_EPIC: request.epic,
      EPICFLOW_STORY: request.story,
      EPICFLOW_ROUND: String(request.round),
      EPICFLOW_ROLE: request.role,
      EPICFLOW_PROMPT_FILE: promptFile,
    };

    const usageLines: ParsedUsage[] = [];
    const malformed: string[] = [];
    let stdoutChars = 0;
    // A plain command announces no tool calls: only its silence is watched.
    const watch = new StallWatch({ silenceMs: request.silenceMs, outer: signal });
    const result = await this.untrusted.run([...command, ...executor.args], {
      cwd: request.worktree,
      env,
      // Its home holds the prompt file; the agent may write there too.
      writable: [request.home],
      seat: { scope: request.story, role: `${request.role}:${request.executor.id}` },
      input: request.prompt,
      timeoutMs: request.timeoutMs,
      signal: watch.signal,
      maxCaptureBytes: OUTPUT_TAIL_BYTES,
      onLine: (stream, line) => {
        watch.line();
        onOutput?.(line);
        if (stream !== 'stdout') return;
        stdoutChars += line.length + 1;
        const usage = parseUsageLine(line);
        if (usage === null) return;
        if ('error' in usage) malformed.push(usage.error);
        else usageLines.push(usage);
      },
    });

    watch.end();
    const model = executor.model ?? 'unknown';
    const usage =
      usageLines.length > 0
        ? sumUsage(executor.id, model, usageLines)
        : [estimateUsage(executor.id, model, request.prompt.length, stdoutChars)];

    const message = result.stdout
      .split('\n')
      .filter((l) => !isUsageLine(l))
      .join('\n')
      .trim();
    const stalled = watch.stalled;
    const { outcome, why } =
      stalled === undefined
        ? outcomeOf(result)
        : { outcome: 'failed' as const, why: `stalled: ${stalled.detail}` };
    const notes: string[] = [];
    if (why !== '') {
      const shown = result.timedOut ? `${why} after ${formatMs(request.timeoutMs)}` : why;
      notes.push(shown);
      const output = (result.stderr.trim() || message).trim();
      if (output !== '' && !result.spawnError) notes.push(tail(output, DETAIL_CAP));
    }
    for (const m of malformed) notes.push(`ignored a malformed EPICFLOW_USAGE line: ${m}`);

    const need = blockedOnClaim(result.stdout);
    return {
      outcome,
      // Answers are read from it (a planner's plan block, a judge's verdict): all of what was
      // kept of stdout, never cut again (a cut of the capture itself says so at its start).
      finalMessage: message,
      usage,
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      detail: notes.join('\n'),
      durationMs: result.durationMs,
      ...(result.spawnError?.code === 'ENOENT' ? { missingBinary: true } : {}),
      ...(need === undefined ? {} : { blockedOn: need }),
      ...(stalled === undefined ? {} : { stalled }),
    };
  }
}
