/**
 * The GitHub App in a process of its own, for benchmarks (started by `app-child.ts` with
 * `fork`): a real probot behind `createNodeMiddleware` on a loopback port, probot's
 * throttling and retry plugins on as in production, their waits relayed to the double's
 * clock in the parent. Told over IPC: when it starts and ends handling a delivery, when
 * its queue is idle, what it logged and how much memory it used.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createNodeMiddleware, Probot, ProbotOctokit, type Logger } from 'probot';
import { createEpicflowApp } from '../../src/app/index.js';
import { throttleOnClock, type ClockLike } from '../../test/github-double/throttle.js';
import type { ChildMessage, ParentMessage } from './app-child.js';

interface Setup {
  readonly url: string;
  readonly appId: number;
  readonly privateKey: string;
  readonly secret: string;
  readonly actor: string;
}

const setup = JSON.parse(process.env['EPICFLOW_BENCH_APP'] ?? '{}') as Setup;
const send = (m: ChildMessage): void => {
  process.send?.(m);
};

// The clock in the parent: how far it jumped ahead of real time comes with every answer.
let skipped = 0;
let nextId = 0;
const waiting = new Map<number, () => void>();
const ask = (m: { t: 'sleep'; ms: number } | { t: 'sleepUntil'; at: number } | { t: 'delivery' }) =>
  new Promise<void>((resolve) => {
    const id = ++nextId;
    waiting.set(id, resolve);
    send({ ...m, id } as ChildMessage);
  });
const clock: ClockLike = {
  now: () => Date.now() + skipped,
  sleep: (ms) => ask({ t: 'sleep', ms }),
  sleepUntil: (at) => ask({ t: 'sleepUntil', at }),
};

const errors: string[] = [];
let errorCount = 0;
const logger = pino(
  { level: 'info' },
  {
    write(line: string): void {
      const entry = JSON.parse(line) as { level: number; msg: string };
      if (entry.level >= 50) {
        errorCount += 1;
        if (errors.length < 5) errors.push(entry.msg);
      }
    },
  },
) as unknown as Logger;

let peakRss = 0;
let peakHeap = 0;
const sample = (): void => {
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss);
  peakHeap = Math.max(peakHeap, m.heapUsed);
};
setInterval(sample, 100).unref();

const probot = new Probot({
  appId: setup.appId,
  privateKey: setup.privateKey,
  secret: setup.secret,
  baseUrl: setup.url,
  log: logger,
  Octokit: ProbotOctokit.defaults((o: Record<string, unknown>) => ({
    ...o,
    throttle: throttleOnClock(clock, { actor: setup.actor }),
    // The retry plugin waits 1, 4 and 9 s of real time between attempts, which no clock can
    // skip: its attempts are made at once here (they are still counted).
    retry: { retryAfterBaseValue: 0 },
  })),
});
// The App waits out a rate limit on the same clock before it handles a delivery again.
const app = createEpicflowApp({ clock: { now: clock.now, sleep: (ms) => clock.sleep(ms) } });
const middleware = await createNodeMiddleware(app, { probot });

const reportState = (): void => send({ t: 'state', busy: app.busy() });
const server = createServer((req, res) => {
  void (async () => {
    // The parent counts the delivery as work from here, before the App answers it.
    await ask({ t: 'delivery' });
    res.on('close', () => {
      send({ t: 'delivered', busy: app.busy() });
      if (app.busy()) void app.idle().then(reportState, reportState);
    });
    await middleware(req, res, () => {
      res.statusCode = 404;
      res.end();
    });
  })();
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

process.on('message', (raw: ParentMessage) => {
  if ('skipped' in raw) skipped = raw.skipped;
  if (raw.t === 'reply') {
    const wake = waiting.get(raw.id);
    waiting.delete(raw.id);
    wake?.();
  } else if (raw.t === 'report') {
    sample();
    send({
      t: 'report',
      errors: errorCount,
      errorSamples: errors,
      peakRssMb: peakRss / 2 ** 20,
      peakHeapMb: peakHeap / 2 ** 20,
    });
  } else if (raw.t === 'stop') {
    server.close();
    server.closeAllConnections();
    process.disconnect?.();
  }
});
send({ t: 'ready', port: (server.address() as AddressInfo).port });
