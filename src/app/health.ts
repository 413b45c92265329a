/**
 * `GET /healthz`: what a container's health check, a load balancer or an
 * orchestrator asks. Healthy means the App can do its work: it can sign a JWT
 * with its private key (so it can authenticate to GitHub at all), no delivery
 * has been running for longer than the stuck limit, and it is not shutting
 * down. It does not call GitHub: an outage there is not a reason to restart
 * the App, and a revoked key shows in the delivery logs instead.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { QueuedJob } from './queue.js';

const HEALTH_PATH = '/healthz';

interface HealthInput {
  /** Why no JWT could be signed with the App's private key; undefined when one was. */
  readonly signError: string | undefined;
  readonly jobs: readonly QueuedJob[];
  readonly stopping: boolean;
  readonly now: number;
  /** A delivery running for longer than this is stuck. */
  readonly stuckAfterMs: number;
}

interface HealthBody {
  readonly status: 'ok' | 'unhealthy' | 'stopping';
  readonly reason?: string;
  readonly deliveries: { readonly running: number; readonly waiting: number };
}

interface Health {
  readonly code: 200 | 503;
  readonly body: HealthBody;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The answer of `GET /healthz` for this state. */
export function health(input: HealthInput): Health {
  const running = input.jobs.filter((j) => j.startedAt !== undefined);
  const deliveries = { running: running.length, waiting: input.jobs.length - running.length };
  if (input.stopping) {
    const reason = `shutting down: ${plural(input.jobs.length, 'delivery')} left`;
    return { code: 503, body: { status: 'stopping', reason, deliveries } };
  }
  if (input.signError !== undefined) {
    const reason = `cannot sign a JWT with the App's private key (PRIVATE_KEY): ${input.signError}`;
    return { code: 503, body: { status: 'unhealthy', reason, deliveries } };
  }
  const oldest = running.reduce<QueuedJob | undefined>(
    (a, j) => (a === undefined || (j.startedAt ?? 0) < (a.startedAt ?? 0) ? j : a),
    undefined,
  );
  const runningMs = oldest === undefined ? 0 : input.now - (oldest.startedAt ?? input.now);
  if (oldest !== undefined && runningMs > input.stuckAfterMs) {
    const reason =
      `delivery ${oldest.label} has been running for ${Math.floor(runningMs / 1000)} s, ` +
      `longer than EPICFLOW_STUCK_SECONDS (${input.stuckAfterMs / 1000} s)`;
    return { code: 503, body: { status: 'unhealthy', reason, deliveries } };
  }
  return { code: 200, body: { status: 'ok', deliveries } };
}

/** A probot server handler answering `GET /healthz` (and `HEAD`) with `check()`'s verdict. */
export function healthHandler(
  check: () => Promise<Health>,
): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    if ((req.url ?? '').split('?')[0] !== HEALTH_PATH) return false;
    const { code, body } = await check();
    res.writeHead(code, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : `${JSON.stringify(body)}\n`);
    return true;
  };
}
