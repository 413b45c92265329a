/**
 * The publish side of a planning attempt: the job that holds the write credential and runs
 * nothing of the repository's or the planner's. It reads the work job's hand-over
 * (handover.ts), parses the plan section it brings with the validator of a hand-written plan
 * (a section that is not a valid plan is refused, nothing written), then writes the outcome
 * as the planning job always did: the record (compare-and-swap: a newer attempt wins), the
 * plan section into the issue body below the author's text (or the stories as sub-issues),
 * the comments, and the decision after it, so the status comment says what was proposed.
 */
import { hasMarker, planDigest, storyMarker } from '../../core/epic/index.js';
import { ERROR_MARKER, notPlannedMarker, VIOLATIONS_MARKER } from '../../core/epic/markers.js';
import {
  PLANNING_DOC,
  renderPlanningFailed,
  renderNotPlanned,
  renderPlanningInvalid,
  storyIssueBody,
  withoutPlanBlock,
  type PlanningDoc,
} from '../../core/epic/planning.js';
import type { Plan } from '../../core/model.js';
import { parsePlan, planOptionsFor, readBackAsWritten } from '../../core/plan/index.js';
import { withPlanSection } from '../../core/planner/index.js';
import type { PlanHandover } from '../../core/publish/handover.js';
import { ResultRefusal } from '../../core/publish/result.js';
import { mergeUsage } from '../../engine/usage.js';
import { decide } from '../../orchestrator/decide.js';
import { loadPlan } from '../../orchestrator/load.js';
import { docFile, saving, type Saving } from './job-record.js';
import type { PlanJobInput, PreparedPlanning } from './plan-job.js';
import { clearViolations } from '../../orchestrator/problems.js';
import { settle } from '../../orchestrator/settings.js';

export interface PlanJobResult {
  readonly handover: PlanHandover;
  /** The plan written (a planned outcome). */
  readonly plan?: Plan;
  /** The planning record as written at the end. */
  readonly doc: PlanningDoc;
  /** What became of the issue body: the section written, already there, or not touched. */
  readonly body: 'updated' | 'unchanged' | 'untouched';
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * A planning work job's hand-over, checked: the record it ends with, for the shell to save
 * (only the attempt the record still names writes its outcome), and what is written once it
 * is (`publishPlanned`).
 */
export async function publishPlanJob(
  input: PlanJobInput,
  prepared: PreparedPlanning,
  handover: PlanHandover,
): Promise<Saving<PlanJobResult>> {
  const { config, store, doc, issue } = prepared;
  const clock = input.now ?? ((): Date => new Date());
  const options = planOptionsFor(config, input.configPath);
  const { outcome } = handover;
  const costs = {
    rounds: doc.rounds + handover.rounds,
    executors: [...new Set([...doc.executors, ...handover.executors])],
    usage: mergeUsage(doc.usage, handover.usage),
    notes: [...handover.notes],
    finishedAt: clock().toISOString(),
  };
  let ended: PlanningDoc;
  let section: string | undefined;
  let plan: Plan | undefined;
  let bodyWritten = false;
  if (outcome.kind === 'planned') {
    // The section is checked as a hand-written plan is, on the issue as it is now.
    const parsed = parsePlan(withPlanSection(issue.body, outcome.section), options);
    if (!parsed.ok) {
      throw new ResultRefusal(
        'malformed',
        "the planning work job's plan section is not a valid plan: nothing was written",
        parsed.violations.map((v) => `${v.code}: ${v.message}`),
      );
    }
    plan = parsed.plan;
    section = outcome.section;
    if (config.planner.subIssues) {
      // The stories become sub-issues before the record says proposed (their writes are ensures).
      section = withoutPlanBlock(section, plan);
      const digest = await writeSubIssuePlan(input, prepared, plan, section);
      ended = { ...doc, ...costs, status: 'proposed', planDigest: digest };
      bodyWritten = true;
    } else {
      ended = { ...doc, ...costs, status: 'proposed', planDigest: planDigest(plan) };
    }
  } else if (outcome.kind === 'invalid') {
    ended = { ...doc, ...costs, status: 'invalid', problems: [...outcome.problems] };
  } else {
    ended = { ...doc, ...costs, status: 'failed', problems: [outcome.reason] };
  }
  const written = { ended, section, plan, bodyWritten };
  return saving(
    {
      file: docFile<PlanningDoc>(store, PLANNING_DOC),
      sha: prepared.docSha,
      value: ended,
      change: () => ended,
    },
    () => publishPlanned(input, prepared, handover, written),
    { handover, doc: ended, body: 'untouched' },
  );
}

/** What a planning attempt writes once its record is saved: the issue body, its comments, the decision. */
async function publishPlanned(
  input: PlanJobInput,
  prepared: PreparedPlanning,
  handover: PlanHandover,
  written: {
    readonly ended: PlanningDoc;
    readonly section: string | undefined;
    readonly plan: Plan | undefined;
    readonly bodyWritten: boolean;
  },
): Promise<PlanJobResult> {
  const { config, doc, issue } = prepared;
  const { ended, section, plan, bodyWritten } = written;
  const { outcome } = handover;
  const clock = input.now ?? ((): Date => new Date());
  const emit = input.onEvent ?? (() => undefined);
  let body: PlanJobResult['body'] = bodyWritten ? 'updated' : 'untouched';
  if (plan !== undefined && section !== undefined && outcome.kind === 'planned') {
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
      `plan written into #${issue.number}: ${plural(plan.stories.length, 'story')} in ${plural(plan.waves.length, 'wave')}`,
    );
  } else if (outcome.kind !== 'planned') {
    // No plan: the violations, or why the planner failed, in their own comment.
    const { attempt, refine } = doc;
    await input.repo.ensureComment(
      outcome.kind === 'invalid'
        ? {
            issueNumber: issue.number,
            marker: VIOLATIONS_MARKER,
            body: renderPlanningInvalid({
              attempt,
              rounds: handover.rounds,
              problems: ended.problems ?? [],
              refine,
            }),
          }
        : {
            issueNumber: issue.number,
            marker: ERROR_MARKER,
            body: renderPlanningFailed({ attempt, reason: outcome.reason, refine }),
          },
    );
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
  return { handover, ...(plan === undefined ? {} : { plan }), doc: ended, body };
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
