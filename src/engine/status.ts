/**
 * `epicflow status`: the board of an epic from what is durable: the plan saved
 * at the run's start, the story records, and the epic branch's merge trailers.
 */
import { z } from 'zod';
import { mergedRecord } from '../core/epic/rules.js';
import { EpicflowError } from '../core/errors.js';
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

/** What a run writes into `epic.json`, as far as its readers rely on it. */
const SAVED_EPIC = z.object({
  epic: z.string().min(1),
  epicBranch: z.string().min(1),
  title: z.string().nullable().optional(),
  plan: z.looseObject({
    stories: z.array(z.looseObject({ id: z.string().min(1) })),
    waves: z.array(z.array(z.string())),
    hashes: z.record(z.string(), z.string()),
  }),
});

/**
 * The one reader of a local epic's `epic.json` (the plan and branch its run started with):
 * null when the run wrote none yet; an error naming the file and the field when it is not
 * what a run writes.
 */
export async function readSavedEpic(state: StateStore, file: string): Promise<SavedEpic | null> {
  const raw = await state.readJson<unknown>('epic.json');
  if (raw === null) return null;
  const parsed = SAVED_EPIC.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field =
      issue === undefined || issue.path.length === 0 ? '(the whole file)' : issue.path.join('.');
    throw new EpicflowError(
      'state',
      `${file} is not an epic record epicflow wrote: ${field}: ${issue?.message ?? 'invalid'}`,
      {
        details: ['rerun `epicflow run` with the epic’s plan to write it again'],
      },
    );
  }
  const saved = raw as SavedEpic;
  return { ...saved, title: saved.title ?? null };
}

/** The report input of an epic from its durable state (`file`: its `epic.json`); null when it has none. */
export async function loadEpicReport(
  state: StateStore,
  git: GitPort,
  clock: Clock,
  file: string,
): Promise<ReportInput | null> {
  const saved = await readSavedEpic(state, file);
  if (saved === null) return null;
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
