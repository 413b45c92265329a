/**
 * The two steps of every GitHub job that concern the record it was dispatched for, one way
 * for every kind (a story's attempt, a planning attempt, a retro, a landing); the Action's
 * shell runs them (action/shell.ts):
 *
 * - before anything changes, `prepareJob`: the job opened (`openJob`), the kind's record
 *   found in what it read (`RecordSteps.find`, with the facts its staleness is judged on),
 *   the one staleness check (`freshRecord` of core/epic/job-ref.ts: one function, one
 *   error), and only then the kind's own preparation, handed the fresh record and its blob
 *   sha;
 * - at the end of a publish job, `saveRecord`: the record the job ends with written by one
 *   compare-and-swap on the sha it was read at. What a lost compare-and-swap means is the
 *   kind's declaration (`RecordSteps.lostSave`), not code: `superseded` (a newer attempt
 *   took the record over: nothing more is written, the job reports it superseded) or
 *   `again` (the change is made again on the record as it is now, which may keep a newer
 *   attempt's).
 *
 * Between the two, a publish job's push (job-push.ts): the kind describes it and makes the
 * record from how it ended; the shell makes it, then saves that record.
 */
import type { GitHubStateStore } from '../../adapters/github/index.js';
import { freshRecord, type JobFacts, type JobRef } from '../../core/epic/index.js';
import type { StoryRecord } from '../../core/model.js';
import { openJob, type JobOpening, type OpenedJob } from './job-shell.js';

/** What a kind found of its job's record in the opened job, and the facts its staleness is judged on. */
export interface FoundRecord<Rec> {
  readonly facts: JobFacts;
  /** The record as read, with its blob sha (undefined: none). */
  readonly found: Fresh<Rec> | undefined;
}

/** The record a job may run for, as read: the compare-and-swap token of its save is `sha`. */
export interface Fresh<Rec> {
  readonly record: Rec;
  readonly sha: string;
}

/** What a lost compare-and-swap on the record's save means for a kind. */
export type LostSave = 'superseded' | 'again';

/** How a kind's job finds its record, prepares with it, and what a lost save of it means. */
export interface RecordSteps<I extends JobOpening, Rec, F extends FoundRecord<Rec>, P> {
  /** The record in the opened job, with what else the reading gave that `prepare` uses. */
  find(input: I, opened: OpenedJob): Promise<F>;
  /** The rest of what the job reads and checks, once its record was found fresh. */
  prepare(input: I, opened: OpenedJob, found: F, fresh: Fresh<Rec>): Promise<P>;
  readonly lostSave: LostSave;
}

/** A planning or retro record as read (none: `doc` undefined or `sha` null), found for its check. */
export function foundDoc<D extends { readonly attempt: number; readonly status: string }>(
  kind: 'plan' | 'retro',
  read: { readonly doc: D | undefined; readonly sha: string | null },
): FoundRecord<D> {
  const { doc, sha } = read;
  const found = doc === undefined || sha === null ? undefined : { record: doc, sha };
  return { facts: { kind, record: found?.record }, found };
}

/** A kind's record steps bound to one job's input: what the shell prepares a job with. */
export interface Preparation<P> {
  readonly input: JobOpening;
  readonly lostSave: LostSave;
  find(opened: OpenedJob): Promise<FoundRecord<unknown>>;
  prepare(opened: OpenedJob, found: FoundRecord<unknown>, fresh: Fresh<unknown>): Promise<P>;
}

/** `steps` for the job of `input`. */
export function preparation<I extends JobOpening, Rec, F extends FoundRecord<Rec>, P>(
  input: I,
  steps: RecordSteps<I, Rec, F, P>,
): Preparation<P> {
  return {
    input,
    lostSave: steps.lostSave,
    find: (opened) => steps.find(input, opened),
    // What `find` returned comes back here: of its own types.
    prepare: (opened, found, fresh) =>
      steps.prepare(input, opened, found as F, fresh as Fresh<Rec>),
  };
}

/**
 * Opens the job, finds its record and refuses the job when it may no longer run
 * (`freshRecord`), before the kind's own preparation.
 */
export async function prepareJob<P>(ref: JobRef, prep: Preparation<P>): Promise<P> {
  const opened = await openJob(prep.input);
  const found = await prep.find(opened);
  const fresh = freshRecord(ref, found.facts, found.found);
  return prep.prepare(opened, found, fresh);
}

/** A record's file on the state branch: one compare-and-swap write, and a read-modify-write. */
interface RecordFile<T> {
  write(value: T, sha: string): Promise<{ readonly ok: boolean }>;
  update(change: (current: T | null) => T): Promise<T>;
}

/** A story's record file. */
export function storyFile(store: GitHubStateStore, story: string): RecordFile<StoryRecord> {
  return {
    write: (value, sha) => store.write(value, sha),
    update: (change) => store.update(story, change),
  };
}

/** A JSON document of the epic (`planning`, `retro`, `land`). */
export function docFile<T>(store: GitHubStateStore, name: string): RecordFile<T> {
  return {
    write: (value, sha) => store.writeJson(name, value, sha),
    update: (change) => store.updateJson<T>(name, change),
  };
}

/** The record a publish job ends with, to be saved by the shell. */
interface RecordSave<T> {
  readonly file: RecordFile<T>;
  /** The blob sha the record was read at (`Fresh.sha`). */
  readonly sha: string;
  /** What is written at `sha`. */
  readonly value: T;
  /** The same change made on the record as it is now (a kind whose lost save means `again`). */
  readonly change: (current: T | null) => T;
}

/**
 * A publish job's end: the record to save and what the job does once it is saved (its
 * comments, the issue body, the roster), with what it reports.
 */
export class Saving<R> {
  constructor(
    readonly save: RecordSave<unknown>,
    readonly after: (saved: unknown) => Promise<R>,
    /** What the job reports when a newer attempt took the record over: nothing more written. */
    readonly superseded: R,
  ) {}
}

/** The end of a publish job that saves `save`, then runs `after` with the record as saved. */
export function saving<T, R>(
  save: RecordSave<T>,
  after: (saved: T) => Promise<R>,
  superseded: R,
): Saving<R> {
  return new Saving(save as RecordSave<unknown>, (saved) => after(saved as T), superseded);
}

/** The one save of a job's record, and what came of it as the kind declared a lost one. */
export async function saveRecord<R>(
  ending: Saving<R>,
  lostSave: LostSave,
): Promise<{ readonly result: R; readonly superseded: boolean }> {
  const { file, sha, value, change } = ending.save;
  if ((await file.write(value, sha)).ok) {
    return { result: await ending.after(value), superseded: false };
  }
  if (lostSave === 'superseded') return { result: ending.superseded, superseded: true };
  return { result: await ending.after(await file.update(change)), superseded: false };
}
