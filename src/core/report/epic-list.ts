/**
 * `epicflow status --list`: every epic that ran in a repository, one line each: how
 * many of its stories merged, where it stands (in progress, finished, landed) and its
 * title. Pure: the entry reads the state folders and hands the facts in.
 */
import type { LandLog } from '../land/index.js';
import type { ReportJson } from './json.js';

/** What the list shows of one epic. */
export interface EpicListEntry {
  readonly epic: string;
  readonly title: string | null;
  readonly stories: number;
  /** Stories merged into the epic branch. */
  readonly merged: number;
  /** Stories done (merged, skipped, or already in place): all of them = finished. */
  readonly done: number;
  /** The branch the epic was last landed in, when its last landing landed. */
  readonly landedInto: string | null;
  /** A run holds the epic now (its lock is taken). */
  readonly running: boolean;
}

/** The list entry of an epic from its report document and its landings. */
export function epicListEntry(report: ReportJson, lands: LandLog, running: boolean): EpicListEntry {
  const last = lands.lands[lands.lands.length - 1];
  return {
    epic: report.epic,
    title: report.title,
    stories: report.stories.length,
    merged: report.stories.filter((s) => s.mergeCommit !== null).length,
    done: report.stories.filter((s) => s.status === 'done').length,
    landedInto: last?.outcome === 'landed' ? last.into : null,
    running,
  };
}

/** Where an epic stands, in words. */
function epicStanding(e: EpicListEntry): string {
  if (e.landedInto !== null) return `landed in ${e.landedInto}`;
  const finished = e.stories > 0 && e.done === e.stories;
  const words = finished ? 'finished, not landed' : 'in progress';
  return e.running ? `${words} (running now)` : words;
}

/**
 * The list: a header with the count, then `<id>  m/n merged · <standing>  <title>` per
 * epic in the order given, ids and standings padded so the titles line up. Titles are
 * given already made printable (one line).
 */
export function renderEpicList(entries: readonly EpicListEntry[]): string {
  if (entries.length === 0) return 'no epic has run in this repository yet\n';
  const cells = entries.map((e) => ({
    id: e.epic,
    progress: `${e.merged}/${e.stories} merged · ${epicStanding(e)}`,
    title: e.title ?? '',
  }));
  const idWidth = Math.max(...cells.map((c) => c.id.length));
  const progressWidth = Math.max(...cells.map((c) => c.progress.length));
  const lines = cells.map((c) =>
    `  ${c.id.padEnd(idWidth)}  ${c.progress.padEnd(progressWidth)}  ${c.title}`.trimEnd(),
  );
  return `epics in this repository (${entries.length}):\n${lines.join('\n')}\n`;
}
