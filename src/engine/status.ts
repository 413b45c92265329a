/**
 * `epicflow status`: the board of an epic from what is durable: the plan saved
 * at the run's start, the story records, and the epic branch's merge trailers.
 */
import { mergedRecord } from '../core/epic/rules.js';
import type { Plan, StoryRecord } from '../core/model.js';
import type { ReportInput } from '../core/report/index.js';
import type { Clock, GitPort, StateStore } from './ports.js';
import { buildReportInput } from './run-epic.js';

export interface SavedEpic {
  readonly epic: string;
  readonly epicBranch: string;
  readonly title: string | null;
  readonly plan: Plan;
}

/** The report input of an epic from its durable state; null when it has none. */
export async function loadEpicReport(
  state: StateStore,
  git: GitPort,
  clock: Clock,
): Promise<ReportInput | null> {
  const saved = await state.readJson<SavedEpic>('epic.json');
  if (saved === null || !Array.isArray(saved.plan?.stories)) return null;
  const records = new Map<string, StoryRecord>();
  for (const r of await state.listStories()) records.set(r.story, r);
  // The epic branch is the truth about merges, even when a record lags behind a crash.
  for (const [id, sha] of await git.mergedStories(saved.epicBranch)) {
    const r = records.get(id);
    if (r !== undefined) records.set(id, mergedRecord(r, sha, undefined));
  }
  return buildReportInput({
    epic: saved.epic,
    epicBranch: saved.epicBranch,
    plan: saved.plan,
    stories: saved.plan.stories,
    records,
    now: clock.now().toISOString(),
    title: saved.title ?? undefined,
    halts: [],
  });
}
