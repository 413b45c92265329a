/**
 * aider (`aider --message-file …`), from its documented output (not installed
 * here; fixture-tested). aider has no machine-readable output and exits 0 even
 * after fatal API errors, so the run is judged from its own fixed lines:
 * usage lines (`Tokens: 2.3k sent, 120 received. Cost: $0.01 message, $0.02
 * session.`) and error lines (a `litellm.<Error>:` line or one of aider's fixed
 * sentences at the start of a line). An error after the last usage line means
 * the turn ended on it; lines of command output never start that way.
 */
import { join } from 'node:path/posix';
import type { TurnRequest } from '../executor.js';
import { harnessEnv, turnFileName } from './common.js';
import { endedOnError, endedOnExit, tail } from './signals.js';
import type {
  Invocation,
  InvocationOptions,
  ParseContext,
  ParsedRun,
  ParsedUsage,
} from './types.js';

export function buildAiderInvocation(request: TurnRequest, opts: InvocationOptions): Invocation {
  const { executor } = request;
  // In the executor's home, never in the worktree (it would be committed); one per turn,
  // because an executor with several slots shares its home.
  const promptFile = join(request.home, 'prompts', turnFileName(request, '.md'));
  const model =
    executor.model === undefined
      ? []
      : ['--model', opts.baseUrl === undefined ? executor.model : `openai/${executor.model}`];
  return {
    argv: [
      opts.binary,
      '--message-file',
      promptFile,
      '--yes-always',
      // epicflow commits the story; aider must not commit on its own.
      '--no-auto-commits',
      '--no-dirty-commits',
      '--no-pretty',
      '--no-stream',
      '--no-fancy-input',
      '--no-check-update',
      '--no-show-release-notes',
      '--analytics-disable',
      '--no-gitignore',
      ...model,
      ...(opts.baseUrl === undefined
        ? []
        : ['--openai-api-base', `${opts.baseUrl.replace(/\/+$/, '')}/v1`]),
      ...executor.args,
    ],
    env: harnessEnv(request, {}, {}),
    files: [{ path: promptFile, content: request.prompt }],
  };
}

const USAGE_LINE =
  /^Tokens: ([\d.,]+[kM]?) sent(?:, ([\d.,]+[kM]?) cache write)?(?:, ([\d.,]+[kM]?) cache hit)?, ([\d.,]+[kM]?) received\.(?:\s+Cost: \$([\d.]+) message, \$([\d.]+) session\.)?/;

/** aider's own error sentences (aider/exceptions.py) and LiteLLM exception lines. */
const ERROR_LINE =
  /^(?:litellm\.[A-Za-z]+Error\b|The API provider has rate limited you|The API provider's servers are down or overloaded|The API provider is not able to authenticate you|Check your API key|Your credit balance is too low)/;

/** "2.3k" → 2300, "1,234" → 1234, "1.2M" → 1200000 (aider rounds: measured, not exact). */
function tokenCount(text: string | undefined): number {
  if (text === undefined) return 0;
  const m = /^([\d.,]+)([kM]?)$/.exec(text);
  if (!m) return 0;
  const n = Number((m[1] ?? '0').replace(/,/g, ''));
  const factor = m[2] === 'k' ? 1000 : m[2] === 'M' ? 1_000_000 : 1;
  return Math.round(n * factor);
}

export function parseAiderOutput(
  stdout: string,
  stderr: string,
  exitCode: number | null,
  context?: ParseContext,
): ParsedRun {
  const lines = `${stdout}\n${stderr}`.split('\n').map((l) => l.trimEnd());
  let tokens = { input: 0, cachedInput: 0, cacheWrite: 0, output: 0 };
  let sessionCost: number | null = null;
  let lastUsageIndex = -1;
  let sawUsage = false;
  const errors: { index: number; line: string }[] = [];
  lines.forEach((line, index) => {
    const u = USAGE_LINE.exec(line);
    if (u) {
      sawUsage = true;
      lastUsageIndex = index;
      const sent = tokenCount(u[1]);
      const write = tokenCount(u[2]);
      const hit = tokenCount(u[3]);
      tokens = {
        // "sent" counts the whole prompt, cache hits and writes included.
        input: tokens.input + Math.max(0, sent - write - hit),
        cachedInput: tokens.cachedInput + hit,
        cacheWrite: tokens.cacheWrite + write,
        output: tokens.output + tokenCount(u[4]),
      };
      if (u[6] !== undefined) sessionCost = Number(u[6]);
    } else if (ERROR_LINE.test(line)) {
      errors.push({ index, line });
    }
  });
  const usage: ParsedUsage[] = sawUsage ? [{ model: null, tokens, costUsd: sessionCost }] : [];
  // stdout only, without aider's own bookkeeping lines, is the closest to a final message.
  const finalMessage = tail(
    stdout
      .split('\n')
      .filter((l) => !USAGE_LINE.test(l) && !ERROR_LINE.test(l) && !/^Retrying in /.test(l))
      .join('\n'),
    8000,
  );

  const fatal = errors.filter((e) => e.index > lastUsageIndex).map((e) => e.line);
  if (fatal.length > 0)
    return endedOnError(fatal.join('\n'), { finalMessage, usage }, context?.now);
  return endedOnExit('aider', exitCode, stderr, { finalMessage, usage });
}
