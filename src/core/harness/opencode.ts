/**
 * opencode (`opencode run --format json`), checked with the real `opencode-ai` 1.18.33
 * against the scripted model server.
 *
 * Outcome: an `error` event (name, statusCode) decides; otherwise exit 1 =
 * failed, 0 = ok. opencode retries rate limits and outages silently and
 * forever: we ask for its ERROR logs on stderr (`--print-logs --log-level ERROR`),
 * stop the turn at the first LLM error line that names a quota, a rate limit or an
 * outage (`opencodeGivesUp`), and classify those lines. Usage and cost: summed
 * `step_finish` parts.
 */
import type { OutcomeClass, TurnRequest } from '../executor.js';
import { harnessEnv } from './common.js';
import {
  asRecord,
  asString,
  classifyMessage,
  classifyStatus,
  endedOnError,
  endedOnExit,
  jsonLines,
  num,
  numOrNull,
} from './signals.js';
import type {
  Invocation,
  InvocationOptions,
  ParseContext,
  ParsedRun,
  ParsedUsage,
} from './types.js';

/** The provider defined when a base URL is given (bundled in opencode: no npm fetch). */
const OPENCODE_PROVIDER = 'epicflow';

export function buildOpencodeInvocation(request: TurnRequest, opts: InvocationOptions): Invocation {
  const { executor } = request;
  const config: Record<string, unknown> = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    // Its undo's copy of the whole tree, added at every step: a headless turn never undoes.
    snapshot: false,
    // `run` auto-rejects "ask" permissions in recent builds: allow edits and commands.
    permission: { edit: 'allow', bash: 'allow', webfetch: 'allow' },
  };
  let model = executor.model;
  if (opts.baseUrl !== undefined && executor.model !== undefined) {
    config.provider = {
      [OPENCODE_PROVIDER]: {
        npm: '@ai-sdk/openai-compatible',
        name: OPENCODE_PROVIDER,
        options: {
          baseURL: `${opts.baseUrl.replace(/\/+$/, '')}/v1`,
          apiKey: '{env:OPENAI_API_KEY}',
        },
        models: { [executor.model]: { name: executor.model } },
      },
    };
    model = `${OPENCODE_PROVIDER}/${executor.model}`;
  }
  return {
    argv: [
      opts.binary,
      'run',
      '--format',
      'json',
      '--print-logs',
      '--log-level',
      'ERROR',
      // A fixed title: without one opencode spends a model request on naming the session.
      '--title',
      'epicflow',
      ...(model === undefined ? [] : ['-m', model]),
      ...executor.args,
      '--',
      request.prompt,
    ],
    env: harnessEnv(
      request,
      {
        OPENCODE_DISABLE_AUTOUPDATE: 'true',
        OPENCODE_DISABLE_MODELS_FETCH: 'true',
        OPENCODE_DISABLE_LSP_DOWNLOAD: 'true',
      },
      {
        OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
        // A story must not reconfigure its own agent through a config file in the repo.
        OPENCODE_DISABLE_PROJECT_CONFIG: 'true',
      },
    ),
  };
}

const QUOTA = /insufficient_quota|usage_not_included|usage limit|quota/i;

function classifyError(error: Record<string, unknown>): { outcome: OutcomeClass; message: string } {
  const name = asString(error.name) ?? 'error';
  const data = asRecord(error.data);
  const message = [name, asString(data?.message)].filter(Boolean).join(': ');
  if (name === 'ProviderAuthError') return { outcome: 'auth', message };
  const status = numOrNull(data?.statusCode);
  if (status === 429 && QUOTA.test(message + JSON.stringify(data?.responseBody ?? ''))) {
    return { outcome: 'usage-limit', message };
  }
  const byStatus = status === null ? undefined : classifyStatus(status);
  return { outcome: byStatus ?? classifyMessage(message), message };
}

export function parseOpencodeOutput(
  stdout: string,
  stderr: string,
  exitCode: number | null,
  context?: ParseContext,
): ParsedRun {
  let step: string[] = [];
  let finalMessage = '';
  let tokens = { input: 0, cachedInput: 0, cacheWrite: 0, output: 0 };
  let cost: number | null = null;
  let sawStep = false;
  let error: Record<string, unknown> | undefined;
  for (const e of jsonLines(stdout)) {
    const type = asString(e.type);
    const part = asRecord(e.part);
    if (type === 'step_start') step = [];
    else if (type === 'text') step.push(asString(part?.text) ?? '');
    else if (type === 'step_finish') {
      sawStep = true;
      const t = asRecord(part?.tokens);
      const cache = asRecord(t?.cache);
      tokens = {
        input: tokens.input + num(t?.input),
        cachedInput: tokens.cachedInput + num(cache?.read),
        cacheWrite: tokens.cacheWrite + num(cache?.write),
        // Reasoning is billed as output.
        output: tokens.output + num(t?.output) + num(t?.reasoning),
      };
      const c = numOrNull(part?.cost);
      if (c !== null) cost = (cost ?? 0) + c;
      // The answer is the text of the last step that did not end in tool calls.
      if (part?.reason !== 'tool-calls') finalMessage = step.join('');
    } else if (type === 'error') error = asRecord(e.error) ?? { name: 'error' };
  }
  if (step.length > 0 && finalMessage === '') finalMessage = step.join('');
  // opencode prices unknown (custom) models at 0: that is "not reported", not free.
  const usage: ParsedUsage[] = sawStep
    ? [{ model: null, tokens, costUsd: cost === 0 ? null : cost }]
    : [];

  if (error) {
    const { outcome, message } = classifyError(error);
    return endedOnError(message, { finalMessage, usage }, context?.now, outcome);
  }
  // Killed (our timeout) or failed: its own LLM error log lines say why, if anything does.
  const llmErrors = exitCode === 0 ? [] : stderr.split('\n').filter(isLlmError);
  const last = llmErrors[llmErrors.length - 1];
  if (last !== undefined) return endedOnError(last, { finalMessage, usage }, context?.now);
  return endedOnExit('opencode', exitCode, stderr, { finalMessage, usage });
}

/** Its LLM error log lines: older builds tag them `service=llm`; 1.18 logs logfmt `level=ERROR … error.error="…"`. */
function isLlmError(line: string): boolean {
  return /\bERROR\b/.test(line) && /service=llm|\berror\.[\w.]*=|stream error/.test(line);
}

/**
 * opencode retries a quota, a rate limit or an outage silently and without end: its first
 * LLM error log line that says which is where the turn stops (epicflow retries, or the
 * roster hears of it).
 */
export function opencodeGivesUp(line: string): boolean {
  return isLlmError(line) && classifyMessage(line) !== 'failed';
}
