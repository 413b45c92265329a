/**
 * Starts the GitHub App in a process of its own (`app-process.ts`) against a GitHub double,
 * and relays between them: the App's waits become sleeps on the double's clock, and the
 * App's work (deliveries being handled, its queue) is what `gh.idle()` and the clock's
 * `track` see. In a process of its own the App has its own memory, its own throttling
 * limiters and its own per-epic lock, as a deployed App has.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { BackgroundWork, GitHubDouble } from '../../test/github-double/index.js';

export type ChildMessage =
  | { t: 'ready'; port: number }
  | { t: 'sleep'; id: number; ms: number }
  | { t: 'sleepUntil'; id: number; at: number }
  | { t: 'delivery'; id: number }
  | { t: 'delivered'; busy: boolean }
  | { t: 'state'; busy: boolean }
  | {
      t: 'report';
      errors: number;
      errorSamples: string[];
      peakRssMb: number;
      peakHeapMb: number;
    };

export type ParentMessage =
  | { t: 'reply'; id: number; skipped: number }
  | { t: 'report'; skipped: number }
  | { t: 'stop'; skipped: number };

export interface AppReport {
  readonly errors: number;
  readonly errorSamples: readonly string[];
  readonly peakRssMb: number;
  readonly peakHeapMb: number;
}

export interface AppProcess {
  /** The App's webhook URL. */
  readonly url: string;
  /** Deliveries being handled or queued in the App (for `gh.waitFor` and `gh.clock.track`). */
  readonly work: BackgroundWork;
  report(): Promise<AppReport>;
  stop(): Promise<void>;
}

export async function startAppProcess(
  gh: GitHubDouble,
  setup: { appId: number; privateKey: string; secret: string; actor: string },
): Promise<AppProcess> {
  const child: ChildProcess = fork(new URL('./app-process.ts', import.meta.url).pathname, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, EPICFLOW_BENCH_APP: JSON.stringify({ url: gh.url, ...setup }) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const tell = (m: ParentMessage): void => {
    if (child.connected) child.send(m);
  };
  const reply = (id: number): void => tell({ t: 'reply', id, skipped: gh.clock.skippedMs });
  let pending = 0;
  let childBusy = false;
  let idleWaiters: (() => void)[] = [];
  const busy = (): boolean => pending > 0 || childBusy;
  const settle = (): void => {
    if (busy()) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const w of waiters) w();
  };
  let report: ((r: AppReport) => void) | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the App process exited (${code})`)));
    child.on('message', (m: ChildMessage) => {
      switch (m.t) {
        case 'ready':
          resolve(m.port);
          break;
        case 'sleep':
          void gh.clock.sleep(m.ms, setup.actor).then(() => reply(m.id));
          break;
        case 'sleepUntil':
          void gh.clock.sleepUntil(m.at, setup.actor).then(() => reply(m.id));
          break;
        case 'delivery':
          pending += 1;
          reply(m.id);
          break;
        case 'delivered':
          pending -= 1;
          childBusy = m.busy;
          settle();
          break;
        case 'state':
          childBusy = m.busy;
          settle();
          break;
        case 'report':
          report?.(m);
          break;
      }
    });
  });
  return {
    url: `http://127.0.0.1:${port}/api/github/webhooks`,
    work: {
      busy,
      idle: () =>
        busy() ? new Promise<void>((resolve) => idleWaiters.push(resolve)) : Promise.resolve(),
    },
    report: () =>
      new Promise<AppReport>((resolve) => {
        report = resolve;
        tell({ t: 'report', skipped: gh.clock.skippedMs });
      }),
    stop: async () => {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      tell({ t: 'stop', skipped: gh.clock.skippedMs });
      const timer = setTimeout(() => child.kill(), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
