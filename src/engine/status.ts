/**
 * `epicflow status`: the board of an epic from what is durable: the plan saved
 * at the run's start, the story records, and the epic branch's merge trailers.
 */
import { join } from 'node:path';
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

/** The file a run writes its epic record to, in the epic's state folder. */
export const SAVED_EPIC_FILE = 'epic.json';

/** The one writer of a local epic's `epic.json`: what its run started with. */
export async function writeSavedEpic(state: StateStore, saved: SavedEpic): Promise<void> {
  await state.writeJson(SAVED_EPIC_FILE, saved);
}

/**
 * The one reader of a local epic's `epic.json` (the plan and branch its run started with):
 * null when the run wrote none yet; an error naming the file and the field when it is not
 * what a run writes.
 */
export async function readSavedEpic(state: StateStore): Promise<SavedEpic | null> {
  const raw = await state.readJson<unknown>(SAVED_EPIC_FILE);
  if (raw === null) return null;
  const parsed = SAVED_EPIC.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field =
      issue === undefined || issue.path.length === 0 ? '(the whole file)' : issue.path.join('.');
    throw notWrittenByARun(state, `${field}: ${issue?.message ?? 'invalid'}`);
  }
  const saved = raw as SavedEpic;
  return { ...saved, title: saved.title ?? null };
}

/** `readSavedEpic` for a command that needs the record: none is the same error, naming the file. */
export async function requireSavedEpic(state: StateStore): Promise<SavedEpic> {
  const saved = await readSavedEpic(state);
  if (saved === null) throw notWrittenByARun(state, 'the file is missing');
  return saved;
}

function notWrittenByARun(state: StateStore, what: string): EpicflowError {
  return new EpicflowError(
    'state',
    `${join(state.dir, SAVED_EPIC_FILE)} is not an epic record epicflow wrote: ${what}`,
    { details: ['rerun `epicflow run` with the epic’s plan to write it again'] },
  );
}

/** The report input of an epic from its durable state; null when it has no `epic.json`. */
export async function loadEpicReport(
  state: StateStore,
  git: GitPort,
  clock: Clock,
): Promise<ReportInput | null> {
  const saved = await readSavedEpic(state);
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
