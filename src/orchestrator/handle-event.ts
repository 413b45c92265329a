/**
 * The App's use case (PRODUCT §9): an event comes in, epicflow decides what the
 * epic needs from everything durable on GitHub, and applies it. Who may steer
 * is checked first, then the configuration and the plan; a bad configuration
 * or plan gets one comment and nothing else. A decision that fails for a reason
 * someone has to fix (a missing project or App permission) gets one comment too,
 * struck through once a command or an edit finds the epic going again.
 */
import type { GitHubRepo } from '../adapters/github/index.js';
import type { EpicView } from '../adapters/github/index.js';
import {
  CONFIG_PATH,
  GitHubStateStore,
  readEpicView,
  STATE_BRANCH,
} from '../adapters/github/index.js';
import { isTransient, lackingPermission } from '../adapters/github/errors.js';
import type { EpicflowConfig } from '../core/config/index.js';
import type { BodyPlanEdit, Command, DispatchedRun, Trigger } from '../core/epic/index.js';
import {
  epicOfStoryIssue,
  ERROR_MARKER,
  NOT_AN_EPIC_MARKER,
  renderErrorComment,
  renderNotAnEpic,
  renderResolvedError,
} from '../core/epic/error-comments.js';
import {
  checkStoryRun,
  decideSender,
  echoBlock,
  helpText,
  isBot,
  overdueDispatches,
  parseCommand,
  parseRunTitle,
  planDigest,
  reconcile,
  RUN_NAME_TEMPLATE,
  renderViolationsComment,
  validateCommand,
  VIOLATIONS_MARKER,
} from '../core/epic/index.js';
import { extractPlanBlocks, parsePlan, planOptionsFor } from '../core/plan/index.js';
import { describeError, EpicflowError, isEpicflowError } from '../core/errors.js';
import { epicBranchName } from '../core/model.js';
import { applyActions, type ApplyContext } from './apply.js';
import { ensureFullReport, fullReportUrl } from './full-report.js';
import { configFromText, loadConfig, loadPlan, rawEpicLabel, stateFromView } from './load.js';
import { withEpicLock } from './lock.js';
import { epicDocPatch } from '../core/epic/epic-doc.js';
import { updateEpicDoc } from './epic-doc.js';
import { epicDocOf, epicRepo, ownerClaim } from './owner.js';
import { dispatchedRuns, findRun, readRunOrigin } from './runs.js';
import type { EpicEvent, EventIssue, HandleResult, OrchestratorDeps } from './types.js';
import { DEFAULT_STORY_WORKFLOW } from './types.js';

/** Fresh decisions after a record changed under us, before giving up. */
const MAX_DECISIONS = 6;

const ignored = (reason: string, epic?: number): HandleResult => ({
  outcome: 'ignored',
  reason,
  dispatched: [],
  ...(epic === undefined ? {} : { epic }),
});

export async function handleEpicEvent(
  deps: OrchestratorDeps,
  event: EpicEvent,
): Promise<HandleResult> {
  const { repo } = deps;
  if (event.kind === 'workflow-run') return handleRun(deps, event);

  // Bots, epicflow included, are ignored before any request: two bots never talk forever.
  if (isBot(event.sender.type, event.sender.login, repo.botLogin)) return ignored('sent by a bot');
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
    await repo.reply(event.issue.number, decision.reply);
    return { outcome: 'replied', reason: 'no write permission', epic: epic.number, dispatched: [] };
  }

  if (configError !== undefined || config === undefined) {
    await repo.ensureComment({
      issueNumber: epic.number,
      marker: ERROR_MARKER,
      body: configComment(configError),
    });
    return { outcome: 'invalid-config', epic: epic.number, dispatched: [] };
  }

  const replyTo = event.kind === 'comment' ? event.issue.number : epic.number;
  if (command !== null && (command.kind === 'help' || command.kind === 'unknown')) {
    const check = command.kind === 'help' ? undefined : validateCommand(command, emptyPlan);
    await repo.reply(replyTo, check !== undefined && !check.ok ? check.error : helpText());
    return { outcome: 'replied', epic: epic.number, dispatched: [] };
  }
  const trigger = triggerOf(event, command, config);
  return decide(deps, { epic, config, trigger, replyTo, command });
}

/**
 * A story job finished: first, whether the run is one epicflow dispatched at all
 * (anyone who can start a run can give it a story's title); then its title names
 * the story (the workflow's `run-name`), or, for a run dispatched by an older
 * version, the run index does; then decide. A run that is not a story run is
 * ignored before anything is read or written.
 */
async function handleRun(
  deps: OrchestratorDeps,
  event: Extract<EpicEvent, { kind: 'workflow-run' }>,
): Promise<HandleResult> {
  const workflow = deps.storyWorkflow ?? DEFAULT_STORY_WORKFLOW;
  // Every other workflow's runs come here too (the App hears them all): dropped for free.
  if (event.workflowPath.split('/').pop() !== workflow) return ignored('not the story workflow');
  const defaultBranch = deps.defaultBranch ?? (await deps.repo.defaultBranch());
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
  const run = parseRunTitle(event.displayTitle) ?? (await findRun(deps.repo, event.runId));
  if (run === undefined) {
    const reason =
      `run ${event.runId} of ${event.workflowPath}, titled ${JSON.stringify(event.displayTitle)}, ` +
      `names no story: the story workflow needs the top-level line \`run-name: ${RUN_NAME_TEMPLATE}\``;
    deps.log?.warn(reason);
    return ignored(reason);
  }
  // One read for the issue, the configuration, the sub-issues and the epic's progress.
  const view = await readView(deps.repo, run.epic, defaultBranch);
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
    await deps.repo.ensureComment({
      issueNumber: epic.number,
      marker: ERROR_MARKER,
      body: configComment(e),
    });
    return { outcome: 'invalid-config', epic: epic.number, dispatched: [] };
  }
  const trigger: Trigger = {
    kind: 'workflow_run',
    story: run.story,
    attempt: run.attempt,
    conclusion: event.conclusion,
  };
  return decide(
    { ...deps, defaultBranch },
    { epic, config, trigger, replyTo: epic.number, command: null, view },
  );
}

function readView(repo: GitHubRepo, epic: number, defaultBranch: string): Promise<EpicView> {
  return readEpicView(repo, {
    stateBranch: STATE_BRANCH,
    folder: `epics/${epic}`,
    epicBranch: epicBranchName(String(epic)),
    baseBranch: defaultBranch,
    epic,
    configPath: CONFIG_PATH,
  });
}

interface Decision {
  readonly epic: EventIssue;
  readonly config: EpicflowConfig;
  readonly trigger: Trigger;
  readonly replyTo: number;
  readonly command: Command | null;
  /** What the caller already read; used by the first decision only (later ones read again). */
  readonly view?: EpicView;
}

/** Load, reconcile, apply — again from scratch whenever a record changed under us. */
async function decide(deps: OrchestratorDeps, d: Decision): Promise<HandleResult> {
  const { repo } = deps;
  const key = `${repo.fullName}#${d.epic.number}`;
  return withEpicLock(key, async () => {
    try {
      return await decideUntilSettled(deps, d);
    } catch (e) {
      await reportFailure(deps, d.epic.number, e);
      throw e;
    }
  });
}

async function decideUntilSettled(deps: OrchestratorDeps, d: Decision): Promise<HandleResult> {
  const dispatched: string[] = [];
  for (let round = 1; round <= MAX_DECISIONS; round++) {
    const { view: _read, ...fresh } = d;
    const result = await decideOnce(deps, round === 1 ? d : fresh);
    if (result === 'conflict') continue;
    if (result.outcome !== 'reconciled') return result;
    dispatched.push(...result.dispatched);
    return { ...result, dispatched };
  }
  throw new EpicflowError(
    'state',
    `GitHub state: the records of epic #${d.epic.number} in ${deps.repo.fullName} kept changing while epicflow decided; comment \`/resume\` to try again`,
  );
}

/**
 * A decision that failed for a reason someone has to fix gets one comment on the
 * epic, edited in place when it fails again (a redelivery adds nothing). A failure
 * GitHub may get over by itself (5xx, rate limits) or a bug is only logged by the
 * caller. When the comment cannot be written either (the App lacks Issues write),
 * that is logged too, once: nothing retries it.
 */
async function reportFailure(deps: OrchestratorDeps, epic: number, e: unknown): Promise<void> {
  if (!needsSomeone(e)) return;
  try {
    await deps.repo.ensureComment({
      issueNumber: epic,
      marker: ERROR_MARKER,
      body: renderErrorComment({ problem: describeError(e), permission: lackingPermission(e) }),
    });
  } catch (failure) {
    deps.log?.warn(
      `epic #${epic}: cannot comment on the issue why epicflow stopped: ${describeError(failure)}`,
    );
  }
}

/** GitHub refused something, a project or record is missing or wrong: a person can fix it. */
function needsSomeone(e: unknown): e is EpicflowError {
  const tagged =
    isEpicflowError(e, 'github') || isEpicflowError(e, 'config') || isEpicflowError(e, 'state');
  return tagged && !isTransient(e);
}

/**
 * The epic goes on: strike through the comment saying why it had stopped. Checked
 * on what people do (commands, edits), not on every finished job, so the common
 * decision costs no comment lookup; the comment asks for `/resume` anyway.
 */
async function clearProblem(deps: OrchestratorDeps, epic: number, trigger: Trigger): Promise<void> {
  if (trigger.kind === 'workflow_run' || trigger.kind === 'label') return;
  const resolved = renderResolvedError();
  try {
    const existing = await deps.repo.findComment(epic, ERROR_MARKER);
    if (existing === null || existing.body.startsWith(resolved)) return;
    await deps.repo.ensureComment({ issueNumber: epic, marker: ERROR_MARKER, body: resolved });
  } catch (e) {
    // The decision is applied; an outdated note is no reason to fail it.
    deps.log?.warn(`epic #${epic}: cannot mark the stop comment resolved: ${describeError(e)}`);
  }
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

async function decideOnce(deps: OrchestratorDeps, d: Decision): Promise<HandleResult | 'conflict'> {
  const epicNumber = d.epic.number;
  const defaultBranch = deps.defaultBranch ?? (await deps.repo.defaultBranch());
  // Records, the epic branch's head, the pull request and the sub-issues in one request.
  const view = d.view ?? (await readView(deps.repo, epicNumber, defaultBranch));
  const store = new GitHubStateStore({ repo: deps.repo, epic: String(epicNumber), defaultBranch });
  // The epic's sub-issues and comments are its owner's as much as ours (another login
  // may have opened it): found under either, created only when under neither.
  const doc = epicDocOf(store, view);
  const repo = epicRepo(deps.repo, doc);
  const planLoad = await loadPlan(
    repo,
    d.epic,
    d.config,
    view.issue === undefined ? undefined : { subIssues: view.issue.subIssues },
  );
  if (!planLoad.ok) {
    const { marker, body } = renderViolationsComment(planLoad.violations);
    await repo.ensureComment({ issueNumber: epicNumber, marker, body: stripMarker(body, marker) });
    return { outcome: 'invalid-plan', epic: epicNumber, dispatched: [] };
  }
  const { plan } = planLoad;
  if (d.command !== null) {
    const check = validateCommand(d.command, plan);
    if (!check.ok) {
      await repo.reply(d.replyTo, check.error);
      return { outcome: 'replied', epic: epicNumber, dispatched: [] };
    }
  }
  if (d.trigger.kind === 'edited') await clearViolations(repo, epicNumber);

  const branch = epicBranchName(String(epicNumber));
  // The merge walk reads only commits it has not seen.
  const state = stateFromView(store, plan, view);
  const merged = await repo.mergedStories(branch, { head: view.head });
  const pr = view.pr === undefined ? undefined : { number: view.pr.number, draft: view.pr.draft };
  const active = Object.values(state.records).filter((r) => r.status === 'active').length;
  const now = (deps.now?.() ?? new Date()).toISOString();
  const runs = await strandedRuns(deps, {
    epic: epicNumber,
    defaultBranch,
    records: state.records,
    now,
  });
  const reportUrl = fullReportUrl(repo.htmlUrl, epicNumber);
  const actions = reconcile({
    epic: { number: epicNumber, title: d.epic.title },
    plan,
    records: state.records,
    merged,
    config: d.config,
    freeCoderSlots: coderSlots(d.config) - active,
    halt: state.halt,
    approvedPlan: state.doc?.value.approvedPlan,
    approvedStories: state.doc?.value.approvedStories,
    dispatchedRuns: runs,
    subIssues: planLoad.subIssues,
    pr,
    now,
    trigger: d.trigger,
    fullReportUrl: reportUrl,
  });
  const ctx: ApplyContext = {
    repo,
    store,
    epic: epicNumber,
    defaultBranch,
    storyWorkflow: deps.storyWorkflow ?? DEFAULT_STORY_WORKFLOW,
    replyTo: d.replyTo,
    shas: { ...state.shas },
    subIssues: new Map(
      Object.entries(planLoad.subIssues).map(([id, s]) => [
        id,
        { number: s.number, nodeId: s.nodeId, state: s.state },
      ]),
    ),
    ...(planLoad.listed === undefined ? {} : { listedSubIssues: planLoad.listed }),
    title: d.epic.title,
    epicBranchMissing: view.head === null,
    prKnown: true,
    ...(view.pr?.draft === true ? { prNodeId: view.pr.nodeId } : {}),
    pr,
    board: d.config.board?.project,
  };
  // The epic document's changes, the owner's claim with them: one write (one request at the label).
  const patch = epicDocPatch(actions, {
    claim:
      actions.length === 0
        ? undefined
        : ownerClaim({ doc, login: repo.botLogin, trigger: d.trigger, records: state.records }),
    planHashes: plan.hashes,
  });
  if (patch !== undefined) await updateEpicDoc(store, state.doc ?? { value: {}, sha: null }, patch);
  const applied = await applyActions(ctx, actions);
  if (applied.ok) {
    await ensureFullReport({
      store,
      epic: { number: epicNumber, title: d.epic.title },
      plan,
      records: state.records,
      merged,
      halt: state.halt,
      actions,
      url: reportUrl,
      repoHtmlUrl: repo.htmlUrl,
      currentSha: state.reportSha ?? null,
      now,
    });
  }
  if (applied.dispatched.length > 0) {
    deps.log?.info(`epic #${epicNumber}: dispatched ${applied.dispatched.join(', ')}`);
  }
  if (!applied.ok) {
    deps.log?.info(`epic #${epicNumber}: a story record changed meanwhile; deciding again`);
    return 'conflict';
  }
  await clearProblem({ ...deps, repo }, epicNumber, d.trigger);
  return { outcome: 'reconciled', epic: epicNumber, dispatched: applied.dispatched };
}

/** The roster's coder slots; an empty roster (the Action decides executors) is unbounded. */
function coderSlots(config: EpicflowConfig): number {
  const coders = config.executors.filter((e) => e.roles.includes('coder'));
  if (coders.length === 0) return Infinity;
  return coders.reduce((sum, e) => sum + e.slots, 0);
}

/** The epic issue this event concerns, or undefined when it concerns none. */
async function epicOf(
  repo: GitHubRepo,
  event: Exclude<EpicEvent, { kind: 'workflow-run' }>,
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
    case 'comment': {
      if (!event.issue.isPullRequest) return isEpic(event.issue) ? event.issue : undefined;
      // A comment on the epic's pull request steers the epic its head branch names.
      const head = await repo.headOf(event.issue.number);
      const m = /^epic\/(\d+)$/.exec(head.ref);
      if (m === null || head.repository !== repo.fullName) return undefined;
      const epic = await repo.labelledIssue(Number(m[1]));
      return isEpic(epic) ? epic : undefined;
    }
  }
}

function triggerOf(
  event: Exclude<EpicEvent, { kind: 'workflow-run' }>,
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
      return { kind: 'resume', by };
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

/**
 * For the active records dispatched longer than the grace period ago, what the story
 * workflow's runs say (one listing; none when no record is that old). A listing that
 * fails leaves them unjudged: the decision goes on, and a later one looks again.
 */
async function strandedRuns(
  deps: OrchestratorDeps,
  input: {
    readonly epic: number;
    readonly defaultBranch: string;
    readonly records: Parameters<typeof overdueDispatches>[0];
    readonly now: string;
  },
): Promise<Record<string, DispatchedRun> | undefined> {
  const overdue = overdueDispatches(input.records, input.now);
  if (overdue.length === 0) return undefined;
  const workflow = deps.storyWorkflow ?? DEFAULT_STORY_WORKFLOW;
  try {
    return await dispatchedRuns(deps.repo, {
      epic: input.epic,
      overdue,
      workflow,
      source: {
        repository: { fullName: deps.repo.fullName },
        workflowPath: `.github/workflows/${workflow}`,
        defaultBranch: input.defaultBranch,
      },
    });
  } catch (e) {
    if (!isEpicflowError(e, 'github')) throw e;
    deps.log?.warn(
      `epic #${input.epic}: cannot list the story runs to check ${overdue.map((o) => o.story).join(', ')}: ${describeError(e)}`,
    );
    return undefined;
  }
}

const emptyPlan = { stories: [], waves: [], hashes: {} };

/** Characters of a configuration problem quoted (a huge file must not make the comment too long). */
const CONFIG_PROBLEM_MAX = 8_000;

function configComment(e: EpicflowError | undefined): string {
  const text = e === undefined ? 'the configuration could not be read' : describeError(e);
  return [
    '**epicflow cannot start: its configuration is not valid.** Nothing was created. Fix the file on the default branch, then edit this issue or comment `/resume`.',
    '',
    echoBlock(text, CONFIG_PROBLEM_MAX),
  ].join('\n');
}

function stripMarker(body: string, marker: string): string {
  return body.split(`<!-- epicflow:${marker} -->`).join('').trimEnd();
}

/** A fixed plan: say so in the violations comment, if one was written. */
async function clearViolations(repo: GitHubRepo, epic: number): Promise<void> {
  const existing = await repo.findComment(epic, VIOLATIONS_MARKER);
  if (existing === null) return;
  await repo.ensureComment({
    issueNumber: epic,
    marker: VIOLATIONS_MARKER,
    body: '~~The plan of this epic was not valid.~~ It is valid now.',
  });
}
