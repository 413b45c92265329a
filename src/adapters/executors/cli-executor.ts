/**
 * The agent CLI harnesses (codex, claude, gemini, opencode, aider) behind the
 * executor port: build the invocation (pure), prepare the isolated home, run
 * the CLI with our own wall-clock timeout (the whole process group is killed),
 * parse its output (pure) and return one run record.
 */
import { join } from 'node:path';
import type { ExecutorConfig, ModelPrice } from '../../core/config/types.js';
import { EpicflowError } from '../../core/errors.js';
import type { ExecutorPort, TurnRequest } from '../../core/executor.js';
import {
  CLI_HARNESSES,
  isCliHarness,
  notInstalledDetail,
  runRecordOf,
  veiledFor,
} from '../../core/harness/index.js';
import type { CliHarness, CliRunRecord } from '../../core/harness/index.js';
import { lineCalls, showsToolCalls } from '../../core/harness/tool-calls.js';
import { baseEnv } from '../process/run-process.js';
import { ensureHome, writeHomeFile } from './home-files.js';
import { sameUser, type Untrusted } from '../process/untrusted.js';
import { StallWatch } from './stall-watch.js';

const STREAM_CAPTURE_BYTES = 16 * 1024 * 1024;

interface CliExecutorOptions {
  /** The CLI binary (a name on PATH or a path); default: the CLI's usual name. */
  readonly binary?: string;
  /** The model API base URL (a gateway, or a loopback test server). */
  readonly baseUrl?: string;
  /** Where the base environment comes from (default: this process's). */
  readonly sourceEnv?: NodeJS.ProcessEnv;
  /** Price overrides from config, merged over the shipped table. */
  readonly prices?: Readonly<Record<string, ModelPrice>>;
  /** The clock, for relative reset times in limit messages. */
  readonly now?: () => Date;
  /** Where the CLI runs (default: as epicflow's own user, its leftovers ended by marker). */
  readonly untrusted?: Untrusted;
}

export class CliExecutor implements ExecutorPort {
  private readonly cli: CliHarness;

  constructor(
    config: ExecutorConfig,
    private readonly options: CliExecutorOptions = {},
  ) {
    if (!isCliHarness(config.harness)) {
      throw new EpicflowError(
        'internal',
        `executor ${config.id}: CliExecutor cannot run harness "${config.harness}"`,
      );
    }
    this.cli = CLI_HARNESSES[config.harness];
  }

  async runTurn(
    request: TurnRequest,
    signal?: AbortSignal,
    onOutput?: (line: string) => void,
  ): Promise<CliRunRecord> {
    const invocation = this.cli.build(request, {
      binary: this.options.binary ?? this.cli.binary,
      ...(this.options.baseUrl === undefined ? {} : { baseUrl: this.options.baseUrl }),
    });

    // The home holds credentials and session state: private to the user running us, and
    // written without following anything the last turn left there (see home-files.ts).
    await ensureHome(request.home);
    for (const file of invocation.files ?? []) {
      await writeHomeFile(request.home, file.path, file.content);
    }

    const untrusted = this.options.untrusted ?? sameUser();
    const harness = this.cli.name;
    const commandsRun: string[] = [];
    const watch = new StallWatch({ silenceMs: request.silenceMs, outer: signal });
    // Tools run in sessions of their own escape the group kill: `untrusted` ends what the
    // turn left behind (by uid when isolated, else by a marker in the environment).
    const result = await untrusted.run(invocation.argv, {
      cwd: request.worktree,
      // The harness env wins over the base env (HOME, TZ); the base env has no GitHub token.
      env: {
        ...baseEnv(this.options.sourceEnv ?? process.env),
        ...invocation.env,
      },
      writable: [request.home],
      seat: { scope: request.story, role: `${request.role}:${request.executor.id}` },
      veiled: veiledFor(harness, request.role).map((p) => join(request.worktree, p)),
      ...(invocation.stdin === undefined ? {} : { input: invocation.stdin }),
      timeoutMs: request.timeoutMs,
      signal: watch.signal,
      // Event streams carry whole command outputs: the tail is kept, and a cut
      // says so in its first line. Usage a CLI reports per step (opencode,
      // aider) is summed over what is kept.
      maxCaptureBytes: STREAM_CAPTURE_BYTES,
      onLine: (_stream, line) => {
        // Each event line is parsed once, for the stall watch and the claims check both.
        const { calls, commands } = lineCalls(harness, line);
        watch.line(calls);
        commandsRun.push(...commands);
        onOutput?.(line);
        if (this.cli.givesUp?.(line) === true) watch.stopNow();
      },
    });
    watch.end();

    // npm's placeholder for a CLI whose native binary was never copied (--ignore-scripts).
    const placeholder =
      result.exitCode !== 0 &&
      result.stdout.trim() === '' &&
      // Claude Code's placeholder, then opencode's.
      /native binary not installed|postinstall script was not run/i.test(result.stderr);
    if (result.spawnError !== undefined || placeholder) {
      // ENOENT is also what a missing working directory gives; runProcess says which.
      const missing =
        result.spawnError === undefined ||
        (result.spawnError.code === 'ENOENT' &&
          !result.spawnError.message.startsWith('working directory'));
      return {
        outcome: 'failed',
        finalMessage: '',
        usage: [],
        exitCode: result.exitCode,
        timedOut: false,
        detail: missing
          ? notInstalledDetail(this.cli.name)
          : (result.spawnError?.message ?? 'could not start'),
        durationMs: result.durationMs,
        ...(missing ? { missingBinary: true } : {}),
      };
    }

    const parsed = this.cli.parse(result.stdout, result.stderr, result.exitCode, {
      now: (this.options.now ?? (() => new Date()))(),
    });
    const record = runRecordOf(
      parsed,
      {
        exitCode: result.exitCode,
        timedOut: result.timedOut,
        // Only the turn's own signal cancels it; what the watch stopped is read as it stands.
        aborted: result.aborted && !watch.stoppedHere,
        durationMs: result.durationMs,
      },
      request,
      this.options.prices ?? {},
    );
    const seen = showsToolCalls(harness) ? { ...record, commandsRun } : record;
    const stalled = watch.stalled;
    // What it spent stands; how it ended is the stall, whatever the CLI made of being stopped.
    return stalled === undefined
      ? seen
      : { ...seen, outcome: 'failed', detail: `stalled: ${stalled.detail}`, stalled };
  }
}
