/**
 * The App's use case (PRODUCT §9): an event comes in, epicflow decides what the
 * epic needs from everything durable on GitHub, and applies it. Who may steer
 * is checked first, then the configuration and the plan; a bad configuration
 * or plan gets one comment and nothing else.
 */
import type { GitHubRepo } from '../adapters/github/index.js';
import type { EpicView } from '../adapters/github/index.js';
import {
  CONFIG_PATH,
  GitHubStateStore,
  readEpicView,
  STATE_BRANCH,
} from '../adapters/github/index.js';
import type { EpicflowConfig } from '../core/config/index.js';
import type { Command, Trigger } from '../core/epic/index.js';
import {
  decideSender,
  helpText,
  isBot,
  parseCommand,
  reconcile,
  renderViolationsComment,
  validateCommand,
  VIOLATIONS_MARKER,
} from '../core/epic/index.js';
import { describeError, EpicflowError, isEpicflowError } from '../core/errors.js';
import { epicBranchName } from '../core/model.js';
import { applyActions, type ApplyContext } from './apply.js';
import { ensureFullReport, fullReportUrl } from './full-report.js';
import { configFromText, loadConfig, loadPlan, rawEpicLabel, stateFromView } from './load.js';
import { withEpicLock } from './lock.js';
import { findRun } from './runs.js';
import type { EpicEvent, EventIssue, HandleResult, OrchestratorDeps } from './types.js';
import { DEFAULT_STORY_WORKFLOW } from './types.js';

/** Fresh decisions after a record changed under us, before giving up. */
const MAX_DECISIONS = 6;

const CONFIG_ERROR_MARKER = 'config-error';

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
  if (epic === undefined) return ignored('not an epic');

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
      marker: CONFIG_ERROR_MARKER,
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
  const trigger = triggerOf(event, command);
  return decide(deps, { epic, config, trigger, replyTo, command });
}

/** A story job finished: find its story by the run id, then decide. */
async function handleRun(
  deps: OrchestratorDeps,
  event: Extract<EpicEvent, { kind: 'workflow-run' }>,
): Promise<HandleResult> {
  const workflow = deps.storyWorkflow ?? DEFAULT_STORY_WORKFLOW;
  if (event.workflowPath.split('/').pop() !== workflow) return ignored('not the story workflow');
  const run = await findRun(deps.repo, event.runId);
  if (run === undefined) return ignored('not a run epicflow dispatched');
  // One read for the issue, the configuration, the sub-issues and the epic's progress.
  const defaultBranch = deps.defaultBranch ?? (await deps.repo.defaultBranch());
  const view = await readView(deps.repo, run.epic, defaultBranch);
  const epic =
    view.issue === undefined
      ? await readIssue(deps.repo, run.epic)
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
      marker: CONFIG_ERROR_MARKER,
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
      `GitHub state: the records of epic #${d.epic.number} in ${repo.fullName} kept changing while epicflow decided; comment \`/resume\` to try again`,
    );
  });
}

async function decideOnce(deps: OrchestratorDeps, d: Decision): Promise<HandleResult | 'conflict'> {
  const { repo } = deps;
  const epicNumber = d.epic.number;
  const defaultBranch = deps.defaultBranch ?? (await repo.defaultBranch());
  // Records, the epic branch's head, the pull request and the sub-issues in one request.
  const view = d.view ?? (await readView(repo, epicNumber, defaultBranch));
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

  const store = new GitHubStateStore({ repo, epic: String(epicNumber), defaultBranch });
  const branch = epicBranchName(String(epicNumber));
  // The merge walk reads only commits it has not seen.
  const state = stateFromView(store, plan, view);
  const merged = await repo.mergedStories(branch, { head: view.head });
  const pr = view.pr === undefined ? undefined : { number: view.pr.number, draft: view.pr.draft };
  const active = Object.values(state.records).filter((r) => r.status === 'active').length;
  const now = (deps.now?.() ?? new Date()).toISOString();
  const reportUrl = fullReportUrl(repo.htmlUrl, epicNumber);
  const actions = reconcile({
    epic: { number: epicNumber, title: d.epic.title },
    plan,
    records: state.records,
    merged,
    config: d.config,
    freeCoderSlots: coderSlots(d.config) - active,
    halt: state.halt,
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
      const parent = await readIssue(repo, event.parent);
      return isEpic(parent) ? parent : undefined;
    }
    case 'comment': {
      if (!event.issue.isPullRequest) return isEpic(event.issue) ? event.issue : undefined;
      // A comment on the epic's pull request steers the epic its head branch names.
      const { data } = await repo.octokit.rest.pulls.get({
        owner: repo.owner,
        repo: repo.repo,
        pull_number: event.issue.number,
      });
      const m = /^epic\/(\d+)$/.exec(data.head.ref);
      if (m === null || data.head.repo?.full_name !== repo.fullName) return undefined;
      const epic = await readIssue(repo, Number(m[1]));
      return isEpic(epic) ? epic : undefined;
    }
  }
}

/** An issue with its labels (the adapter's summary has none). */
async function readIssue(repo: GitHubRepo, number: number): Promise<EventIssue> {
  try {
    const { data } = await repo.octokit.rest.issues.get({
      owner: repo.owner,
      repo: repo.repo,
      issue_number: number,
    });
    return {
      number: data.number,
      title: data.title,
      body: data.body ?? '',
      labels: data.labels.map((l) => (typeof l === 'string' ? l : (l.name ?? ''))),
      isPullRequest: data.pull_request !== undefined,
    };
  } catch (e) {
    if (e instanceof EpicflowError) throw e;
    throw new EpicflowError('github', `GitHub: cannot read ${repo.fullName}#${number}`, {
      cause: e,
    });
  }
}

function triggerOf(
  event: Exclude<EpicEvent, { kind: 'workflow-run' }>,
  command: Command | null,
): Trigger {
  if (event.kind === 'labeled') return { kind: 'label' };
  if (event.kind !== 'comment' || command === null) return { kind: 'edited' };
  const by = event.sender.login;
  switch (command.kind) {
    case 'resume':
      return { kind: 'resume', by };
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

const emptyPlan = { stories: [], waves: [], hashes: {} };

function configComment(e: EpicflowError | undefined): string {
  const text = e === undefined ? 'the configuration could not be read' : describeError(e);
  return [
    '**epicflow cannot start: its configuration is not valid.** Nothing was created. Fix the file on the default branch, then edit this issue or comment `/resume`.',
    '',
    '```text',
    text.replace(/```/g, "'''"),
    '```',
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
