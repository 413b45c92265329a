/**
 * Gemini CLI (`gemini -p … --output-format stream-json`), checked with the real
 * `@google/gemini-cli` 0.61.0 against the scripted model server.
 *
 * Outcome: the final `result` event (`status: success|error`); `error` events
 * are non-fatal warnings. Without a result, the JSON error the CLI writes to
 * stderr, then its documented exit codes (41 auth, 52 config, 55 untrusted
 * folder, 53 turn limit). Tool results are never read for errors.
 * Usage: `result.stats` (per model when `stats.models` is present).
 */
import { join } from 'node:path/posix';
import type { OutcomeClass, TurnRequest } from '../executor.js';
import { harnessEnv } from './common.js';
import {
  asRecord,
  asString,
  classifyMessage,
  endedUnfinished,
  jsonLines,
  num,
  parseDuration,
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

/**
 * Settings that keep a headless run quiet and local (no telemetry, no update check), and
 * one attempt per request: the CLI's own retries (10, up to 30 s apart) would hide an
 * outage or a quota for minutes; epicflow retries transient faults itself
 * (`retries.transient`) and names each retry on the story.
 */
const SETTINGS = {
  telemetry: { enabled: false },
  privacy: { usageStatisticsEnabled: false },
  general: { disableAutoUpdate: true, disableUpdateNag: true, maxAttempts: 1 },
};

/**
 * With a base URL set, headless auth turns to `gateway` and the CLI exits 41
 * ("Invalid auth method selected.") unless the settings select the API key.
 */
function settingsFor(baseUrl: string | undefined, helper: boolean): Record<string, unknown> {
  return {
    ...SETTINGS,
    security: {
      ...(baseUrl === undefined ? {} : { auth: { selectedType: 'gemini-api-key' } }),
      // With folder trust off, an untrusted workspace runs headless instead of exiting 55.
      ...(helper ? { folderTrust: { enabled: false } } : {}),
    },
  };
}

/**
 * A judge, verifier or planner reads a tree a coder wrote: it never trusts it, so the
 * CLI loads none of the tree's `.gemini/settings.json` (tool discovery commands, hooks,
 * MCP servers) nor its `.env`, and its tools ask (and are refused headless) for anything
 * but reading. A coder's tree is its own work: trusted, so yolo holds.
 */
function trustFor(request: TurnRequest): Record<string, string> {
  return { GEMINI_CLI_TRUST_WORKSPACE: request.role === 'coder' ? 'true' : 'false' };
}

export function buildGeminiInvocation(request: TurnRequest, opts: InvocationOptions): Invocation {
  const { executor } = request;
  return {
    argv: [
      opts.binary,
      // One argument: a prompt starting with "-" must not read as a flag.
      `--prompt=${request.prompt}`,
      '--output-format',
      'stream-json',
      '--approval-mode',
      'yolo',
      ...(executor.model === undefined ? [] : ['-m', executor.model]),
      ...executor.args,
    ],
    env: harnessEnv(
      request,
      {
        GEMINI_TELEMETRY_ENABLED: 'false',
        ...(opts.baseUrl === undefined ? {} : { GOOGLE_GEMINI_BASE_URL: opts.baseUrl }),
      },
      // A coder's workspace is trusted (else yolo is downgraded and the CLI exits 55 in a
      // new folder); a helper's never is.
      trustFor(request),
    ),
    files: [
      {
        path: join(request.home, '.gemini', 'settings.json'),
        content: `${JSON.stringify(settingsFor(opts.baseUrl, request.role !== 'coder'), null, 2)}\n`,
      },
    ],
  };
}

/** Exit codes of the Gemini CLI that mean the executor cannot run at all. */
const CONFIG_EXITS = new Set([41, 52, 55]);

/** Gemini's own quota and capacity wording first, then the shared patterns. */
function classifyGemini(
  message: string,
  now: Date | undefined,
): { outcome: OutcomeClass; resetAt?: string } {
  const capacity = /exhausted your capacity.*?reset after ([0-9hms. ]+)/is.exec(message);
  if (capacity) {
    const ms = parseDuration(capacity[1] ?? '');
    // A reset within two minutes is a rate limit, anything longer a usage limit.
    if (ms !== undefined && ms <= 120_000) return { outcome: 'rate-limited' };
    const resetAt =
      ms === undefined || now === undefined
        ? undefined
        : new Date(now.getTime() + ms).toISOString();
    return { outcome: 'usage-limit', ...(resetAt === undefined ? {} : { resetAt }) };
  }
  // The stream-json result's own wording for a per-day quota.
  if (/exhausted your daily quota/i.test(message)) return { outcome: 'usage-limit' };
  if (/RESOURCE_EXHAUSTED|Resource has been exhausted/.test(message)) {
    // A per-day quota is a usage limit; a per-minute one a rate limit.
    if (/PerDay|per day|exceeded your current quota|check quota/i.test(message)) {
      return { outcome: 'usage-limit' };
    }
    return { outcome: 'rate-limited' };
  }
  const outcome = classifyMessage(message);
  const resetAt = outcome === 'usage-limit' ? parseResetAt(message, now) : undefined;
  return { outcome, ...(resetAt === undefined ? {} : { resetAt }) };
}

/**
 * One stats record as tokens. `--output-format json` nests them under `tokens`
 * (`prompt` includes cached tokens); stream-json's `result` event is flat
 * (`input_tokens` includes cached, `input` is the uncached part, thoughts only
 * inside `total_tokens`). Thoughts are billed as output.
 */
function tokensOfStats(rec: Record<string, unknown>): ParsedUsage['tokens'] | undefined {
  const nested = asRecord(rec.tokens);
  if (nested) {
    const cached = num(nested.cached);
    return {
      input: Math.max(0, num(nested.prompt) - cached),
      cachedInput: cached,
      cacheWrite: 0,
      output: num(nested.candidates) + num(nested.thoughts),
    };
  }
  const cached = num(rec.cached);
  const inputTokens = num(rec.input_tokens);
  const input = typeof rec.input === 'number' ? num(rec.input) : Math.max(0, inputTokens - cached);
  const output = num(rec.output_tokens);
  const thoughts = Math.max(
    0,
    num(rec.total_tokens) - Math.max(inputTokens, input + cached) - output,
  );
  if (input + cached + output + thoughts === 0) return undefined;
  return { input, cachedInput: cached, cacheWrite: 0, output: output + thoughts };
}

function usageOfStats(stats: Record<string, unknown>, initModel: string | null): ParsedUsage[] {
  const models = asRecord(stats.models);
  if (models && Object.keys(models).length > 0) {
    return Object.entries(models).flatMap(([model, v]) => {
      const rec = asRecord(v);
      const tokens = rec ? tokensOfStats(rec) : undefined;
      return tokens ? [{ model, tokens, costUsd: null }] : [];
    });
  }
  const tokens = tokensOfStats(stats);
  return tokens ? [{ model: initModel, tokens, costUsd: null }] : [];
}

/** The JSON error object the CLI prints to stderr in JSON modes, if any. */
function stderrError(stderr: string): string | undefined {
  for (const e of jsonLines(stderr).reverse()) {
    const err = asRecord(e.error);
    if (err) return [asString(err.type), asString(err.message)].filter(Boolean).join(': ');
  }
  return undefined;
}

export function parseGeminiOutput(
  stdout: string,
  stderr: string,
  exitCode: number | null,
  context?: ParseContext,
): ParsedRun {
  let model: string | null = null;
  let text = '';
  let result: Record<string, unknown> | undefined;
  for (const e of jsonLines(stdout)) {
    const type = asString(e.type);
    if (type === 'init') model = asString(e.model) ?? model;
    else if (type === 'message' && e.role === 'assistant') {
      const content = asString(e.content) ?? '';
      text = e.delta === true ? text + content : content;
    } else if (type === 'tool_use' || type === 'tool_result') {
      // The final message is what the model said after its last tool call.
      text = '';
    } else if (type === 'result') result = e;
  }
  const stats = asRecord(result?.stats);
  const usage = stats ? usageOfStats(stats, model) : [];

  if (result?.status === 'success') return { outcome: 'ok', finalMessage: text, usage, detail: '' };

  let message: string | undefined;
  if (result) {
    const err = asRecord(result.error);
    message = [asString(err?.type), asString(err?.message)].filter(Boolean).join(': ') || 'error';
  } else {
    message = stderrError(stderr);
  }
  if (message !== undefined) {
    const { outcome, resetAt } = classifyGemini(message, context?.now);
    const byExit = exitCode !== null && CONFIG_EXITS.has(exitCode) ? 'auth' : undefined;
    return {
      outcome: outcome === 'failed' && byExit ? byExit : outcome,
      finalMessage: text,
      usage,
      detail: tail(message),
      ...(resetAt === undefined ? {} : { resetAt }),
    };
  }
  if (exitCode !== null && CONFIG_EXITS.has(exitCode)) {
    return {
      outcome: 'auth',
      finalMessage: text,
      usage,
      detail: tail(stderr) || `exit code ${exitCode}`,
    };
  }
  const plain = stderr.trim();
  if (plain === '')
    return endedUnfinished('gemini', 'a result', exitCode, { finalMessage: text, usage });
  return {
    outcome: classifyGemini(plain, context?.now).outcome,
    finalMessage: text,
    usage,
    detail: tail(plain),
  };
}
