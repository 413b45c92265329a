/**
 * Claude Code (`claude -p --output-format stream-json --verbose`), checked
 * against 2.1.197.
 *
 * Outcome: the final `result` event, never the exit code alone (an API error
 * can end with `subtype: success`, `is_error: true`). On an error, in order:
 * a `rate_limit_event` with status `rejected` (a subscription limit, with its
 * reset time), the `error` field of the CLI's synthetic assistant message,
 * `api_error_status`, then the text of the result. Tool results (`user`
 * events) and ordinary assistant text are never read for errors.
 * Usage: `result.modelUsage` per model (includes subagents) with `costUSD`.
 */
import { join } from 'node:path/posix';
import type { OutcomeClass, TurnRequest } from '../executor.js';
import { harnessEnv } from './common.js';
import {
  asRecord,
  asString,
  classifyMessage,
  classifyStatus,
  endedUnfinished,
  jsonLines,
  num,
  numOrNull,
  parseResetAt,
  tail,
} from './signals.js';
import type {
  Invocation,
  InvocationOptions,
  ParseContext,
  ParsedRun,
  ParsedUsage,
} from './types.js';

export function buildClaudeInvocation(request: TurnRequest, opts: InvocationOptions): Invocation {
  const { executor } = request;
  return {
    argv: [
      opts.binary,
      '-p',
      '--output-format',
      'stream-json',
      // stream-json in print mode requires --verbose.
      '--verbose',
      '--permission-mode',
      'bypassPermissions',
      // Settings of its own home only: a `.claude/settings.json` in the tree is written by
      // whoever last worked there (a coder's hooks would run inside the judge, with its key).
      '--setting-sources',
      'user',
      ...(executor.model === undefined ? [] : ['--model', executor.model]),
      ...executor.args,
    ],
    env: harnessEnv(
      request,
      {
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
        DISABLE_AUTOUPDATER: '1',
        // Bypass mode refuses to run as root (container jobs) unless told it is sandboxed;
        // the story worktree is that sandbox.
        IS_SANDBOX: '1',
        ...(opts.baseUrl === undefined ? {} : { ANTHROPIC_BASE_URL: opts.baseUrl }),
      },
      {
        CLAUDE_CONFIG_DIR: join(request.home, '.claude'),
        // Its per-session folders (its shells' task output) in the home too, not in
        // `/tmp/claude-<uid>`, which every turn of the user shares and nothing removes.
        CLAUDE_CODE_TMPDIR: join(request.home, '.claude', 'tmp'),
      },
    ),
    // The prompt on stdin: no argv length limit, not visible in `ps`.
    stdin: request.prompt,
  };
}

/** The synthetic assistant message's `error` field → outcome. */
const ASSISTANT_ERRORS: Record<string, OutcomeClass> = {
  authentication_failed: 'auth',
  oauth_org_not_allowed: 'auth',
  billing_error: 'usage-limit',
  rate_limit: 'rate-limited',
  overloaded: 'outage',
  server_error: 'outage',
};

function tokensOfModelUsage(u: Record<string, unknown>): ParsedUsage['tokens'] {
  return {
    input: num(u.inputTokens),
    cachedInput: num(u.cacheReadInputTokens),
    cacheWrite: num(u.cacheCreationInputTokens),
    output: num(u.outputTokens),
  };
}

function tokensOfApiUsage(u: Record<string, unknown>): ParsedUsage['tokens'] {
  // Anthropic semantics: input_tokens exclude cache reads and writes.
  return {
    input: num(u.input_tokens),
    cachedInput: num(u.cache_read_input_tokens),
    cacheWrite: num(u.cache_creation_input_tokens),
    output: num(u.output_tokens),
  };
}

function usageOfResult(result: Record<string, unknown>): ParsedUsage[] {
  const modelUsage = asRecord(result.modelUsage);
  const entries = Object.entries(modelUsage ?? {}).flatMap(([model, v]) => {
    const u = asRecord(v);
    return u ? [{ model, tokens: tokensOfModelUsage(u), costUsd: numOrNull(u.costUSD) }] : [];
  });
  if (entries.length > 0) return entries;
  const u = asRecord(result.usage);
  if (!u) return [];
  return [{ model: null, tokens: tokensOfApiUsage(u), costUsd: numOrNull(result.total_cost_usd) }];
}

/** Without a result event (killed, crashed): usage of the model calls seen so far. */
function usageOfAssistants(events: readonly Record<string, unknown>[]): ParsedUsage[] {
  const byMessage = new Map<string, { model: string; usage: Record<string, unknown> }>();
  for (const e of events) {
    if (e.type !== 'assistant') continue;
    const m = asRecord(e.message);
    const id = asString(m?.id);
    const model = asString(m?.model);
    const usage = asRecord(m?.usage);
    // One assistant event per content block repeats the message's usage: count it once.
    if (id === undefined || model === undefined || model === '<synthetic>' || !usage) continue;
    byMessage.set(id, { model, usage });
  }
  const perModel = new Map<string, ParsedUsage>();
  for (const { model, usage } of byMessage.values()) {
    const t = tokensOfApiUsage(usage);
    const prev = perModel.get(model)?.tokens;
    perModel.set(model, {
      model,
      tokens: prev
        ? {
            input: prev.input + t.input,
            cachedInput: prev.cachedInput + t.cachedInput,
            cacheWrite: prev.cacheWrite + t.cacheWrite,
            output: prev.output + t.output,
          }
        : t,
      costUsd: null,
    });
  }
  return [...perModel.values()];
}

export function parseClaudeOutput(
  stdout: string,
  stderr: string,
  exitCode: number | null,
  context?: ParseContext,
): ParsedRun {
  const events = jsonLines(stdout);
  let result: Record<string, unknown> | undefined;
  let assistantError: string | undefined;
  let rejectedResetAt: string | undefined;
  let rejected = false;
  for (const e of events) {
    if (e.type === 'result') result = e;
    else if (e.type === 'assistant') {
      const err = asString(e.error);
      if (err !== undefined) assistantError = err;
    } else if (e.type === 'rate_limit_event') {
      const info = asRecord(e.rate_limit_info);
      if (info?.status === 'rejected') {
        rejected = true;
        const resetsAt = numOrNull(info.resetsAt);
        rejectedResetAt = resetsAt === null ? undefined : new Date(resetsAt * 1000).toISOString();
      }
    }
  }

  if (result === undefined) {
    const usage = usageOfAssistants(events);
    const text = stderr.trim();
    if (text === '')
      return endedUnfinished('claude', 'a result', exitCode, { finalMessage: '', usage });
    // The root guard and a missing login are configuration problems: the executor cannot run.
    const outcome = /root\/sudo|--dangerously-skip-permissions cannot/i.test(text)
      ? 'auth'
      : classifyMessage(text);
    return { outcome, finalMessage: '', usage, detail: tail(text) };
  }

  const usage = usageOfResult(result);
  const text = asString(result.result) ?? '';
  if (result.is_error !== true && result.subtype === 'success') {
    return { outcome: 'ok', finalMessage: text, usage, detail: '' };
  }

  const errors = Array.isArray(result.errors)
    ? result.errors.filter((x): x is string => typeof x === 'string')
    : [];
  const message = [text, ...errors].filter((s) => s !== '').join('\n') || String(result.subtype);
  let outcome: OutcomeClass;
  if (rejected) outcome = 'usage-limit';
  else if (assistantError !== undefined && ASSISTANT_ERRORS[assistantError] !== undefined) {
    outcome = ASSISTANT_ERRORS[assistantError] ?? 'failed';
    // A subscription limit arrives as error "rate_limit" too; its text says so.
    if (outcome === 'rate-limited' && classifyMessage(message) === 'usage-limit') {
      outcome = 'usage-limit';
    }
  } else {
    const status = numOrNull(result.api_error_status);
    const byText = classifyMessage(message);
    const byStatus = status === null ? undefined : classifyStatus(status);
    outcome = byText === 'usage-limit' ? byText : (byStatus ?? byText);
  }
  // Turn and budget caps are the agent's failure, not the executor's (nor a crash).
  const capped = String(result.subtype).startsWith('error_max');
  if (capped) outcome = 'failed';
  const resetAt =
    outcome === 'usage-limit'
      ? (rejectedResetAt ?? parseResetAt(message, context?.now))
      : undefined;
  return {
    outcome,
    finalMessage: '',
    usage,
    detail: tail(message),
    ...(resetAt === undefined ? {} : { resetAt }),
    ...(capped ? { capped: true } : {}),
  };
}
