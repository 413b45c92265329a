/**
 * The GitHub use case, the App's and the Action's alike: an event comes in, epicflow
 * decides what the epic needs from everything durable on GitHub, and applies it.
 *
 * This is the intake: which events concern an epic at all (bots, commands, the
 * story workflow's runs), who may steer it, whether its configuration can be read,
 * and what triggered the decision; then `decide` (decide.ts) reconciles and applies.
 * A bad configuration or plan gets one comment and nothing else, and a decision
 * that fails for a reason someone has to fix gets one too (problems.ts).
 */
import type { GitHubRepo } from '../adapters/github/index.js';
import type { EpicflowConfig } from '../core/config/index.js';
import { renderNotAnEpic } from '../core/epic/error-comments.js';
import { epicOfStoryIssue, NOT_AN_EPIC_MARKER } from '../core/epic/markers.js';
import type { BodyPlanEdit, Command, Trigger } from '../core/epic/index.js';
import {
  checkStoryRun,
  decideSender,
  helpText,
  isBot,
  jobId,
  parseCommand,
  parseJobTitle,
  planDigest,
  RUN_NAME_TEMPLATE,
  validateCommand,
} from '../core/epic/index.js';
import { isEpicflowError, type EpicflowError } from '../core/errors.js';
import { extractPlanBlocks, parsePlan, planOptionsFor } from '../core/plan/index.js';
import { GitHubStateStore } from '../adapters/github/index.js';
import { decide } from './decide.js';
import { planningRunFinished } from './planning.js';
import { retroRunFinished } from './retro.js';
import { handlePullRequestClosed } from './after-pr.js';
import { handlePush, landRunCompleted } from './landing.js';
import { configFromText, loadConfig, rawEpicLabel, readView } from './load.js';
import { noteRateLimit } from './rate-limit.js';
import { commentInvalidConfig } from './problems.js';
import { readRunOrigin } from './runs.js';
import { reviewTrigger } from './review.js';
import { settle, type SettledDeps } from './settings.js';
import type { EpicEvent, EventIssue, HandleResult, OrchestratorDeps } from './types.js';

const ignored = (reason: string, epic?: number): HandleResult => ({
  outcome: 'ignored',
  reason,
  dispatched: [],
  ...(epic === undefined ? {} : { epic }),
});

export async function handleEpicEvent(
  given: OrchestratorDeps,
  event: EpicEvent,
): Promise<HandleResult> {
  // Every setting is defaulted here, once, for the whole handling of the event.
  const deps = settle(given);
  const { repo } = deps;
  if (event.kind === 'workflow-run') return handleRun(deps, event);
  // The default branch moved, or an epic's pull request closed (docs/landing.md).
  if (event.kind === 'push') return handlePush(deps, event);
  if (event.kind === 'pr-closed') return handlePullRequestClosed(deps, event);

  // Bots, epicflow included, are ignored before any request: two bots never talk forever.
  if (isBot(event.sender.type, event.sender.login, repo.botLogin)) return ignored('sent by a bot');
  // Only a review that requests changes starts a round by itself; others wait for `/revise`.
  if (event.kind === 'review' && event.state !== 'changes_requested') {
    return ignored(`a review that is ${event.state}, not changes_requested`);
  }
  let command: Command | null = null;
  if (event.kind === 'comment') {
    command = parseCommand(event.body);
    if (command === null) return ignored('not a command');
  }

  let config: EpicflowConfig | undefined;
  let configError: EpicflowError | undefined;
  try {
    config = await loadConfig(repo);
  } catch (e) {
    if (!isEpicflowError(e, 'config')) throw e;
    configError = e;
  }
  const label = config?.labels.epic ?? (await rawEpicLabel(repo));

  const epic = await epicOf(repo, event, label);
  if (epic === undefined) {
    if (event.kind !== 'comment' || command === null) return ignored('not an epic');
    return notAnEpic(repo, event, command, label);
  }

  const permission = await repo.permissionOf(event.sender.login);
  const decision = decideSender({
    senderType: event.sender.type,
    login: event.sender.login,
    botLogin: repo.botLogin,
    permission,
  });
  if (decision !== 'act') {
    if ('ignore' in decision) return ignored('sent by a bot', epic.number);
    // A label or an edit by someone without write permission is simply not acted on;
    // a command gets one short answer saying why.
    if (event.kind !== 'comment') return ignored('no write permission', epic.number);
    deps.log?.info(
      `epic #${epic.number}: /${command?.kind ?? ''} by ${event.sender.login} not acted on: no write permission`,
    );
    await repo.reply(event.issue.number, decision.reply);
    return { outcome: 'replied', reason: 'no write permission', epic: epic.number, dispatched: [] };
  }

  if (configError !== undefined || config === undefined) {
    await commentInvalidConfig(repo, epic.number, configError);
    return { outcome: 'invalid-config', epic: epic.number, dispatched: [] };
  }

  const replyTo =
    event.kind === 'comment'
      ? event.issue.number
      : event.kind === 'review'
        ? event.pr
        : epic.number;
  if (command !== null && (command.kind === 'help' || command.kind === 'unknown')) {
    const check = command.kind === 'help' ? undefined : validateCommand(command, emptyPlan);
    await repo.reply(replyTo, check !== undefined && !check.ok ? check.error : helpText());
    return { outcome: 'replied', epic: epic.number, dispatched: [] };
  }
  if (event.kind === 'review' || (event.kind === 'comment' && command?.kind === 'revise')) {
    const started = await startReview(deps, event, epic.number);
    if (started.trigger === undefined) {
      if (event.kind === 'review') return ignored(started.why, epic.number);
      return { outcome: 'replied', reason: started.why, epic: epic.number, dispatched: [] };
    }
    return decide(deps, { epic, config, trigger: started.trigger, replyTo, command: null });
  }
  const trigger = triggerOf(event, command, config);
  return decide(deps, { epic, config, trigger, replyTo, command, by: event.sender.login });
}

/**
 * A story job finished: first, whether the run is one epicflow dispatched at all
 * (anyone who can start a run can give it a story's title); then its title names
 * the story (the workflow's `run-name`); then decide. A run that is not a story
 * run is ignored before anything is read or written.
 */
async function handleRun(
  deps: SettledDeps,
  event: Extract<EpicEvent, { kind: 'workflow-run' }>,
): Promise<HandleResult> {
  const workflow = deps.storyWorkflow;
  // Every other workflow's runs come here too (the App hears them all): dropped for free.
  if (event.workflowPath.split('/').pop() !== workflow) return ignored('not the story workflow');
  const defaultBranch = await deps.defaultBranch();
  const origin = event.origin ?? (await readRunOrigin(deps.repo, event.runId));
  const check = checkStoryRun(origin, {
    repository: { fullName: deps.repo.fullName, id: event.repositoryId },
    workflowPath: `.github/workflows/${workflow}`,
    defaultBranch,
  });
  if (!check.ok) {
    const reason =
      `run ${event.runId} titled ${JSON.stringify(event.displayTitle.slice(0, 200))} is not a story run ` +
      `epicflow dispatched: ${check.reason}`;
    deps.log?.warn(reason);
    return ignored(reason);
  }
  const run = parseJobTitle(event.displayTitle);
  if (run === null) {
    const reason =
      `run ${event.runId} of ${event.workflowPath}, titled ${JSON.stringify(event.displayTitle)}, ` +
      `names no story: the story workflow needs the top-level line \`run-name: ${RUN_NAME_TEMPLATE}\``;
    deps.log?.warn(reason);
    return ignored(reason);
  }
  if (run.kind === 'plan') {
    const view = await readView(deps.repo, run.epic, defaultBranch);
    const store = new GitHubStateStore({
      repo: deps.repo,
      epic: String(run.epic),
      defaultBranch,
    });
    return planningRunFinished({
      repo: deps.repo,
      store,
      view,
      epic: run.epic,
      attempt: run.attempt,
      conclusion: event.conclusion,
      now: deps.now().toISOString(),
    });
  }
  if (run.kind === 'retro') {
    const store = new GitHubStateStore({
      repo: deps.repo,
      epic: String(run.epic),
      defaultBranch,
    });
    return retroRunFinished({
      repo: deps.repo,
      store,
      epic: run.epic,
      attempt: run.attempt,
      conclusion: event.conclusion,
    });
  }
  // One read for the issue, the configuration, the sub-issues and the epic's progress.
  const view = await readView(deps.repo, run.epic, defaultBranch).catch(async (e: unknown) => {
    await noteRateLimit(deps, run.epic, e);
    throw e;
  });
  const epic =
    view.issue === undefined
      ? await deps.repo.labelledIssue(run.epic)
      : {
          number: view.issue.number,
          title: view.issue.title,
          body: view.issue.body,
          labels: view.issue.labels,
          isPullRequest: false,
        };
  let config: EpicflowConfig;
  try {
    config = configFromText(view.configText);
  } catch (e) {
    if (!isEpicflowError(e, 'config')) throw e;
    await commentInvalidConfig(deps.repo, epic.number, e);
    return { outcome: 'invalid-config', epic: epic.number, dispatched: [] };
  }
  const landRun = run.kind === 'land';
  if (landRun) {
    // A landing's run: a record it left running holds the epic; a queued landing starts.
    await landRunCompleted(deps, {
      epic: epic.number,
      job: run.job,
      conclusion: event.conclusion,
      defaultBranch,
    });
  }
  const trigger: Trigger = {
    kind: 'workflow_run',
    story: jobId(run),
    attempt: run.attempt,
    conclusion: event.conclusion,
  };
  return decide(
    deps,
    // After a landing's run the view is read again: its end may have held the epic.
    { epic, config, trigger, replyTo: epic.number, command: null, ...(landRun ? {} : { view }) },
  );
}

/**
 * An epicflow command on an issue or pull request that is not an epic: one answer
 * per issue (a marked comment, so repeating the command adds nothing), to people who
 * may steer only; `/help` is answered each time. Unknown commands may be meant for
 * another bot: no answer.
 */
async function notAnEpic(
  repo: GitHubRepo,
  event: Extract<EpicEvent, { kind: 'comment' }>,
  command: Command,
  label: string,
): Promise<HandleResult> {
  if (command.kind === 'unknown') return ignored('not an epic');
  const decision = decideSender({
    senderType: event.sender.type,
    login: event.sender.login,
    botLogin: repo.botLogin,
    permission: await repo.permissionOf(event.sender.login),
  });
  if (decision !== 'act') return ignored('not an epic');
  const body = renderNotAnEpic({
    isPullRequest: event.issue.isPullRequest,
    label,
    storyOf: event.issue.isPullRequest ? undefined : epicOfStoryIssue(event.issue.body),
    help: command.kind === 'help',
  });
  const issueNumber = event.issue.number;
  if (command.kind === 'help') await repo.reply(issueNumber, body);
  else await repo.ensureComment({ issueNumber, marker: NOT_AN_EPIC_MARKER, body });
  return { outcome: 'replied', reason: 'not an epic', dispatched: [] };
}

/** The epic issue this event concerns, or undefined when it concerns none. */
async function epicOf(
  repo: GitHubRepo,
  event: Exclude<EpicEvent, { kind: 'workflow-run' | 'push' | 'pr-closed' }>,
  label: string,
): Promise<EventIssue | undefined> {
  const isEpic = (i: EventIssue): boolean => !i.isPullRequest && i.labels.includes(label);
  switch (event.kind) {
    case 'labeled':
      return event.label === label && !event.issue.isPullRequest ? event.issue : undefined;
    case 'edited':
      return isEpic(event.issue) ? event.issue : undefined;
    case 'sub-issues': {
      const parent = await repo.labelledIssue(event.parent);
      return isEpic(parent) ? parent : undefined;
    }
    case 'review':
    case 'comment': {
      if (event.kind === 'comment' && !event.issue.isPullRequest) {
        return isEpic(event.issue) ? event.issue : undefined;
      }
      // A comment on the epic's pull request steers the epic its head branch names.
      const head = event.kind === 'review' ? event.head : await repo.headOf(event.issue.number);
      const m = /^epic\/(\d+)$/.exec(head.ref);
      if (m === null || head.repository !== repo.fullName) return undefined;
      const epic = await repo.labelledIssue(Number(m[1]));
      return isEpic(epic) ? epic : undefined;
    }
  }
}

/**
 * The `review` trigger of a review requesting changes, or of `/revise` (on the pull
 * request or the epic issue): the open pull request's comments, listed now. A closed
 * pull request starts nothing; `/revise` there is answered.
 */
async function startReview(
  deps: SettledDeps,
  event: Extract<EpicEvent, { kind: 'review' | 'comment' }>,
  epic: number,
): Promise<{ trigger: Trigger; why?: undefined } | { trigger?: undefined; why: string }> {
  const { repo } = deps;
  let pr: number | undefined;
  if (event.kind === 'review') {
    if (!event.open) return { why: 'a review of a closed pull request' };
    pr = event.pr;
  } else {
    const defaultBranch = await deps.defaultBranch();
    const open = await repo.findOpenPr(`epic/${epic}`, defaultBranch);
    if (open === null || (event.issue.isPullRequest && open.number !== event.issue.number)) {
      await repo.reply(
        event.issue.number,
        `\`/revise\`: epic #${epic} has no open pull request to take review comments from.`,
      );
      return { why: 'no open pull request' };
    }
    pr = open.number;
  }
  return { trigger: await reviewTrigger(repo, pr, event.sender.login) };
}

function triggerOf(
  event: Exclude<EpicEvent, { kind: 'workflow-run' | 'push' | 'pr-closed' }>,
  command: Command | null,
  config: EpicflowConfig,
): Trigger {
  if (event.kind === 'labeled') return { kind: 'label' };
  if (event.kind === 'edited') {
    return { kind: 'edited', bodyPlan: bodyPlanEdit(event.previousBody, event.issue.body, config) };
  }
  // A sub-issue added or removed: the plan may have changed, but not by an edit of its text.
  if (event.kind !== 'comment' || command === null) return { kind: 'edited', bodyPlan: null };
  const by = event.sender.login;
  switch (command.kind) {
    case 'resume':
      return command.deferred === true ? { kind: 'deferred', by } : { kind: 'resume', by };
    case 'approve':
      return { kind: 'approve', by };
    case 'cancel':
      return { kind: 'cancel', by };
    case 'retry':
      return { kind: 'retry', story: command.story ?? '', by };
    case 'skip':
      return { kind: 'skip', story: command.story ?? '', by };
    default:
      return { kind: 'status' };
  }
}

/**
 * What an edit did to the plan in the issue body, from the body before and after it;
 * null when the edit left the body alone (or the event did not say what it was).
 */
function bodyPlanEdit(
  before: string | undefined,
  after: string,
  config: EpicflowConfig,
): BodyPlanEdit | null {
  if (before === undefined) return null;
  const digest = (body: string): string | null => {
    if (extractPlanBlocks(body).length === 0) return null;
    const parsed = parsePlan(body, planOptionsFor(config));
    return parsed.ok ? planDigest(parsed.plan) : null;
  };
  return { before: digest(before), after: digest(after) };
}

const emptyPlan = { stories: [], waves: [], hashes: {} };
