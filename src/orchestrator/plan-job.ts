/**
 * One planning attempt in one Actions job (docs/planning.md): the job checkout
 * is the default branch; the planner runs on a read-only worktree of it, as the
 * job's untrusted user, with no credential in reach (the checkout's are scrubbed
 * first). Everything is read from GitHub by id and checked before the planner
 * runs: the attempt must be the one the planning record names, still active.
 * The outcome is written to the planning record (compare-and-swap on what the
 * job read: a newer attempt wins), then — for a valid plan — the plan section
 * is ensured in the issue body below the author's text; a plan still refused
 * after the repair rounds holds the epic with its violations listed. Then the
 * epic is decided again, so its status comment says what the planner proposed.
 */
import { join } from 'node:path';
import { GitHubStateStore, type GitHubRepo } from '../adapters/github/index.js';
import { resolveExecutorEnvs } from '../composition/epic.js';
import { requirePlanner } from '../core/config/index.js';
import type { EpicflowConfig } from '../core/config/types.js';
import {
  hasMarker,
  jobStaleness,
  ownsRecord,
  planDigest,
  storyMarker,
  type PlanJobRef,
} from '../core/epic/index.js';
import { ERROR_MARKER, notPlannedMarker, VIOLATIONS_MARKER } from '../core/epic/markers.js';
import {
  PLANNING_DOC,
  renderPlanningFailed,
  renderNotPlanned,
  renderPlanningInvalid,
  storyIssueBody,
  withoutPlanBlock,
  type PlanningDoc,
} from '../core/epic/planning.js';
import { EpicflowError } from '../core/errors.js';
import type { Plan } from '../core/model.js';
import {
  extractPlanBlocks,
  parsePlan,
  planOptionsFor,
  readBackAsWritten,
} from '../core/plan/index.js';
import {
  proseOf,
  outgrownText,
  refinePrefix,
  renderPlanSection,
  splitPlanSection,
  withPlanSection,
} from '../core/planner/index.js';
import { GITHUB_BODY_MAX } from '../core/report/index.js';
import { emptyRosterState } from '../core/roster/index.js';
import { planEpic, plannerRoster, type PlanningOutcome } from '../engine/plan-epic.js';
import { mergeUsage } from '../engine/usage.js';
import { decide } from './decide.js';
import { settle } from './settings.js';
import { openCheckout, openJob, type CheckoutJobInput } from './job-shell.js';
import { loadPlan, stateFromView } from './load.js';
import { ensurePlanningEnded, readPlanning } from './planning.js';
import { clearViolations } from './problems.js';

/** The job checkout is the default branch; the planner runs as `untrusted`. */
export interface PlanJobInput extends CheckoutJobInput {
  /** The story workflow (the planning job's own), for the decision after it. */
  readonly storyWorkflow?: string | undefined;
}

/** Everything read and checked before the planner runs. */
export interface PreparedPlanning {
  readonly config: EpicflowConfig;
  readonly store: GitHubStateStore;
  readonly doc: PlanningDoc;
  readonly docSha: string;
  readonly issue: { readonly number: number; readonly title: string; readonly body: string };
  readonly labels: readonly string[];
  readonly previous: Plan | undefined;
  /** Stories of `previous` already merged (a refine round tells the planner). */
  readonly merged: readonly string[];
  readonly defaultBranch: string;
}

export interface PlanJobResult {
  readonly outcome: PlanningOutcome;
  /** The planning record as written at the end. */
  readonly doc: PlanningDoc;
  /** What became of the issue body: the section written, already there, or not touched. */
  readonly body: 'updated' | 'unchanged' | 'untouched';
  /** Set when a newer attempt took over while this one ran: nothing was written. */
  readonly superseded?: boolean;
}

/** Reads the configuration, the issue and the planning record; refuses clearly on any mismatch. */
export async function preparePlanJob(input: PlanJobInput): Promise<PreparedPlanning> {
  const { repo, epic } = input;
  const opened = await openJob(input);
  const { config, view, store, issue, defaultBranch } = opened;
  requirePlanner(config, input.configPath);
  const read = readPlanning(store, view);
  const doc = read.doc;
  const stale = jobStaleness(
    { kind: 'plan', epic, attempt: input.attempt },
    { kind: 'plan', record: read.sha === null ? undefined : doc },
  );
  if (stale !== undefined) throw stale;
  if (doc === undefined || read.sha === null) {
    throw new EpicflowError(
      'internal',
      `planning of epic #${epic} passed the staleness check without a record`,
    );
  }
  const body = issue.body;
  if (extractPlanBlocks(proseOf(body)).length > 0) {
    throw new EpicflowError('plan', `epic #${epic} holds a plan written outside the plan section`, {
      details: ['the planner drafts plans for issues without one: edit the plan instead'],
    });
  }
  const options = planOptionsFor(config, input.configPath);
  const section = splitPlanSection(body).section;
  const parsed = section === undefined ? undefined : parsePlan(section, options);
  let previous = parsed?.ok === true ? parsed.plan : undefined;
  if (section !== undefined && previous === undefined && extractPlanBlocks(section).length === 0) {
    // The planner's earlier plan made of sub-issues (planner.subIssues): the section holds no block.
    const load = await loadPlan(repo, { number: epic, body }, config, {
      subIssues: issue.subIssues,
      configFile: input.configPath,
    });
    if (load.ok) previous = load.plan;
  }
  if (
    doc.split !== undefined &&
    previous?.stories.some((s) => s.id === doc.split?.story) !== true
  ) {
    throw new EpicflowError(
      'plan',
      `epic #${epic}: story ${doc.split.story} is no longer in the plan section, so it cannot be split`,
      { details: ['nothing was written; the plan stays as it is'] },
    );
  }
  if (doc.refine !== undefined && previous === undefined) {
    throw new EpicflowError(
      'plan',
      `epic #${epic} has no valid plan in its plan section: /refine adds stories to one`,
      { details: ['comment /plan to have a plan drafted, then /refine'] },
    );
  }
  const records = previous === undefined ? {} : stateFromView(store, previous, view).records;
  const merged = Object.entries(records)
    .filter(([, r]) => r.status === 'done')
    .map(([id]) => id);
  return {
    config,
    store,
    doc,
    docSha: read.sha,
    issue: { number: issue.number, title: issue.title, body },
    labels: issue.labels,
    previous,
    merged,
    defaultBranch,
  };
}

/**
 * A job that could not run its attempt: the record failed with the reason (same attempt,
 * still active, only: a stale job leaves the newer attempt alone), the epic's error
 * comment saying why and its status comment that planning ended.
 */
export async function recordPlanningRefusal(
  repo: GitHubRepo,
  job: PlanJobRef,
  reason: string,
  now: Date,
): Promise<void> {
  const { epic, attempt } = job;
  const store = new GitHubStateStore({ repo, epic: String(epic) });
  let failed: PlanningDoc | undefined;
  await store.updateJson<PlanningDoc | null>(PLANNING_DOC, (current) => {
    failed = undefined;
    if (current === null || !ownsRecord(job, current)) return current;
    failed = { ...current, status: 'failed', problems: [reason], finishedAt: now.toISOString() };
    return failed;
  });
  if (failed === undefined) return;
  await repo.ensureComment({
    issueNumber: epic,
    marker: ERROR_MARKER,
    body: renderPlanningFailed({ attempt, reason, refine: failed.refine }),
  });
  // A refine round that could not run leaves the plan as it was: its status comment stays.
  if (failed.refine !== undefined || failed.split !== undefined) return;
  const issue = await repo.labelledIssue(epic);
  await ensurePlanningEnded(repo, issue, failed);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export async function runPlanJob(
  input: PlanJobInput,
  prepared: PreparedPlanning,
): Promise<PlanJobResult> {
  const { config, store, doc, issue } = prepared;
  const emit = input.onEvent ?? (() => undefined);
  const clock = input.now ?? ((): Date => new Date());
  const now = (): string => clock().toISOString();
  const { git, base, folder, executors } = await openCheckout(input, config, 'planning', emit);
  const planners = requirePlanner(config, input.configPath);
  const options = planOptionsFor(config, input.configPath);
  const prose = proseOf(issue.body);
  const outcome = await planEpic(
    {
      epic: String(input.epic),
      title: issue.title,
      epicText: prose,
      base,
      config,
      configPaths: options.configPaths,
      executorEnv: resolveExecutorEnvs(planners, input.env),
      home: (id) => join(folder, 'homes', id),
      guidance: doc.guidance,
      previous: prepared.previous,
      ...(doc.refine === undefined
        ? {}
        : { refine: { round: doc.refine, merged: prepared.merged } }),
      ...(doc.split === undefined ? {} : { split: doc.split }),
    },
    {
      git,
      executors,
      roster: plannerRoster(planners, { now: clock }, emptyRosterState()),
      emit,
    },
  );

  const costs = {
    rounds: doc.rounds + outcome.rounds,
    executors: [...new Set([...doc.executors, ...outcome.executors])],
    usage: mergeUsage(doc.usage, outcome.usage),
    notes: [...outcome.notes],
    finishedAt: now(),
  };
  let ended: PlanningDoc;
  let section: string | undefined;
  let bodyWritten = false;
  if (outcome.kind === 'planned') {
    section = renderPlanSection({
      plan: outcome.plan,
      warnings: outcome.warnings,
      note:
        doc.split !== undefined
          ? `Split by epicflow's planner: story \`${doc.split.story}\` proved too big (${outgrownText(doc.split.outgrown)}); the stories ${doc.split.story}-… take its place, and the stories that depended on it depend on all of them. Check it: a user with write permission edits it or comments \`/approve\` to start them.`
          : doc.refine === undefined
            ? "Drafted by epicflow's planner from the text above. Check it: a user with write permission edits it or comments `/approve` to start it; `/plan <feedback>` drafts it again."
            : `Refined by epicflow's planner (refine round ${doc.refine}): the stories ${refinePrefix(doc.refine)}… were added to the plan, the others are as they were. Check it: a user with write permission edits it or comments \`/approve\` to start the new stories.`,
      // Room for the author's text: an issue body holds at most GITHUB_BODY_MAX characters.
      maxChars: Math.max(4_000, GITHUB_BODY_MAX - prose.length - 200),
    });
    if (config.planner.subIssues) {
      // The stories become sub-issues before the record says proposed (their writes are ensures).
      section = withoutPlanBlock(section, outcome.plan);
      const digest = await writeSubIssuePlan(input, prepared, outcome.plan, section);
      ended = { ...doc, ...costs, status: 'proposed', planDigest: digest };
      bodyWritten = true;
    } else {
      const back = readBackAsWritten(
        parsePlan(withPlanSection(issue.body, section), options),
        outcome.plan,
        'the drafted plan',
      );
      ended = { ...doc, ...costs, status: 'proposed', planDigest: planDigest(back) };
    }
  } else if (outcome.kind === 'invalid') {
    const problems = [...outcome.violations, ...outcome.mustFix].map(
      (v) => `${v.code}: ${v.message}`,
    );
    ended = { ...doc, ...costs, status: 'invalid', problems };
  } else {
    ended = { ...doc, ...costs, status: 'failed', problems: [outcome.reason] };
  }
  // The commit point: only the attempt the record still names writes its outcome.
  const wrote = await store.writeJson(PLANNING_DOC, ended, prepared.docSha);
  if (!wrote.ok) {
    emit('a newer planning attempt took over meanwhile: this outcome is dropped');
    return { outcome, doc: ended, body: 'untouched', superseded: true };
  }

  let body: PlanJobResult['body'] = bodyWritten ? 'updated' : 'untouched';
  if (outcome.kind === 'planned' && section !== undefined) {
    const text = section;
    // Whatever the author changed meanwhile around the section is kept.
    if (!bodyWritten) {
      body = await input.repo.ensureIssueBody(issue.number, (current) =>
        withPlanSection(current, text),
      );
    }
    await clearViolations(input.repo, issue.number);
    if (doc.refine !== undefined && outcome.notPlanned.length > 0) {
      await input.repo.ensureComment({
        issueNumber: issue.number,
        marker: notPlannedMarker(doc.refine),
        body: renderNotPlanned(doc.refine, outcome.notPlanned),
      });
    }
    emit(
      `plan written into #${issue.number}: ${plural(outcome.plan.stories.length, 'story')} in ${plural(outcome.plan.waves.length, 'wave')}`,
    );
  } else if (outcome.kind === 'invalid') {
    await input.repo.ensureComment({
      issueNumber: issue.number,
      marker: VIOLATIONS_MARKER,
      body: renderPlanningInvalid({
        attempt: doc.attempt,
        rounds: outcome.rounds,
        problems: ended.problems ?? [],
        refine: doc.refine,
      }),
    });
  } else if (outcome.kind === 'failed') {
    await input.repo.ensureComment({
      issueNumber: issue.number,
      marker: ERROR_MARKER,
      body: renderPlanningFailed({
        attempt: doc.attempt,
        reason: outcome.reason,
        refine: doc.refine,
      }),
    });
  }

  // The status comment says what the planner proposed (nothing starts: nobody approved it).
  const fresh = await input.repo.labelledIssue(issue.number);
  await decide(
    settle({
      repo: input.repo,
      defaultBranch: prepared.defaultBranch,
      ...(input.storyWorkflow === undefined ? {} : { storyWorkflow: input.storyWorkflow }),
      now: clock,
    }),
    {
      epic: fresh,
      config,
      trigger: { kind: 'status' },
      replyTo: issue.number,
      command: null,
    },
  );
  return { outcome, doc: ended, body };
}

/**
 * `planner.subIssues`: each story an ensured sub-issue of the epic (found by its story
 * marker, so a kept id keeps its issue), a story the plan dropped unlinked and closed,
 * the "blocked by" links exactly the dependencies, then the section (preview, no block)
 * in the body. The plan is read back from GitHub as every decision will read it; its
 * digest is what the record notes as proposed.
 */
async function writeSubIssuePlan(
  input: PlanJobInput,
  prepared: PreparedPlanning,
  plan: Plan,
  section: string,
): Promise<string> {
  const { repo } = input;
  const parent = prepared.issue.number;
  const listed = await repo.listSubIssues(parent);
  const issues = new Map<string, { readonly number: number; readonly id: number }>();
  for (const s of plan.stories) {
    const issue = await repo.ensureSubIssue({
      parent,
      storyId: s.id,
      title: s.title,
      body: storyIssueBody(s),
      known: { subIssues: listed, recent: () => repo.recentIssues() },
    });
    issues.set(s.id, { number: issue.number, id: issue.id });
  }
  for (const old of prepared.previous?.stories ?? []) {
    if (issues.has(old.id)) continue;
    const sub = listed.find((i) => repo.isOurs(i.author) && hasMarker(i.body, storyMarker(old.id)));
    if (sub === undefined) continue;
    await repo.unlinkSubIssue(parent, sub.id);
    await repo.closeIssue(sub.number, sub.state);
  }
  for (const s of plan.stories) {
    const own = issues.get(s.id);
    if (own === undefined) continue;
    const blockers = s.dependsOn.flatMap((d) => {
      const dep = issues.get(d);
      return dep === undefined ? [] : [dep.id];
    });
    await repo.ensureBlockedBy(own.number, blockers);
  }
  await repo.ensureIssueBody(parent, (current) => withPlanSection(current, section));
  const back = await loadPlan(
    repo,
    { number: parent, body: (await repo.getIssue(parent)).body },
    prepared.config,
    { configFile: input.configPath },
  );
  return planDigest(readBackAsWritten(back, plan, 'the sub-issue plan'));
}
