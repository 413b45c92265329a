/**
 * The GitHub App: `probot run ./lib/app/index.js` (`npm start`, the container image), or
 * probot's own test and serverless setups, load this default export. Handlers only map
 * the webhook to the orchestrator's event and report the outcome in the log;
 * every decision lives in `handleEpicEvent`.
 *
 * Deliveries are answered as soon as they are verified and queued (GitHub gives up
 * after 10 s; a decision takes a few requests), and handled after, one at a time per
 * epic, epics side by side. State lives in GitHub and every step is idempotent, so a
 * process that dies mid-work loses nothing a later event or `/resume` does not redo.
 * Serverless hosts stop a function once it answered: there, `EPICFLOW_SYNC_WEBHOOKS=1`
 * answers only after the work is done.
 *
 * Around that: the App refuses to start with probot's public default webhook secret,
 * serves `GET /healthz` (see `health.ts`) and, as the process `probot run` starts,
 * finishes its queued deliveries on SIGTERM before it exits (see `shutdown.ts`).
 */
import { createHmac } from 'node:crypto';
import type { ApplicationFunctionOptions, Context, Probot } from 'probot';
import { GitHubCache, GitHubRepo } from '../adapters/github/index.js';
import { describeError, EpicflowError, isEpicflowError } from '../core/errors.js';
import { handleEpicEvent, toEpicEvent, type EpicEvent } from '../orchestrator/index.js';
import { health, healthHandler } from './health.js';
import { KeyedQueue } from './queue.js';
import { REAL_CLOCK, SelfRetries, type AppClock } from './retry.js';
import { createShutdown, type Shutdown } from './shutdown.js';

/** Delivery ids remembered: enough for a burst of redeliveries, small enough to forget. */
const SEEN_DELIVERIES = 1000;

export interface EpicflowAppOptions {
  /**
   * Answer each delivery only after handling it (serverless hosts, where nothing runs
   * after the answer). Default: the `EPICFLOW_SYNC_WEBHOOKS` environment variable
   * (`1` or `true`), read when probot loads the App.
   */
  readonly sync?: boolean;
  /**
   * The App owns its process (`probot run`): SIGTERM and SIGINT finish the queued
   * deliveries, then exit. The default export does; an App made here does not unless
   * asked, so embedding it (tests, another server) leaves the process's signals alone.
   */
  readonly ownProcess?: boolean;
  /** A delivery running longer is stuck (`/healthz` answers 503). Default: `EPICFLOW_STUCK_SECONDS`, else 600 s. */
  readonly stuckAfterMs?: number;
  /** How long a shutdown waits for queued deliveries. Default: `EPICFLOW_SHUTDOWN_SECONDS`, else 8 s. */
  readonly shutdownDeadlineMs?: number;
  /**
   * Time for waiting out a rate limit before handling a delivery again, and for the pause
   * before deciding again after a lost compare-and-swap (default: real time).
   */
  readonly clock?: AppClock;
}

/** The App function probot loads, with a handle on the work it still has queued. */
export interface EpicflowApp {
  (app: Probot, options?: Partial<ApplicationFunctionOptions>): Promise<void>;
  /** True while a delivery is still being handled. */
  busy(): boolean;
  /** Resolves once every accepted delivery has been handled (tests, graceful shutdown). */
  idle(): Promise<void>;
}

/** probot's built-in secret, used when `WEBHOOK_SECRET` is unset: public, so anyone could sign. */
const PROBOT_DEFAULT_SECRET = 'development';
const DEFAULT_STUCK_SECONDS = 600;
/** Below Docker's 10 s between SIGTERM and SIGKILL, so the drop is logged before a kill. */
const DEFAULT_SHUTDOWN_SECONDS = 8;

/** A duration in seconds from the environment, or the default; anything else refuses to start. */
function secondsFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback * 1000;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    throw new EpicflowError('config', `invalid ${name}: ${JSON.stringify(raw)}`, {
      details: ['expected a number of seconds greater than 0'],
    });
  }
  return n * 1000;
}

/**
 * Refuses probot's public default secret: with it anyone can sign deliveries, i.e. label
 * epics and post commands as anyone. Probot falls back to it when `WEBHOOK_SECRET` is
 * unset, so the secret actually in use is compared, by what it signs.
 */
async function checkWebhookSecret(app: Probot): Promise<void> {
  await app.ready();
  const probe = 'epicflow webhook secret probe';
  const publicSignature = `sha256=${createHmac('sha256', PROBOT_DEFAULT_SECRET).update(probe).digest('hex')}`;
  if ((await app.webhooks.sign(probe)) !== publicSignature) return;
  const unset = (process.env['WEBHOOK_SECRET'] ?? '') === '';
  throw new EpicflowError(
    'config',
    unset
      ? 'refusing to start: WEBHOOK_SECRET is not set, so probot would accept deliveries signed with its public default secret "development"'
      : 'refusing to start: the webhook secret is probot\'s public default "development"',
    {
      details: [
        'set WEBHOOK_SECRET to the webhook secret of your GitHub App (App settings → Webhook secret)',
      ],
    },
  );
}

/** Why the App's private key signs no JWT, or undefined when it signs one (no request is made). */
async function signError(app: Probot): Promise<string | undefined> {
  try {
    const octokit = await app.auth();
    await (octokit.auth as (o: { type: 'app' }) => Promise<unknown>)({ type: 'app' });
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** Lets the log line reach its output before the process ends (pino writes through a stream). */
function exitAfterLog(code: number): void {
  setTimeout(() => process.exit(code), 100);
}

export function createEpicflowApp(options: EpicflowAppOptions = {}): EpicflowApp {
  const queue = new KeyedQueue();
  const clock = options.clock ?? REAL_CLOCK;
  const retries = new SelfRetries(clock);
  // Merged stories and comment ids remembered across events (and installs:
  // content-addressed entries are the same everywhere, the others are keyed by repository).
  const cache = new GitHubCache();
  let shutdown: Shutdown | undefined;
  const fn = async (
    app: Probot,
    loadOptions?: Partial<ApplicationFunctionOptions>,
  ): Promise<void> => {
    try {
      const env = process.env['EPICFLOW_SYNC_WEBHOOKS'];
      const sync = options.sync ?? (env === '1' || env === 'true');
      const stuckAfterMs =
        options.stuckAfterMs ?? secondsFromEnv('EPICFLOW_STUCK_SECONDS', DEFAULT_STUCK_SECONDS);
      const deadlineMs =
        options.shutdownDeadlineMs ??
        secondsFromEnv('EPICFLOW_SHUTDOWN_SECONDS', DEFAULT_SHUTDOWN_SECONDS);
      // Handlers first, synchronously: probot and its test setups expect them at once.
      register(app, {
        queue,
        cache,
        sync,
        clock,
        retries,
        stopping: () => shutdown?.stopping() ?? false,
      });
      const check = async () =>
        health({
          signError: await signError(app),
          jobs: queue.jobs(),
          stopping: shutdown?.stopping() ?? false,
          now: Date.now(),
          stuckAfterMs,
        });
      addHandler(loadOptions, healthHandler(check));
      if (options.ownProcess === true && shutdown === undefined) {
        const own = createShutdown({
          queue,
          deadlineMs,
          log: { info: (m) => app.log.info(m), warn: (m) => app.log.warn(m) },
          exit: exitAfterLog,
        });
        shutdown = own;
        process.on('SIGTERM', () => own.begin('SIGTERM'));
        process.on('SIGINT', () => own.begin('SIGINT'));
      }
      await checkWebhookSecret(app);
    } catch (e) {
      app.log.fatal(describeError(e));
      if (options.ownProcess === true) {
        // `probot run` would print the rejection with a stack trace, or start listening if
        // loading went on: the process ends here, plainly, before it listens.
        exitAfterLog(1);
        return new Promise<never>(() => undefined);
      }
      throw e;
    }
  };
  const idle = async (): Promise<void> => {
    // A retry waiting out a rate limit queues its delivery when it wakes.
    do {
      await queue.idle();
      await retries.idle();
    } while (queue.busy() || retries.busy());
  };
  return Object.assign(fn, { busy: () => queue.busy() || retries.busy(), idle });
}

/**
 * Adds a route to probot's server. `probot.load` without a server offers an `addHandler`
 * that throws ("No server instance"): there is no HTTP server to serve it on, then.
 */
function addHandler(
  loadOptions: Partial<ApplicationFunctionOptions> | undefined,
  handler: Parameters<ApplicationFunctionOptions['addHandler']>[0],
): void {
  if (loadOptions?.addHandler === undefined) return;
  try {
    loadOptions.addHandler(handler);
  } catch (e) {
    if (!(e instanceof Error && e.message === 'No server instance')) throw e;
  }
}

interface Runtime {
  readonly queue: KeyedQueue;
  readonly cache: GitHubCache;
  readonly sync: boolean;
  readonly retries: SelfRetries;
  /** The App's time (waits after a lost compare-and-swap). */
  readonly clock: AppClock;
  /** True once the process is shutting down: new deliveries are refused. */
  readonly stopping: () => boolean;
}

/** Which deliveries wait for each other: those of one issue (an epic), in arrival order. */
function queueKey(context: Context, event: EpicEvent): string {
  const { owner, repo } = context.repo();
  switch (event.kind) {
    case 'workflow-run':
      // The run's epic is known only after a read; the orchestrator serialises per epic.
      return `${owner}/${repo}:run:${event.runId}`;
    case 'sub-issues':
      return `${owner}/${repo}#${event.parent}`;
    case 'review':
      // With the pull request's comments (`/revise`), which arrive under its number.
      return `${owner}/${repo}#${event.pr}`;
    case 'push':
      // Pushes wait for each other: a second one finds the first's landing running.
      return `${owner}/${repo}:push`;
    case 'pr-closed':
      return `${owner}/${repo}#${event.number}`;
    default:
      return `${owner}/${repo}#${event.issue.number}`;
  }
}

/** `issues.labeled`, `workflow_run.completed`: the event and its action, as GitHub names them. */
function eventName(context: Context): string {
  const action = (context.payload as { action?: unknown }).action;
  return typeof action === 'string' ? `${context.name}.${action}` : context.name;
}

function register(app: Probot, { queue, cache, sync, retries, clock, stopping }: Runtime): void {
  // A redelivery carries the same id. Handling is idempotent by state anyway; this only
  // spares the requests of deciding again (and joins a redelivery still in flight).
  const deliveries = new Map<string, Promise<void>>();

  // `<slug>[bot]`: our own login, read once per process with the App's JWT.
  let botLogin: Promise<string> | undefined;
  const readBotLogin = async (): Promise<string> => {
    const appOctokit = await app.auth();
    const { data } = await appOctokit.rest.apps.getAuthenticated();
    return `${data?.slug ?? 'epicflow'}[bot]`;
  };

  const accept = (context: Context, event: EpicEvent): Promise<void> => {
    const key = `${context.name}:${context.id}`;
    const seen = deliveries.get(key);
    if (seen !== undefined) return seen;
    const where = queueKey(context, event);
    const handled = queue.push(
      where,
      () => handle(context, event),
      `${context.name} ${context.id} (${where})`,
    );
    deliveries.set(key, handled);
    // A failed delivery may be redelivered to try again; forget it.
    handled.catch(() => deliveries.delete(key));
    if (deliveries.size > SEEN_DELIVERIES) {
      const oldest = deliveries.keys().next().value;
      if (oldest !== undefined) deliveries.delete(oldest);
    }
    return handled;
  };

  const run = async (context: Context, event: EpicEvent): Promise<void> => {
    if (stopping()) {
      // Answered 503: GitHub shows the delivery failed, and it can be redelivered.
      context.log.warn(`${context.name} ${context.id}: refused, shutting down`);
      throw Object.assign(new Error('epicflow is shutting down; redeliver this delivery'), {
        status: 503,
      });
    }
    const handled = accept(context, event);
    if (sync) return handled;
    // Answered now; a failure is logged by `handle` (and recovered by the next event).
    handled.catch(() => undefined);
  };

  const handle = async (context: Context, event: EpicEvent, attempt = 1): Promise<void> => {
    // Inside the `try`: a GitHub the App cannot reach or authenticate with (a wrong
    // GHE_HOST, a revoked key) fails the first request here, and must be logged too.
    try {
      botLogin ??= readBotLogin().catch((e: unknown) => {
        botLogin = undefined;
        throw e;
      });
      const payload = context.payload as { repository?: { default_branch?: string } };
      const github = GitHubRepo.ofDelivery(context, { botLogin: await botLogin, cache });
      const result = await handleEpicEvent(
        {
          repo: github,
          ...(payload.repository?.default_branch === undefined
            ? {}
            : { defaultBranch: payload.repository.default_branch }),
          log: { info: (m) => context.log.info(m), warn: (m) => context.log.warn(m) },
          sleep: (ms) => clock.sleep(ms),
        },
        event,
      );
      // One line per delivery, with the decision as fields (operators filter on them).
      context.log.info(
        {
          event: eventName(context),
          delivery: context.id,
          outcome: result.outcome,
          ...(result.reason === undefined ? {} : { reason: result.reason }),
          ...(result.epic === undefined ? {} : { epic: result.epic }),
        },
        `${context.name} ${context.id}: ${result.outcome}` +
          (result.reason === undefined ? '' : ` (${result.reason})`) +
          (result.epic === undefined ? '' : ` on epic #${result.epic}`),
      );
    } catch (e) {
      // A rate limit: the App handles the delivery again once it passed (retry.ts).
      const again = stopping()
        ? undefined
        : retries.schedule(e, attempt, () =>
            queue.push(
              queueKey(context, event),
              () => handle(context, event, attempt + 1),
              `${context.name} ${context.id} (retry ${attempt})`,
            ),
          );
      if (again !== undefined) {
        context.log.warn(
          { event: eventName(context), delivery: context.id, retryAt: again.toISOString() },
          `${context.name} ${context.id}: ${describeError(e)}; handled again at ${again.toISOString()}`,
        );
        throw e;
      }
      // Failures are logged readably; in sync mode the delivery is answered with an
      // error so it shows as failed on GitHub and can be redelivered (every step is
      // idempotent); otherwise the next event on the epic, or `/resume`, picks it up.
      // A failure someone has to fix (a permission, a missing project) is also
      // commented on the epic by the orchestrator; this log is for operators.
      context.log.error(
        {
          event: eventName(context),
          delivery: context.id,
          // The error's stable tag; `internal` for a bug of ours.
          tag: isEpicflowError(e) ? e.tag : 'internal',
        },
        `${context.name} ${context.id}: ${describeError(e)}`,
      );
      throw e;
    }
  };

  // One mapping of payloads for the App and the Action's orchestrate mode (`toEpicEvent`):
  // it keeps what trust decisions rest on (what an edit changed, where a run came from).
  const onEvent = async (context: Context): Promise<void> => {
    const event = toEpicEvent(context.name, context.payload);
    if (event !== null) await run(context, event);
  };
  app.on('issues.labeled', onEvent);
  app.on('issues.edited', onEvent);
  app.on('issue_comment.created', onEvent);
  app.on('workflow_run.completed', onEvent);
  app.on('sub_issues', onEvent);
  app.on('pull_request_review.submitted', onEvent);
  app.on('push', onEvent);
  app.on('pull_request.closed', onEvent);
}

/** The App as probot loads it (`probot run ./lib/app/index.js`): it owns the process. */
const epicflowApp: EpicflowApp = createEpicflowApp({ ownProcess: true });
export default epicflowApp;
