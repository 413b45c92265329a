/**
 * `npm start` as a user runs it: probot's own CLI (`probot run <entry>`) in its own
 * process, configured only by probot's environment variables (PRODUCT §9.5), talking to
 * a GitHub Enterprise host (`GHE_HOST`, `GHE_PROTOCOL`) played by the GitHub double.
 *
 * The entry is the one `npm start` names, taken from its TypeScript source (a test must
 * not build into `lib/`): probot imports it through tsx's loader, the way it imports the
 * built file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
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
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sign } from '@octokit/webhooks-methods';
import { startGitHubDouble, type GitHubDouble } from '../github-double/index.js';
import { OWNER, REPO } from './harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
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

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** The entry `npm start` runs, and the package export `epicflow/app`, as TypeScript source. */
async function startEntry(): Promise<string> {
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
  return source;
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

let pem: string;
let appId: number;
/** Every probot started, stopped in `afterAll` should a test end before it stops one. */
const processes: ProbotProcess[] = [];

/** `npm start`'s command, with only what a deployment sets in its environment. */
async function startProbot(listenOn: number, key = pem): Promise<ProbotProcess> {
  const entry = await startEntry();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    APP_ID: String(appId),
    PRIVATE_KEY: key,
    WEBHOOK_SECRET: SECRET,
    PORT: String(listenOn),
    HOST: '127.0.0.1',
    GHE_HOST: ghe.host,
    GHE_PROTOCOL: 'http',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'info',
  };
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'node_modules/probot/bin/probot.js', 'run', entry],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const started = new ProbotProcess(child);
  processes.push(started);
  await started.waitForLog('Listening on ');
  return started;
}

beforeAll(async () => {
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
});

afterAll(async () => {
  for (const p of processes) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await p.exited;
  }
  await new Promise((resolve) => ghe.server.close(resolve));
  await gh.close();
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
