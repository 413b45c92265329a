/**
 * `npm start` as a user runs it, and as the container image runs it: probot's own CLI
 * (`probot run <entry>`) in its own process, with the image's command (the Dockerfile's
 * CMD) and environment (its ENV), configured only by probot's environment variables,
 * talking to a GitHub Enterprise host (`GHE_HOST`, `GHE_PROTOCOL`) played by the GitHub
 * double.
 *
 * The entry is the BUILT code `npm start` names (`./lib/app/index.js`), compiled by
 * `tsc -p tsconfig.build.json` into a folder of its own (`test/support/built-package.ts`;
 * a test must not build into the project's `lib/`).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { sign } from '@octokit/webhooks-methods';
import { pino } from 'pino';
import { Probot, type Logger } from 'probot';
import { createEpicflowApp } from '../../src/app/index.js';
import { KeyedQueue } from '../../src/app/queue.js';
import { createShutdown } from '../../src/app/shutdown.js';
import { describeError } from '../../src/core/errors.js';
import { startGitHubDouble, type GitHubDouble } from '../github-double/index.js';
import { builtPackage } from '../support/built-package.js';
import { readDockerfile, type ParsedDockerfile } from '../support/dockerfile.js';
import { OWNER, REPO } from './harness.js';

const SECRET = 'start-test-secret';
/** pino's `error` level. */
const ERROR_LEVEL = 50;

interface LogLine {
  readonly msg?: string;
  readonly level?: number;
  /** The line as printed. */
  readonly raw: string;
}

/** The probot process: its JSON log lines as they arrive, and its exit. */
class ProbotProcess {
  readonly lines: LogLine[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly waiters: { test: (l: LogLine) => boolean; resolve: (msg: string) => void }[] =
    [];

  constructor(readonly child: ChildProcess) {
    let pending = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      for (const part of parts) this.add(part);
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  private add(text: string): void {
    let line: LogLine;
    try {
      line = { ...(JSON.parse(text) as Omit<LogLine, 'raw'>), raw: text };
    } catch {
      line = { msg: text, raw: text };
    }
    this.lines.push(line);
    for (const w of [...this.waiters]) {
      if (w.test(line)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(line.msg ?? '');
      }
    }
  }

  messages(): string[] {
    return this.lines.map((l) => l.msg ?? '');
  }

  /**
   * Resolves with the first log message that starts with `prefix`, or with the first
   * error logged that mentions `errorsOf` (so a failure shows in the assertion instead of
   * as a hang); fails if the process exits first.
   */
  waitForLog(prefix: string, errorsOf?: string): Promise<string> {
    const test = (l: LogLine): boolean =>
      (l.msg ?? '').startsWith(prefix) ||
      (errorsOf !== undefined && (l.level ?? 0) >= ERROR_LEVEL && l.raw.includes(errorsOf));
    const found = this.lines.find(test);
    if (found !== undefined) return Promise.resolve(found.msg ?? '');
    const logged = new Promise<string>((resolve) => {
      this.waiters.push({ test, resolve });
    });
    const died = this.exited.then(({ code, signal }) => {
      throw new Error(
        `probot exited (${String(code ?? signal)}) before logging "${prefix}":\n` +
          `${this.messages().join('\n')}\n${this.stderr}`,
      );
    });
    return Promise.race([logged, died]);
  }
}

/**
 * The GHE host: REST under `/api/v3`, GraphQL at `/api/graphql`, forwarded to the double
 * (which serves github.com's paths). Anything else is refused, so a client that ignored
 * `GHE_HOST` would fail, not reach the double.
 */
function startEnterpriseHost(
  gh: GitHubDouble,
): Promise<{ server: Server; host: string; outside: string[] }> {
  const outside: string[] = [];
  const upstream = new URL(gh.url);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const path = url.startsWith('/api/v3/')
      ? url.slice('/api/v3'.length)
      : url === '/api/graphql'
        ? '/graphql'
        : undefined;
    if (path === undefined) {
      outside.push(`${req.method ?? ''} ${url}`);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Not Found' }));
      return;
    }
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path,
        headers: { ...req.headers, host: upstream.host },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    forward.on('error', (e) => {
      res.writeHead(502);
      res.end(e.message);
    });
    req.pipe(forward);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, host: `127.0.0.1:${(server.address() as AddressInfo).port}`, outside }),
    ),
  );
}

/**
 * A port for a probot to listen on, that nothing listens on now, below the kernel's range of
 * ephemeral ports where the machine has room for it. A port the kernel hands out
 * (`listen(0)`) can be handed out again, as the local port of any outgoing connection, before
 * probot binds it (a whole file failed so, on EADDRINUSE, in a loaded full run); one below
 * that range never is.
 */
async function freePort(): Promise<number> {
  const range = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '');
  const below = Number(range.trim().split(/\s+/)[0]) - 1;
  for (let tries = 0; below > 11_000 && tries < 50; tries++) {
    const port = 10_000 + Math.floor(Math.random() * (below - 10_000));
    if (await listens(port)) return port;
  }
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** Whether a server can listen on `port` of 127.0.0.1 now (it is closed again at once). */
async function listens(port: number): Promise<boolean> {
  const s = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (bound) await new Promise((resolve) => s.close(resolve));
  return bound;
}

/**
 * The entry `npm start` runs, which is the package export `epicflow/app`, and the
 * command the image runs (the Dockerfile's CMD): `node node_modules/probot/bin/probot.js
 * run <entry>`, the same as `npm start` without npm in between.
 */
async function startEntry(): Promise<{ entry: string; argv: readonly string[] }> {
  const pkg = JSON.parse(
    await readFile(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as {
    scripts: Record<string, string>;
    exports: Record<string, string>;
  };
  const match = /^probot run (\S+)$/.exec(pkg.scripts['start'] ?? '');
  if (!match?.[1])
    throw new Error(`npm start is not "probot run <entry>": ${pkg.scripts['start']}`);
  const built = match[1];
  expect(pkg.exports['./app']).toBe(built);
  // tsconfig.build.json compiles src/ into lib/, file for file.
  const source = built.replace(/^\.\/lib\//, './src/').replace(/\.js$/, '.ts');
  expect(existsSync(new URL(`../../${source}`, import.meta.url))).toBe(true);
  expect(dockerfile.cmd).toEqual(['node', 'node_modules/probot/bin/probot.js', 'run', built]);
  expect(existsSync(join(packageDir, built))).toBe(true);
  return { entry: built, argv: dockerfile.cmd };
}

let gh: GitHubDouble;
let ghe: Awaited<ReturnType<typeof startEnterpriseHost>>;
let probot: ProbotProcess;
let port: number;
/** An issue that is not an epic: commands on it get epicflow's answer, and nothing else. */
let issue: number;

const webhookUrl = (): string => `http://127.0.0.1:${port}/api/github/webhooks`;

/** epicflow's comments on the issue. */
function botComments(): string[] {
  return gh.state
    .comments(OWNER, REPO, issue)
    .filter((c) => c.author === 'epicflow[bot]')
    .map((c) => c.body);
}

/** The App's log line for a delivery, written once it handled it. */
function handled(event: string, deliveryId: string): Promise<string> {
  return probot.waitForLog(`${event} ${deliveryId}: `, deliveryId);
}

/** Alice comments; resolves with the delivery once probot answered it. */
async function comment(body: string): Promise<{ id: string; status: number | undefined }> {
  gh.act.comment('alice', { owner: OWNER, repo: REPO, number: issue, body });
  await gh.idle();
  const d = gh.deliveries.filter((x) => x.event === 'issue_comment').at(-1);
  if (!d || (d.payload['comment'] as { body?: string } | undefined)?.body !== body) {
    throw new Error(`no issue_comment delivery for ${JSON.stringify(body)}`);
  }
  return { id: d.id, status: d.status };
}

/** A delivery as GitHub would send it, with the signature the caller chooses. */
async function post(
  id: string,
  body: string,
  signature: string | undefined,
  url = webhookUrl(),
): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'issue_comment',
      'x-github-delivery': id,
      ...(signature === undefined ? {} : { 'x-hub-signature-256': signature }),
    },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

interface HealthAnswer {
  readonly status: number;
  readonly body: { status?: string; reason?: string; deliveries?: unknown };
}

async function healthz(listenOn: number): Promise<HealthAnswer> {
  const res = await fetch(`http://127.0.0.1:${listenOn}/healthz`);
  return { status: res.status, body: (await res.json()) as HealthAnswer['body'] };
}

/** The image's HEALTHCHECK command run against a port, as Docker runs it: its exit code. */
async function imageHealthcheck(listenOn: number): Promise<number> {
  const [node, ...args] = dockerfile.healthcheck.cmd;
  expect(node).toBe('node');
  try {
    await promisify(execFile)(process.execPath, args, {
      env: { PATH: process.env['PATH'], PORT: String(listenOn) },
    });
    return 0;
  } catch (e) {
    return typeof (e as { code?: unknown }).code === 'number' ? (e as { code: number }).code : -1;
  }
}

/** A `/help` comment delivery on the issue (answered with a new comment each time), signed. */
async function helpDelivery(id: string, url: string): Promise<number> {
  const real = gh.deliveries.find((d) => d.event === 'issue_comment');
  const payload = structuredClone(real?.payload ?? {});
  (payload['comment'] as { body: string }).body = '/help';
  const body = JSON.stringify(payload);
  return post(id, body, await sign(SECRET, body), url);
}

/** When the last slowed request of the double answers (it outlives a process that dropped it). */
let slowUntil = 0;

/** The next comment the double is asked to write takes `ms` to be answered. */
function slowComment(ms: number): void {
  gh.faults.add({ route: 'issues/create-comment', latencyMs: ms });
  slowUntil = Math.max(slowUntil, Date.now() + ms + 200);
}

let pem: string;
let appId: number;
let dockerfile: ParsedDockerfile;
/** The built package: `package.json`, `lib/`, `node_modules`. */
let packageDir: string;
/** Every probot started, stopped in `afterAll` should a test end before it stops one. */
const processes: ProbotProcess[] = [];

/**
 * The image's command in the built package, with only what a deployment sets in its
 * environment: the image's ENV (`NODE_ENV=production`, `LOG_FORMAT=json`), probot's
 * variables, and `extra` (unset a variable with `undefined`).
 */
function spawnProbot(
  listenOn: number,
  key = pem,
  extra: Readonly<Record<string, string | undefined>> = {},
): ProbotProcess {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    ...dockerfile.env,
    APP_ID: String(appId),
    PRIVATE_KEY: key,
    WEBHOOK_SECRET: SECRET,
    PORT: String(listenOn),
    HOST: '127.0.0.1',
    GHE_HOST: ghe.host,
    GHE_PROTOCOL: 'http',
    LOG_LEVEL: 'info',
  };
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const [node, ...args] = command;
  expect(node).toBe('node');
  const child = spawn(process.execPath, args, {
    cwd: packageDir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const started = new ProbotProcess(child);
  processes.push(started);
  return started;
}

/** `spawnProbot`, resolved once it listens. */
async function startProbot(
  listenOn: number,
  key = pem,
  extra: Readonly<Record<string, string | undefined>> = {},
): Promise<ProbotProcess> {
  const started = spawnProbot(listenOn, key, extra);
  await started.waitForLog('Listening on ');
  return started;
}

let command: readonly string[];

beforeAll(async () => {
  dockerfile = await readDockerfile();
  packageDir = await builtPackage();
  command = (await startEntry()).argv;
  gh = await startGitHubDouble();
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const app = gh.seed.app({
    id: 4242,
    slug: 'epicflow',
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  });
  gh.seed.user({ login: app.botLogin, type: 'Bot', permission: 'admin' });
  gh.seed.user({ login: 'alice', permission: 'write' });
  await gh.seed.repo({
    owner: OWNER,
    name: REPO,
    files: { 'README.md': '# shop\n' },
  });
  ghe = await startEnterpriseHost(gh);

  pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  appId = app.id;
  port = await freePort();
  probot = await startProbot(port);
  gh.setWebhookTarget({ url: webhookUrl(), secret: SECRET });
  issue = gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Flaky login', author: 'alice' }).number;
}, 360_000);

afterEach(() => {
  gh.faults.clear();
});

afterAll(async () => {
  for (const p of processes) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await p.exited;
  }
  // A request a stopped process dropped is still being answered by the double: let it finish.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, slowUntil - Date.now())));
  await new Promise((resolve) => ghe.server.close(resolve));
  await gh.close();
});

describe('GET /healthz and the image HEALTHCHECK', () => {
  it('answers 200 with a JSON status while the App can sign its JWT, and the image check passes', async () => {
    expect(await healthz(port)).toEqual({
      status: 200,
      body: { status: 'ok', deliveries: { running: 0, waiting: 0 } },
    });
    expect(await imageHealthcheck(port)).toBe(0);
  });

  it('answers 503 naming PRIVATE_KEY when the key does not sign, and the image check fails', async () => {
    const other = await freePort();
    // A PEM frame around bytes that are no key: probot starts, nothing can be signed.
    const broken = '-----BEGIN RSA PRIVATE KEY-----\nbm90IGEga2V5\n-----END RSA PRIVATE KEY-----\n';
    const p = await startProbot(other, broken);
    try {
      const answer = await healthz(other);
      expect(answer.status).toBe(503);
      expect(answer.body.status).toBe('unhealthy');
      expect(answer.body.reason).toMatch(
        /^cannot sign a JWT with the App's private key \(PRIVATE_KEY\): /,
      );
      expect(await imageHealthcheck(other)).toBe(1);
    } finally {
      p.child.kill('SIGTERM');
      await p.exited;
    }
  });
});

describe('npm start (probot run)', () => {
  it('listens on PORT and HOST', () => {
    expect(probot.messages()).toContain(`Listening on http://127.0.0.1:${port}`);
  });

  it('answers a correctly signed issue_comment with 2xx and acts on it through the GHE host', async () => {
    const status = await comment('/status');
    expect(status.status).toBe(200);
    expect(await handled('issue_comment', status.id)).toBe(
      `issue_comment ${status.id}: replied (not an epic)`,
    );
    expect(botComments()).toEqual([expect.stringContaining('This issue is not an epic')]);
    // Every request went to the enterprise host's /api/v3 (or /api/graphql).
    expect(ghe.outside).toEqual([]);
  });

  it('refuses a badly signed or unsigned issue_comment with 4xx and does not act on it', async () => {
    const real = gh.deliveries.find((d) => d.event === 'issue_comment');
    const payload = structuredClone(real?.payload ?? {});
    // `/help` is answered with a new comment every time: acting on it would show.
    (payload['comment'] as { body: string }).body = '/help';
    const body = JSON.stringify(payload);
    const forged = 'forged-delivery-1';
    const unsigned = 'forged-delivery-2';
    expect(await post(forged, body, await sign('not-the-secret', body))).toBe(400);
    expect(await post(unsigned, body, undefined)).toBe(400);

    // Deliveries of one issue are handled in order: once this one is, the forged ones
    // would have been too, had they been accepted.
    const after = await comment('/status');
    expect(after.status).toBe(200);
    expect(await handled('issue_comment', after.id)).toBe(
      `issue_comment ${after.id}: replied (not an epic)`,
    );
    expect(botComments()).toHaveLength(1);
    expect(probot.messages().filter((m) => m.includes(forged) || m.includes(unsigned))).toEqual([]);
  });

  it('logs a delivery it cannot handle because GitHub refuses its key, naming the delivery', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const other = await freePort();
    const revoked = await startProbot(
      other,
      privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    );
    try {
      const body = gh.deliveries.find((d) => d.event === 'issue_comment')?.body ?? '';
      const id = 'revoked-key-1';
      const url = `http://127.0.0.1:${other}/api/github/webhooks`;
      // Answered at once (GitHub gives up after 10 s); the failure shows in the log.
      expect(await post(id, body, await sign(SECRET, body), url)).toBe(200);
      expect(await revoked.waitForLog(`issue_comment ${id}: `, id)).toMatch(
        new RegExp(`^issue_comment ${id}: .*JSON web token`),
      );
    } finally {
      revoked.child.kill('SIGTERM');
      await revoked.exited;
    }
  });

  it('stops on SIGTERM', async () => {
    probot.child.kill('SIGTERM');
    const { code, signal } = await probot.exited;
    // Node's default for SIGTERM (killed by the signal), or a handler that exits 0.
    expect(signal === 'SIGTERM' || code === 0).toBe(true);
    expect(probot.stderr).toBe('');
    await expect(fetch(`http://127.0.0.1:${port}/ping`)).rejects.toThrow();
  });
});

/**
 * One process with short limits for two rules of time: a delivery stuck past
 * EPICFLOW_STUCK_SECONDS, and a shutdown past EPICFLOW_SHUTDOWN_SECONDS (which ends it).
 */
describe('short limits: a stuck delivery, and a shutdown past its deadline', () => {
  let short: ProbotProcess;
  let other: number;
  let url: string;
  beforeAll(async () => {
    other = await freePort();
    url = `http://127.0.0.1:${other}/api/github/webhooks`;
    short = await startProbot(other, pem, {
      EPICFLOW_STUCK_SECONDS: '0.5',
      EPICFLOW_SHUTDOWN_SECONDS: '0.5',
    });
  });

  it('GET /healthz answers 503 naming the delivery while one is stuck, and 200 again once it is done', async () => {
    // The reply's comment takes 2 s to be written: far past the 0.5 s limit.
    slowComment(2000);
    expect(await helpDelivery('stuck-1', url)).toBe(200);
    let answer = await healthz(other);
    for (let i = 0; i < 80 && answer.status === 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      answer = await healthz(other);
    }
    expect(answer.status).toBe(503);
    expect(answer.body.reason).toMatch(
      /^delivery issue_comment stuck-1 \(acme\/shop#\d+\) has been running for \d+ s, longer than EPICFLOW_STUCK_SECONDS \(0\.5 s\)$/,
    );
    expect(await imageHealthcheck(other)).toBe(1);
    await short.waitForLog('issue_comment stuck-1: ', 'stuck-1');
    expect(await healthz(other)).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('at the deadline (EPICFLOW_SHUTDOWN_SECONDS) stops and logs the delivery it dropped', async () => {
    slowComment(3000);
    expect(await helpDelivery('late-1', url)).toBe(200);
    short.child.kill('SIGTERM');
    const { code } = await short.exited;
    expect(code).toBe(1);
    expect(short.messages()).toContain(
      'shutting down now (EPICFLOW_SHUTDOWN_SECONDS (0.5 s) passed): dropped 1 delivery: ' +
        `issue_comment late-1 (${OWNER}/${REPO}#${issue}); their epics' state is on GitHub, so the next event on each epic (or /resume) redoes what they left undone`,
    );
  });
});

describe('refusing to start', () => {
  /** Starts probot with `extra`, which must make it exit before it listens. */
  async function refused(extra: Record<string, string | undefined>): Promise<ProbotProcess> {
    const p = spawnProbot(await freePort(), pem, extra);
    const { code } = await p.exited;
    expect(code).not.toBe(0);
    expect(p.messages().some((m) => m.startsWith('Listening on '))).toBe(false);
    // One clear log line, no stack trace.
    expect(p.stderr).toBe('');
    return p;
  }

  it('without WEBHOOK_SECRET (probot would accept its public default secret)', async () => {
    const p = await refused({ WEBHOOK_SECRET: undefined });
    expect(p.messages()).toContain(
      'refusing to start: WEBHOOK_SECRET is not set, so probot would accept deliveries signed with its public default secret "development"\n' +
        '  set WEBHOOK_SECRET to the webhook secret of your GitHub App (App settings → Webhook secret)',
    );
  });
});

/**
 * The same refusals, decided by the same code (the App's load) as in `probot run` above,
 * in this process: the App loaded into a Probot of its own.
 */
describe('refusing to load (in process)', () => {
  async function refusal(secret: string, env: Readonly<Record<string, string>>): Promise<string> {
    const saved = new Map(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    try {
      const app = new Probot({
        appId: appId,
        privateKey: pem,
        secret,
        log: pino({ level: 'silent' }) as unknown as Logger,
      });
      const err = await app.load(createEpicflowApp()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Error);
      return describeError(err);
    } finally {
      for (const [k, v] of saved) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }

  it('with probot\'s public default secret "development"', async () => {
    expect(await refusal('development', { WEBHOOK_SECRET: 'development' })).toBe(
      'refusing to start: the webhook secret is probot\'s public default "development"\n' +
        '  set WEBHOOK_SECRET to the webhook secret of your GitHub App (App settings → Webhook secret)',
    );
  });

  it('with a shutdown deadline that is no number of seconds', async () => {
    expect(await refusal(SECRET, { EPICFLOW_SHUTDOWN_SECONDS: 'soon' })).toBe(
      'invalid EPICFLOW_SHUTDOWN_SECONDS: "soon"\n  expected a number of seconds greater than 0',
    );
  });
});

describe('graceful shutdown', () => {
  let other: number;
  let url: string;
  beforeEach(async () => {
    other = await freePort();
    url = `http://127.0.0.1:${other}/api/github/webhooks`;
  });

  it('on SIGTERM finishes the delivery in progress, refuses new ones with 503, then exits 0', async () => {
    const p = await startProbot(other);
    const before = botComments().length;
    slowComment(1500);
    expect(await helpDelivery('drain-1', url)).toBe(200);
    p.child.kill('SIGTERM');
    await p.waitForLog('shutting down (SIGTERM): finishing 1 delivery');
    // Still listening, but taking nothing new: GitHub shows it failed, to redeliver.
    expect(await helpDelivery('drain-2', url)).toBe(503);
    const { code } = await p.exited;
    expect(code).toBe(0);
    expect(p.messages()).toContain('issue_comment drain-1: replied (not an epic)');
    expect(p.messages()).toContain('shut down: every queued delivery was handled');
    expect(p.messages().some((m) => m.startsWith('issue_comment drain-2: replied'))).toBe(false);
    expect(botComments()).toHaveLength(before + 1);
    expect(p.stderr).toBe('');
  });

  it('on a second SIGTERM stops at once and logs the delivery it dropped (the shutdown in process)', async () => {
    // The App's shutdown, as `probot run` wires it to SIGTERM (the drain above, the deadline
    // before): a delivery running, two signals.
    const queue = new KeyedQueue();
    let release = (): void => undefined;
    const running = queue.push(
      'acme/shop#7',
      () => new Promise<void>((resolve) => (release = resolve)),
      'issue_comment dropped-1 (acme/shop#7)',
    );
    await Promise.resolve();
    const infos: string[] = [];
    const warns: string[] = [];
    const exits: number[] = [];
    const shutdown = createShutdown({
      queue,
      deadlineMs: 60_000,
      log: { info: (m) => infos.push(m), warn: (m) => warns.push(m) },
      exit: (code) => exits.push(code),
    });
    shutdown.begin('SIGTERM');
    expect(shutdown.stopping()).toBe(true);
    expect(infos).toEqual([
      'shutting down (SIGTERM): finishing 1 delivery (issue_comment dropped-1 (acme/shop#7)) within 60 s; a second signal stops at once',
    ]);
    expect(exits).toEqual([]);
    shutdown.begin('SIGTERM');
    expect(exits).toEqual([1]);
    expect(warns).toEqual([
      'shutting down now (a second SIGTERM): dropped 1 delivery: issue_comment dropped-1 (acme/shop#7); ' +
        "their epics' state is on GitHub, so the next event on each epic (or /resume) redoes what they left undone",
    ]);
    // The delivery ending later exits nothing more.
    release();
    await running;
    await queue.idle();
    await new Promise((resolve) => setImmediate(resolve));
    expect(exits).toEqual([1]);
  });
});
