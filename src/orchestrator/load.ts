/**
 * Reading an epic's inputs from GitHub: the configuration on the default
 * branch, the plan (issue body or sub-issues), the story records and the
 * persisted halt. Only content-addressed facts (the merged stories below a
 * commit) are remembered between events, in the repository's cache: the App may restart
 * between any two events and then simply reads again.
 */
import YAML from 'yaml';
import type {
  EpicView,
  GitHubRepo,
  IssueSummary,
  GitHubStateStore,
} from '../adapters/github/index.js';
import { CONFIG_PATH, readEpicView, STATE_BRANCH } from '../adapters/github/index.js';
import { DEFAULT_CONFIG, parseConfig, requireCoder } from '../core/config/index.js';
import { EpicflowError } from '../core/errors.js';
import type { EpicflowConfig } from '../core/config/index.js';
import { hasMarker, storyMarker } from '../core/epic/index.js';
import type { SubIssueRef } from '../core/epic/index.js';
import { epicBranchName, type Halt, type Plan, type StoryRecord } from '../core/model.js';
import type { Story } from '../core/model.js';
import type { Violation } from '../core/plan/index.js';
import type { EpicDoc } from '../core/epic/epic-doc.js';
import { EPIC_DOC } from './epic-doc.js';
import {
  assemblePlan,
  extractPlanBlocks,
  ID_PATTERN,
  parsePlan,
  parseStoryBlock,
  planOptionsFor,
} from '../core/plan/index.js';

/**
 * The configuration on the default branch, the epic issue with its sub-issues, the
 * epic branch's head, its pull request and every record of the epic with its blob
 * sha: one GraphQL request.
 */
export function readView(
  repo: GitHubRepo,
  epic: number,
  defaultBranch: string,
  /** Where the configuration is (a story job's `config` input); default `.github/epicflow.yml`. */
  configPath: string = CONFIG_PATH,
): Promise<EpicView> {
  return readEpicView(repo, {
    stateBranch: STATE_BRANCH,
    folder: `epics/${epic}`,
    epicBranch: epicBranchName(String(epic)),
    baseBranch: defaultBranch,
    epic,
    // A git object expression takes the path from the root: no `./`.
    configPath: configPath.replace(/^\.\//, ''),
    board: repo.cache.boards.get(repo.fullName) ?? undefined,
  });
}

/**
 * Notes the board `config` names (or none), so that the next epic views of the
 * repository read it along with the epic: a decision then opens it without a request.
 */
export function expectBoard(repo: GitHubRepo, config: EpicflowConfig): void {
  repo.cache.boards.set(repo.fullName, config.board?.project ?? null);
}

/** The configuration, or defaults when the repository has none; invalid text throws 'config'. */
export async function loadConfig(repo: GitHubRepo): Promise<EpicflowConfig> {
  return configFromText(await repo.loadConfigText());
}

/**
 * The configuration from the file's text, checked as the story job checks it: a
 * missing file or one without a coder is a `config` error, so the App never
 * dispatches a job that would refuse to run.
 */
export function configFromText(text: string | null): EpicflowConfig {
  if (text === null) {
    throw new EpicflowError(
      'config',
      `no epicflow config at ${CONFIG_PATH} on the default branch`,
      {
        details: [
          'add the file with at least one executor with the coder role (`epicflow init` writes one; see docs/config.md)',
        ],
      },
    );
  }
  const config = parseConfig(text, CONFIG_PATH);
  requireCoder(config, CONFIG_PATH);
  return config;
}

/**
 * The epic label when the configuration cannot be read: the value written in
 * the file if it is there, else the default. Only used to decide whether an
 * event concerns an epic, so the config error is reported where it matters.
 */
export async function rawEpicLabel(repo: GitHubRepo): Promise<string> {
  try {
    const text = await repo.loadConfigText();
    const doc = (YAML.parse(text ?? '') ?? {}) as { labels?: { epic?: unknown } };
    const label = doc.labels?.epic;
    return typeof label === 'string' ? label : DEFAULT_CONFIG.labels.epic;
  } catch {
    return DEFAULT_CONFIG.labels.epic;
  }
}

export type PlanLoad =
  | {
      readonly ok: true;
      readonly plan: Plan;
      /** Sub-issues by story id: ours (marker) for a body plan, the plan's own for a sub-issue plan. */
      readonly subIssues: Readonly<Record<string, SubIssueRef & { readonly nodeId: string }>>;
      /** The epic's sub-issues as listed for this plan (so nobody lists them again). */
      readonly listed?: readonly IssueSummary[];
    }
  | { readonly ok: false; readonly violations: readonly Violation[] };

/**
 * The plan of an epic (docs/plan-format.md): the issue body's `epicflow` block, or,
 * when the body has none, the one-story blocks of its sub-issues with their
 * "blocked by" relations added to `dependsOn`.
 */
export async function loadPlan(
  repo: GitHubRepo,
  epic: { readonly number: number; readonly body: string },
  config: EpicflowConfig,
  known?: {
    /** The epic's sub-issues when the caller already read them (spares the listing). */
    readonly subIssues?: readonly IssueSummary[];
    /** The configuration file read, when not the default (`.github/epicflow.yml`). */
    readonly configFile?: string;
  },
): Promise<PlanLoad> {
  const options = planOptionsFor(config, known?.configFile);
  const subs = known?.subIssues ?? (await repo.listSubIssues(epic.number));
  if (extractPlanBlocks(epic.body).length > 0) {
    const result = parsePlan(epic.body, options);
    if (!result.ok) return { ok: false, violations: result.violations };
    const mine = (id: string): IssueSummary | undefined =>
      subs.find((s) => repo.isOurs(s.author) && hasMarker(s.body, storyMarker(id)));
    return {
      ok: true,
      plan: result.plan,
      subIssues: refs(result.plan.stories, mine),
      listed: subs,
    };
  }
  const planned = subs.filter((s) => extractPlanBlocks(s.body).length > 0);
  if (planned.length === 0) {
    // No block anywhere: parsePlan reports `no-plan-block` in its own words.
    const result = parsePlan(epic.body, options);
    return { ok: false, violations: result.ok ? [] : result.violations };
  }
  const violations: Violation[] = [];
  const stories: Story[] = [];
  const byIssue = new Map<number, string>();
  for (const sub of planned) {
    const result = parseStoryBlock(sub.body, `issue-${sub.number}`, options);
    if (!result.ok) {
      violations.push(
        ...result.violations.map((v) => ({ ...v, message: `#${sub.number}: ${v.message}` })),
      );
      continue;
    }
    stories.push(result.story);
    byIssue.set(sub.number, result.story.id);
  }
  const extra: Record<string, string[]> = {};
  for (const sub of planned) {
    const id = byIssue.get(sub.number);
    if (id === undefined) continue;
    const blockers = await repo.blockedBy(sub.number);
    const deps = blockers.flatMap((b) => {
      const dep = byIssue.get(b.number);
      return dep === undefined ? [] : [dep];
    });
    if (deps.length > 0) extra[id] = deps;
  }
  if (violations.length > 0) return { ok: false, violations };
  const result = assemblePlan(stories, extra, options);
  if (!result.ok) return { ok: false, violations: result.violations };
  const own = (id: string): IssueSummary | undefined =>
    planned.find((s) => byIssue.get(s.number) === id);
  return { ok: true, plan: result.plan, subIssues: refs(result.plan.stories, own), listed: subs };
}

function refs(
  stories: readonly Story[],
  find: (id: string) => IssueSummary | undefined,
): Record<string, SubIssueRef & { nodeId: string }> {
  const out: Record<string, SubIssueRef & { nodeId: string }> = {};
  for (const s of stories) {
    const issue = find(s.id);
    if (issue) out[s.id] = { number: issue.number, state: issue.state, nodeId: issue.nodeId };
  }
  return out;
}

interface EpicState {
  readonly records: Readonly<Record<string, StoryRecord>>;
  /** Blob sha of each record as read: the compare-and-swap token (null: no record yet). */
  readonly shas: Readonly<Record<string, string | null>>;
  readonly halt: Halt | undefined;
  /** The epic document as read, and its blob sha (the CAS token; null: none yet). */
  readonly doc?: { readonly value: EpicDoc; readonly sha: string | null };
  /** Blob sha of `report.md` in the epic's folder; null when there is none. */
  readonly reportSha?: string | null;
  /** Its text, when the view gave it whole. */
  readonly reportText?: string | undefined;
}

export const REPORT_FILE = 'report.md';

/** The records of the plan's stories and the persisted halt, from an `EpicView` (no request). */
export function stateFromView(store: GitHubStateStore, plan: Plan, view: EpicView): EpicState {
  const records: Record<string, StoryRecord> = {};
  const shas: Record<string, string | null> = {};
  for (const s of plan.stories) {
    const file = view.stories.get(`${s.id}.json`);
    shas[s.id] = file?.sha ?? null;
    if (file) records[s.id] = store.parseStory(s.id, file.text);
  }
  const doc =
    view.epicDoc === undefined ? undefined : store.parseJson<EpicDoc>(EPIC_DOC, view.epicDoc.text);
  return {
    records,
    shas,
    halt: doc?.halt,
    doc: { value: checkDoc(doc ?? {}, store.docPath(EPIC_DOC)), sha: view.epicDoc?.sha ?? null },
    reportSha: view.reportSha,
    ...(view.reportText === undefined ? {} : { reportText: view.reportText }),
  };
}

/** An approval someone edited by hand is a state error, never read as "none". */
function checkDoc(doc: EpicDoc, path: string): EpicDoc {
  const approved: unknown = doc.approvedPlan;
  if (
    approved !== undefined &&
    !(typeof approved === 'string' && /^[0-9a-f]{16}$/.test(approved))
  ) {
    throw new EpicflowError(
      'state',
      `GitHub state: approvedPlan in ${path} on the state branch is not a plan hash (16 hex digits), got ${JSON.stringify(approved)}; fix it, or delete the field and comment /approve to approve the current plan`,
    );
  }
  const stories: unknown = doc.approvedStories;
  if (stories !== undefined && !isStoryHashes(stories)) {
    throw new EpicflowError(
      'state',
      `GitHub state: approvedStories in ${path} on the state branch must map story ids to plan hashes, got ${JSON.stringify(stories).slice(0, 200)}; fix it, or delete the field and comment /approve to approve the current plan`,
    );
  }
  return doc;
}

function isStoryHashes(value: unknown): value is Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.entries(value).every(
    ([id, hash]) => ID_PATTERN.test(id) && typeof hash === 'string' && /^[0-9a-f]+$/.test(hash),
  );
}
