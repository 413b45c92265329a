/**
 * OpenAI Codex CLI (`codex exec --json`), checked against 0.171.0.
 *
 * Outcome: `turn.completed` = ok; `turn.failed` carries the only authoritative
 * error text (top-level `error` events may be transient reconnects, `error`
 * items are warnings). Command output (`command_execution.aggregated_output`)
 * is never read. Usage: `turn.completed.usage`, summed by codex over every
 * request of the turn; OpenAI semantics (input includes cached). No model name
 * and no cost in the stream.
 */
import { join } from 'node:path/posix';
import type { TurnRequest } from '../executor.js';
import { harnessEnv } from './common.js';
import {
  asRecord,
  asString,
  endedOnError,
  endedUnfinished,
  jsonLines,
  num,
  tail,
} from './signals.js';
import type {
  Invocation,
  InvocationOptions,
  ParseContext,
  ParsedRun,
  ParsedUsage,
} from './types.js';

/** The custom provider name used when a base URL is given. */
const CODEX_PROVIDER = 'epicflow';

export function buildCodexInvocation(request: TurnRequest, opts: InvocationOptions): Invocation {
  const { executor } = request;
  const config: string[] = [
    // Non-model traffic off: analytics, the update check, the plugin marketplace sync.
    'analytics.enabled=false',
    'check_for_update_on_startup=false',
    'features.plugins=false',
    'approval_policy="never"',
  ];
  if (opts.baseUrl !== undefined) {
    const p = `model_providers.${CODEX_PROVIDER}`;
    config.push(
      `${p}.name="${CODEX_PROVIDER}"`,
      `${p}.base_url=${JSON.stringify(`${opts.baseUrl.replace(/\/+$/, '')}/v1`)}`,
      `${p}.wire_api="responses"`,
      `${p}.env_key="OPENAI_API_KEY"`,
      // A WebSocket upgrade first would double every request against a plain server.
      `${p}.supports_websockets=false`,
      `model_provider="${CODEX_PROVIDER}"`,
    );
  }
  const files: { path: string; content: string }[] = [];
  // A ChatGPT-plan seat is an auth.json; shipped as a secret variable, written to the home.
  const authJson = request.env.CODEX_AUTH_JSON;
  if (authJson !== undefined && authJson !== '') {
    files.push({ path: join(request.home, 'auth.json'), content: authJson });
  }
  return {
    argv: [
      opts.binary,
      'exec',
      '--json',
      '--skip-git-repo-check',
      // Linux sandboxing needs bubblewrap, missing on CI images; the worktree is the sandbox.
      '--sandbox',
      'danger-full-access',
      '--ephemeral',
      '-C',
      request.worktree,
      ...(executor.model === undefined ? [] : ['-m', executor.model]),
      ...config.flatMap((c) => ['-c', c]),
      ...executor.args,
      // The prompt on stdin: no argv length limit, not visible in `ps`.
      '-',
    ],
    env: harnessEnv(request, {}, { CODEX_HOME: request.home }, ['CODEX_AUTH_JSON', 'RUST_LOG']),
    stdin: request.prompt,
    ...(files.length > 0 ? { files } : {}),
  };
}

function usageOf(u: Record<string, unknown>): ParsedUsage {
  const cached = num(u.cached_input_tokens);
  const cacheWrite = num(u.cache_write_input_tokens);
  return {
    model: null,
    tokens: {
      // OpenAI's input_tokens count the cached (and written) prompt tokens too.
      input: Math.max(0, num(u.input_tokens) - cached - cacheWrite),
      cachedInput: cached,
      cacheWrite,
      // Reasoning tokens are already part of output_tokens.
      output: num(u.output_tokens),
    },
    costUsd: null,
  };
}

export function parseCodexOutput(
  stdout: string,
  stderr: string,
  exitCode: number | null,
  context?: ParseContext,
): ParsedRun {
  let finalMessage = '';
  let usage: ParsedUsage[] = [];
  let terminal: { kind: 'completed' } | { kind: 'failed'; message: string } | undefined;
  let lastError: string | undefined;

  for (const e of jsonLines(stdout)) {
    const type = asString(e.type);
    if (type === 'item.completed') {
      const item = asRecord(e.item);
      if (item?.type === 'agent_message') finalMessage = asString(item.text) ?? finalMessage;
    } else if (type === 'turn.completed') {
      terminal = { kind: 'completed' };
      const u = asRecord(e.usage);
      if (u) usage = [usageOf(u)];
    } else if (type === 'turn.failed') {
      const message = asString(asRecord(e.error)?.message) ?? 'turn failed';
      terminal = { kind: 'failed', message };
    } else if (type === 'error') {
      lastError = asString(e.message) ?? lastError;
    }
  }

  if (terminal?.kind === 'completed') return { outcome: 'ok', finalMessage, usage, detail: '' };

  const message =
    terminal?.message ?? lastError ?? (stderr.trim() !== '' ? tail(stderr, 1000) : undefined);
  if (message === undefined) {
    return endedUnfinished('codex', 'finishing the turn', exitCode, { finalMessage, usage });
  }
  return endedOnError(message, { finalMessage, usage }, context?.now);
}
