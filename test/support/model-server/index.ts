/**
 * A scripted model server for contract tests with the real agent CLIs. It
 * listens on 127.0.0.1 (random port) and speaks just enough of three wire
 * protocols: the OpenAI Responses API (`POST /v1/responses`, SSE) for codex, the
 * Anthropic Messages API (`POST /v1/messages`, SSE; `HEAD /` probe) for claude, and
 * Gemini's `POST /v1beta/models/<m>:streamGenerateContent?alt=sse` for the Gemini CLI, and
 * OpenAI chat completions (`POST /v1/chat/completions`, streamed) for opencode. Each model request consumes the next scripted step; the last step
 * repeats, so an error step keeps answering the CLI's own retries.
 *
 * Every request (method, path, headers, parsed body) and every TCP connection
 * is recorded, so tests can assert what the CLI sent and that it sent nothing
 * elsewhere (tests also point HTTP(S)_PROXY here: a stray request shows up as a
 * CONNECT or an absolute-URL request).
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface ScriptedUsage {
  /** Uncached input tokens (Anthropic meaning; for OpenAI the server adds cached to it). */
  readonly input: number;
  readonly cachedInput?: number;
  readonly cacheWrite?: number;
  readonly output: number;
}

export type Step =
  /** A shell tool call: codex `exec_command {cmd}`, claude `Bash {command}`. */
  | { readonly kind: 'tool'; readonly command: string; readonly usage: ScriptedUsage }
  | { readonly kind: 'message'; readonly text: string; readonly usage: ScriptedUsage }
  /** A quota/usage limit: 429 in the vendor's shape with a reset time. */
  | { readonly kind: 'usage-limit'; readonly resetsAt: Date }
  /** A short rate limit: 429 with retry-after. */
  | { readonly kind: 'rate-limit'; readonly retryAfterSeconds: number }
  /** Overloaded: 529 (Anthropic) / 503 (OpenAI). */
  | { readonly kind: 'overload' }
  | { readonly kind: 'auth' }
  /** Accept the request and never answer. */
  | { readonly kind: 'hang' };

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
  /** Which step answered (model requests only). */
  readonly step?: number;
}

export interface ModelServer {
  /** e.g. http://127.0.0.1:43210 */
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  /** Model requests only (POST /v1/responses, POST /v1/messages). */
  modelRequests(): RecordedRequest[];
  /** Number of TCP connections accepted. */
  connections(): number;
  /** Requests that were not for this server (proxy CONNECT or absolute URLs). */
  strayRequests(): RecordedRequest[];
  /** A readable dump of every request, for failure messages. */
  dump(): string;
  /**
   * Resolves once a model request is answered by a step of this kind (for a `hang`: once the
   * CLI is waiting on it, so everything before it in the script has run).
   */
  reached(kind: Step['kind']): Promise<void>;
  close(): Promise<void>;
}

export async function startModelServer(script: readonly Step[]): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let connectionCount = 0;
  let nextStep = 0;
  let idCounter = 0;
  const newId = (prefix: string): string => `${prefix}_${++idCounter}`;

  const waiting: { kind: Step['kind']; resolve: () => void }[] = [];
  const answered = new Set<Step['kind']>();
  const takeStep = (): { step: Step; index: number } => {
    const index = Math.min(nextStep, script.length - 1);
    nextStep += 1;
    const step = script[index];
    if (step === undefined) throw new Error('model server: empty script');
    return { step, index };
  };
  const announce = (kind: Step['kind']): void => {
    answered.add(kind);
    for (const w of waiting.filter((x) => x.kind === kind)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve();
    }
  };

  const server: Server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const path = req.url ?? '';
      let body: unknown = raw;
      try {
        body = raw === '' ? null : JSON.parse(raw);
      } catch {
        // keep the raw text: a non-JSON body is recorded as is
      }
      const isModel =
        req.method === 'POST' &&
        (path.startsWith('/v1/responses') ||
          path.startsWith('/v1/messages') ||
          path.startsWith('/v1/chat/completions') ||
          GEMINI_PATH.test(path));
      if (!isModel) {
        requests.push({ method: req.method ?? '', path, headers: req.headers, body });
        // The claude HEAD / probe, and anything else local: a plain 200.
        res.writeHead(path.startsWith('/') ? 200 : 502);
        res.end();
        return;
      }
      // Claude calls a small model for side tasks (titles, topic checks): they carry no
      // tools; answer them with a short text and keep the script for the agent loop.
      if (path.startsWith('/v1/messages') && isSideRequest(body)) {
        requests.push({ method: 'POST', path, headers: req.headers, body });
        sendAnthropic(res, { kind: 'message', text: 'ok', usage: { input: 0, output: 0 } }, newId);
        return;
      }
      const { step, index } = takeStep();
      requests.push({ method: 'POST', path, headers: req.headers, body, step: index });
      if (path.startsWith('/v1/responses')) sendOpenAi(res, step, newId);
      else if (GEMINI_PATH.test(path)) sendGemini(res, step, path);
      else if (path.startsWith('/v1/chat/completions')) sendChat(res, step, newId);
      else sendAnthropic(res, step, newId);
      announce(step.kind);
    });
  });
  server.on('connection', (socket: Socket) => {
    connectionCount += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    requests.push({ method: 'CONNECT', path: req.url ?? '', headers: req.headers, body: null });
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const port = address.port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    modelRequests: () => requests.filter((r) => r.step !== undefined),
    connections: () => connectionCount,
    strayRequests: () => requests.filter((r) => r.method === 'CONNECT' || !r.path.startsWith('/')),
    dump: () =>
      requests
        .map(
          (r, i) =>
            `#${i} ${r.method} ${r.path}${r.step === undefined ? '' : ` (step ${r.step})`}\n` +
            JSON.stringify(r.body, null, 1)?.slice(0, 4000),
        )
        .join('\n'),
    reached: (kind) =>
      answered.has(kind)
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.push({ kind, resolve })),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function isSideRequest(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const tools = (body as { tools?: unknown }).tools;
  return !Array.isArray(tools) || tools.length === 0;
}

/** One server-sent event: its `type` is also its event name. */
type SseEvent = { readonly type: string } & Record<string, unknown>;

/** Gemini's generate calls (`countTokens` and others get the plain 200 of local requests). */
const GEMINI_PATH = /^\/v1beta\/models\/[^/:]+:(?:stream)?[gG]enerateContent/;

/**
 * Gemini API (`generateContent`, streamed as SSE with `alt=sse`): a tool step is a
 * `run_shell_command` call; `promptTokenCount` includes the cached tokens. Errors in
 * Google's shape, with the CLI's own retries off (the executor's settings) answered once.
 */
function sendGemini(res: ServerResponse, step: Step, path: string): void {
  const model = /models\/([^/:]+):/.exec(path)?.[1] ?? 'gemini';
  const error = (status: number, message: string, code: string): void =>
    json(res, status, { error: { code: status, message, status: code } });
  switch (step.kind) {
    case 'tool':
    case 'message': {
      const u = step.usage;
      const part =
        step.kind === 'tool'
          ? { functionCall: { name: 'run_shell_command', args: { command: step.command } } }
          : { text: step.text };
      const chunk = {
        candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: {
          promptTokenCount: u.input + (u.cachedInput ?? 0),
          cachedContentTokenCount: u.cachedInput ?? 0,
          candidatesTokenCount: u.output,
          totalTokenCount: u.input + (u.cachedInput ?? 0) + u.output,
        },
        modelVersion: model,
      };
      if (path.includes('alt=sse')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
      } else json(res, 200, chunk);
      return;
    }
    case 'usage-limit':
      error(429, 'You have exhausted your daily quota on this model.', 'RESOURCE_EXHAUSTED');
      return;
    case 'rate-limit':
      error(429, 'Resource has been exhausted (e.g. check quota).', 'RESOURCE_EXHAUSTED');
      return;
    case 'overload':
      error(503, 'The model is overloaded. Please try again later.', 'UNAVAILABLE');
      return;
    case 'auth':
      error(401, 'API key not valid. Please pass a valid API key.', 'UNAUTHENTICATED');
      return;
    case 'hang':
      return;
  }
}

/**
 * OpenAI chat completions, streamed: a tool step is a `bash {command}` call (opencode's
 * shell tool); the last chunk carries the usage (`prompt_tokens` includes the cached ones).
 */
function sendChat(res: ServerResponse, step: Step, newId: (p: string) => string): void {
  switch (step.kind) {
    case 'tool':
    case 'message': {
      const u = step.usage;
      const base = {
        id: newId('chatcmpl'),
        object: 'chat.completion.chunk',
        created: 1,
        model: 'scripted',
      };
      const delta =
        step.kind === 'tool'
          ? {
              role: 'assistant',
              tool_calls: [
                {
                  index: 0,
                  id: newId('call'),
                  type: 'function',
                  function: {
                    name: 'bash',
                    arguments: JSON.stringify({ command: step.command, description: 'scripted' }),
                  },
                },
              ],
            }
          : { role: 'assistant', content: step.text };
      const chunks = [
        { ...base, choices: [{ index: 0, delta, finish_reason: null }] },
        {
          ...base,
          choices: [
            { index: 0, delta: {}, finish_reason: step.kind === 'tool' ? 'tool_calls' : 'stop' },
          ],
        },
        {
          ...base,
          choices: [],
          usage: {
            prompt_tokens: u.input + (u.cachedInput ?? 0),
            completion_tokens: u.output,
            total_tokens: u.input + (u.cachedInput ?? 0) + u.output,
            prompt_tokens_details: { cached_tokens: u.cachedInput ?? 0 },
          },
        },
      ];
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    }
    case 'usage-limit':
      json(res, 429, {
        error: {
          message: 'You exceeded your current quota, please check your plan and billing details.',
          type: 'insufficient_quota',
          code: 'insufficient_quota',
        },
      });
      return;
    case 'rate-limit':
      json(
        res,
        429,
        {
          error: {
            message: 'Rate limit reached for requests.',
            type: 'requests',
            code: 'rate_limit_exceeded',
          },
        },
        { 'retry-after': String(step.retryAfterSeconds) },
      );
      return;
    case 'overload':
      json(res, 503, {
        error: { message: 'The server is overloaded. Try again later.', type: 'server_error' },
      });
      return;
    case 'auth':
      json(res, 401, {
        error: {
          message: 'Incorrect API key provided.',
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      });
      return;
    case 'hang':
      return;
  }
}

function sse(res: ServerResponse, events: readonly SseEvent[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  res.end();
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** OpenAI Responses API. OpenAI's input_tokens include the cached ones. */
function sendOpenAi(res: ServerResponse, step: Step, newId: (p: string) => string): void {
  switch (step.kind) {
    case 'tool':
    case 'message': {
      const u = step.usage;
      const usage = {
        input_tokens: u.input + (u.cachedInput ?? 0),
        input_tokens_details: { cached_tokens: u.cachedInput ?? 0 },
        output_tokens: u.output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: u.input + (u.cachedInput ?? 0) + u.output,
      };
      const respId = newId('resp');
      const item =
        step.kind === 'tool'
          ? {
              type: 'function_call',
              id: newId('fc'),
              call_id: newId('call'),
              name: 'exec_command',
              arguments: JSON.stringify({ cmd: step.command }),
              status: 'completed',
            }
          : {
              type: 'message',
              id: newId('msg'),
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: step.text, annotations: [] }],
            };
      const events: SseEvent[] = [
        {
          type: 'response.created',
          response: { id: respId, object: 'response', status: 'in_progress', output: [] },
        },
        { type: 'response.output_item.added', output_index: 0, item: { ...item } },
      ];
      if (step.kind === 'message') {
        events.push({
          type: 'response.output_text.delta',
          item_id: item.id,
          output_index: 0,
          content_index: 0,
          delta: step.text,
        });
      }
      events.push(
        { type: 'response.output_item.done', output_index: 0, item },
        {
          type: 'response.completed',
          response: { id: respId, object: 'response', status: 'completed', output: [item], usage },
        },
      );
      sse(res, events);
      return;
    }
    case 'usage-limit': {
      const resetsAt = Math.floor(step.resetsAt.getTime() / 1000);
      const inSeconds = Math.max(0, resetsAt - Math.floor(Date.now() / 1000));
      json(
        res,
        429,
        {
          error: {
            type: 'usage_limit_reached',
            message: 'The usage limit has been reached',
            plan_type: 'pro',
            resets_at: resetsAt,
            resets_in_seconds: inSeconds,
          },
        },
        { 'x-codex-primary-used-percent': '100', 'x-codex-primary-reset-at': String(resetsAt) },
      );
      return;
    }
    case 'rate-limit':
      json(
        res,
        429,
        {
          error: {
            type: 'requests',
            code: 'rate_limit_exceeded',
            message: `Rate limit reached for requests. Please try again in ${step.retryAfterSeconds}s.`,
          },
        },
        { 'retry-after': String(step.retryAfterSeconds) },
      );
      return;
    case 'overload':
      json(res, 503, {
        error: { type: 'server_error', message: 'The server is overloaded. Try again later.' },
      });
      return;
    case 'auth':
      json(res, 401, {
        error: {
          type: 'invalid_request_error',
          code: 'invalid_api_key',
          message: 'Incorrect API key provided.',
        },
      });
      return;
    case 'hang':
      return;
  }
}

/** Anthropic Messages API. input_tokens exclude cache reads and writes. */
function sendAnthropic(res: ServerResponse, step: Step, newId: (p: string) => string): void {
  switch (step.kind) {
    case 'tool':
    case 'message': {
      const u = step.usage;
      const block =
        step.kind === 'tool'
          ? { type: 'tool_use', id: newId('toolu'), name: 'Bash', input: {} }
          : { type: 'text', text: '' };
      const delta =
        step.kind === 'tool'
          ? {
              type: 'input_json_delta',
              partial_json: JSON.stringify({ command: step.command, description: 'run' }),
            }
          : { type: 'text_delta', text: step.text };
      sse(res, [
        {
          type: 'message_start',
          message: {
            id: newId('msg'),
            type: 'message',
            role: 'assistant',
            model: 'scripted',
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: {
              input_tokens: u.input,
              cache_read_input_tokens: u.cachedInput ?? 0,
              cache_creation_input_tokens: u.cacheWrite ?? 0,
              output_tokens: 1,
            },
          },
        },
        { type: 'content_block_start', index: 0, content_block: block },
        { type: 'content_block_delta', index: 0, delta },
        { type: 'content_block_stop', index: 0 },
        {
          type: 'message_delta',
          delta: {
            stop_reason: step.kind === 'tool' ? 'tool_use' : 'end_turn',
            stop_sequence: null,
          },
          usage: { output_tokens: u.output },
        },
        { type: 'message_stop' },
      ]);
      return;
    }
    case 'usage-limit': {
      const resetsAt = Math.floor(step.resetsAt.getTime() / 1000);
      json(
        res,
        429,
        {
          type: 'error',
          error: {
            type: 'rate_limit_error',
            message: "This request would exceed your account's rate limit. Please try again later.",
          },
        },
        {
          'anthropic-ratelimit-unified-status': 'rejected',
          'anthropic-ratelimit-unified-reset': String(resetsAt),
          'anthropic-ratelimit-unified-representative-claim': 'five_hour',
          'retry-after': String(Math.max(0, resetsAt - Math.floor(Date.now() / 1000))),
        },
      );
      return;
    }
    case 'rate-limit':
      json(
        res,
        429,
        {
          type: 'error',
          error: {
            type: 'rate_limit_error',
            message: "This request would exceed your account's rate limit. Please try again later.",
          },
        },
        { 'retry-after': String(step.retryAfterSeconds) },
      );
      return;
    case 'overload':
      json(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
      return;
    case 'auth':
      json(res, 401, {
        type: 'error',
        error: { type: 'authentication_error', message: 'invalid x-api-key' },
      });
      return;
    case 'hang':
      return;
  }
}

/**
 * Runs assertions and, when one fails, appends every request the server saw
 * (paths, steps, bodies) to the failure message: the first thing to read when
 * a CLI changes what it sends.
 */
export async function explainWith<T>(server: ModelServer, check: () => T | Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (e) {
    if (e instanceof Error) e.message += `\n\nThe model server saw:\n${server.dump()}`;
    throw e;
  }
}
