/**
 * The GitHub App (PRODUCT §9.5): `probot run ./lib/app/index.js`, or probot's
 * own test and serverless setups, load this default export. Handlers only map
 * the webhook to the orchestrator's event and report the outcome in the log;
 * every decision lives in `handleEpicEvent`.
 *
 * Deliveries are answered as soon as they are verified and queued (GitHub gives
 * up after 10 s; a decision takes a few requests), and handled after, one at a
 * time per epic, epics side by side. State lives in GitHub and every step is
 * idempotent, so a process that dies mid-work loses nothing a later event or
 * `/resume` does not redo. Serverless hosts stop a function once it answered:
 * there, `EPICFLOW_SYNC_WEBHOOKS=1` answers only after the work is done.
 */
import type { Context, Probot } from 'probot';
import { GitHubCache, GitHubRepo, type GitHubClient } from '../adapters/github/index.js';
import { describeError, isEpicflowError } from '../core/errors.js';
import { handleEpicEvent, type EpicEvent, type EventIssue } from '../orchestrator/index.js';
import { KeyedQueue } from './queue.js';

interface PayloadIssue {
  readonly number: number;
  readonly title: string;
  readonly body?: string | null;
  readonly labels?: readonly ({ readonly name?: string } | string)[];
  readonly pull_request?: unknown;
}

function eventIssue(issue: PayloadIssue): EventIssue {
  return {
    number: issue.number,
    title: issue.title,
    body: issue.body ?? '',
    labels: (issue.labels ?? []).map((l) => (typeof l === 'string' ? l : (l.name ?? ''))),
    isPullRequest: issue.pull_request !== undefined && issue.pull_request !== null,
  };
}

/** Delivery ids remembered: enough for a burst of redeliveries, small enough to forget. */
const SEEN_DELIVERIES = 1000;

export interface EpicflowAppOptions {
  /**
   * Answer each delivery only after handling it (serverless hosts, where nothing runs
   * after the answer). Default: the `EPICFLOW_SYNC_WEBHOOKS` environment variable
   * (`1` or `true`), read when probot loads the App.
   */
  readonly sync?: boolean;
}

/** The App function probot loads, with a handle on the work it still has queued. */
export interface EpicflowApp {
  (app: Probot): void;
  /** True while a delivery is still being handled. */
  busy(): boolean;
  /** Resolves once every accepted delivery has been handled (tests, graceful shutdown). */
  idle(): Promise<void>;
}

export function createEpicflowApp(options: EpicflowAppOptions = {}): EpicflowApp {
  const queue = new KeyedQueue();
  // Blobs, trees, merged commits and comment ids remembered across events (and installs:
  // content-addressed entries are the same everywhere, the others are keyed by repository).
  const cache = new GitHubCache();
  const fn = (app: Probot): void => {
    const env = process.env['EPICFLOW_SYNC_WEBHOOKS'];
    const sync = options.sync ?? (env === '1' || env === 'true');
    register(app, { queue, cache, sync });
  };
  return Object.assign(fn, { busy: () => queue.busy(), idle: () => queue.idle() });
}

interface Runtime {
  readonly queue: KeyedQueue;
  readonly cache: GitHubCache;
  readonly sync: boolean;
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
    default:
      return `${owner}/${repo}#${event.issue.number}`;
  }
}

/** `issues.labeled`, `workflow_run.completed`: the event and its action, as GitHub names them. */
function eventName(context: Context): string {
  const action = (context.payload as { action?: unknown }).action;
  return typeof action === 'string' ? `${context.name}.${action}` : context.name;
}

function register(app: Probot, { queue, cache, sync }: Runtime): void {
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
    const handled = queue.push(queueKey(context, event), () => handle(context, event));
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
    const handled = accept(context, event);
    if (sync) return handled;
    // Answered now; a failure is logged by `handle` (and recovered by the next event).
    handled.catch(() => undefined);
  };

  const handle = async (context: Context, event: EpicEvent): Promise<void> => {
    // Inside the `try`: a GitHub the App cannot reach or authenticate with (a wrong
    // GHE_HOST, a revoked key) fails the first request here, and must be logged too.
    try {
      botLogin ??= readBotLogin().catch((e: unknown) => {
        botLogin = undefined;
        throw e;
      });
      const payload = context.payload as { repository?: { default_branch?: string } };
      const { owner, repo } = context.repo();
      const github = new GitHubRepo({
        owner,
        repo,
        botLogin: await botLogin,
        octokit: context.octokit as unknown as GitHubClient,
        cache,
      });
      const result = await handleEpicEvent(
        {
          repo: github,
          ...(payload.repository?.default_branch === undefined
            ? {}
            : { defaultBranch: payload.repository.default_branch }),
          log: { info: (m) => context.log.info(m), warn: (m) => context.log.warn(m) },
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

  app.on('issues.labeled', async (context) => {
    const { issue, label, sender } = context.payload;
    await run(context, {
      kind: 'labeled',
      issue: eventIssue(issue),
      label: label?.name ?? '',
      sender: { login: sender.login, type: sender.type },
    });
  });

  app.on('issues.edited', async (context) => {
    const { issue, sender } = context.payload;
    await run(context, {
      kind: 'edited',
      issue: eventIssue(issue),
      sender: { login: sender.login, type: sender.type },
    });
  });

  app.on('issue_comment.created', async (context) => {
    const { issue, comment, sender } = context.payload;
    await run(context, {
      kind: 'comment',
      issue: eventIssue(issue),
      body: comment.body,
      sender: { login: sender.login, type: sender.type },
    });
  });

  app.on('workflow_run.completed', async (context) => {
    const { workflow_run: wr } = context.payload;
    await run(context, {
      kind: 'workflow-run',
      runId: wr.id,
      workflowPath: wr.path,
      // Optional in the webhook schema (older servers omit it): no title names no story.
      displayTitle: wr.display_title ?? '',
      conclusion: wr.conclusion ?? 'unknown',
    });
  });

  app.on('sub_issues', async (context) => {
    const payload = context.payload as {
      parent_issue?: { number: number };
      sender: { login: string; type: string };
    };
    if (payload.parent_issue === undefined) return;
    await run(context, {
      kind: 'sub-issues',
      parent: payload.parent_issue.number,
      sender: { login: payload.sender.login, type: payload.sender.type },
    });
  });
}

/** The App as probot loads it (`probot run ./lib/app/index.js`). */
const epicflowApp: EpicflowApp = createEpicflowApp();
export default epicflowApp;
