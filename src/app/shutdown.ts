/**
 * Graceful shutdown of the App's process (`probot run`, a container's stop):
 * the first SIGTERM or SIGINT stops taking deliveries (they are answered 503,
 * so GitHub shows them failed and they can be redelivered) and waits for the
 * queued ones to finish, then exits 0. A second signal, or the deadline,
 * exits 1 at once and logs every delivery it dropped. Nothing is lost either
 * way: the state is on GitHub and every step is idempotent, so the next event
 * on an epic, or `/resume`, redoes what a dropped delivery left undone.
 */
import type { KeyedQueue } from './queue.js';

interface ShutdownLog {
  info(message: string): void;
  warn(message: string): void;
}

interface ShutdownOptions {
  readonly queue: KeyedQueue;
  /** How long the queued deliveries may take after the first signal. */
  readonly deadlineMs: number;
  readonly log: ShutdownLog;
  /** Ends the process (`process.exit` once the log is written). */
  readonly exit: (code: number) => void;
}

export interface Shutdown {
  /** True once a signal asked the process to stop. */
  stopping(): boolean;
  /** What the first signal does (exposed for the signal handler). */
  begin(signal: string): void;
}

function labels(queue: KeyedQueue): string {
  return queue
    .jobs()
    .map((j) => `${j.label}${j.startedAt === undefined ? ' (waiting)' : ''}`)
    .join(', ');
}

export function createShutdown(options: ShutdownOptions): Shutdown {
  const { queue, log, exit } = options;
  let stopping = false;
  let done = false;
  const finish = (code: number): void => {
    if (done) return;
    done = true;
    exit(code);
  };
  const drop = (why: string): void => {
    const jobs = queue.jobs();
    log.warn(
      `shutting down now (${why}): dropped ${jobs.length} ${jobs.length === 1 ? 'delivery' : 'deliveries'}: ` +
        `${labels(queue)}; their epics' state is on GitHub, so the next event on each epic ` +
        '(or /resume) redoes what they left undone',
    );
    finish(1);
  };
  const begin = (signal: string): void => {
    if (done) return;
    if (stopping) {
      drop(`a second ${signal}`);
      return;
    }
    stopping = true;
    const jobs = queue.jobs();
    if (jobs.length === 0) {
      log.info(`shutting down (${signal}): no delivery in progress`);
      finish(0);
      return;
    }
    log.info(
      `shutting down (${signal}): finishing ${jobs.length} ${jobs.length === 1 ? 'delivery' : 'deliveries'} ` +
        `(${labels(queue)}) within ${options.deadlineMs / 1000} s; a second signal stops at once`,
    );
    const deadline = setTimeout(
      () => drop(`EPICFLOW_SHUTDOWN_SECONDS (${options.deadlineMs / 1000} s) passed`),
      options.deadlineMs,
    );
    void queue.idle().then(() => {
      clearTimeout(deadline);
      if (done) return;
      log.info('shut down: every queued delivery was handled');
      finish(0);
    });
  };
  return { stopping: () => stopping, begin };
}
