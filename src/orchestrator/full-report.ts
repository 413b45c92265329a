/**
 * The full epic report (`epics/<n>/report.md` on the state branch), linked from
 * the report comment when GitHub's comment limit made it drop detail. Written
 * only when the comment was shortened and the text changed beyond its elapsed time
 * (compared with the text the decision's epic view read: no extra read).
 */
import type { GitHubStateStore } from '../adapters/github/index.js';
import { STATE_BRANCH } from '../adapters/github/index.js';
import type { Action } from '../core/epic/index.js';
import { reportRow, sameButForTime, sanitizeIssueText } from '../core/epic/index.js';
import type { Halt, Plan, StoryRecord } from '../core/model.js';
import { epicBranchName } from '../core/model.js';
import type { ReportPlanning, ReportStory } from '../core/report/index.js';
import { renderReport } from '../core/report/index.js';
import { REPORT_FILE } from './load.js';

/** No comment limit applies to a file: the report is rendered whole. */
const FILE_MAX_CHARS = 50_000_000;

/** `<server>/<o>/<r>/blob/epicflow/state/epics/<n>/report.md` */
export function fullReportUrl(repoHtmlUrl: string, epic: number): string {
  return `${repoHtmlUrl}/blob/${STATE_BRANCH}/epics/${epic}/${REPORT_FILE}`;
}

interface FullReportInput {
  readonly store: GitHubStateStore;
  readonly epic: { readonly number: number; readonly title: string };
  readonly plan: Plan;
  /** Records as the decision read them. */
  readonly records: Readonly<Record<string, StoryRecord>>;
  readonly merged: ReadonlyMap<string, string>;
  readonly halt: Halt | undefined;
  readonly actions: readonly Action[];
  readonly url: string;
  readonly repoHtmlUrl: string;
  /** Blob sha of the current `report.md` (null: none). */
  readonly currentSha: string | null;
  /** Its text, when the decision read it: a report that differs only in its time is not written. */
  readonly currentText?: string | undefined;
  readonly now: string;
  /** What planning cost, when the planner drafted the plan (the Planning row). */
  readonly planning?: ReportPlanning | undefined;
}

/** Writes report.md when the decision's report comment links to it; true when written. */
export async function ensureFullReport(input: FullReportInput): Promise<boolean> {
  const comment = input.actions.find((a) => a.kind === 'ensure-report-comment');
  if (comment === undefined || !comment.body.includes(input.url)) return false;
  const text = renderFullReport(input);
  // Only its elapsed time would change: the file keeps the time of its last real change.
  if (input.currentText !== undefined && sameButForTime(input.currentText, text)) return false;
  const { written } = await input.store.writeTextIfChanged(REPORT_FILE, text, input.currentSha);
  return written;
}

function renderFullReport(input: FullReportInput): string {
  const comment = input.actions.find((a) => a.kind === 'ensure-report-comment');
  // The decision's own record writes are the newest state of each story.
  const records: Record<string, StoryRecord> = { ...input.records };
  for (const a of input.actions) if (a.kind === 'record') records[a.record.story] = a.record;
  const waveOf = new Map<string, number>();
  input.plan.waves.forEach((ids, i) => ids.forEach((id) => waveOf.set(id, i + 1)));
  // The same row rule as the comments (a derived failure, a skip, hidden text), so the full
  // report and the comment never disagree; the decision's rows when it gave them.
  const stories: ReportStory[] =
    comment?.kind === 'ensure-report-comment' && comment.rows !== undefined
      ? [...comment.rows]
      : input.plan.stories.map((story) =>
          reportRow({
            epic: String(input.epic.number),
            story,
            wave: waveOf.get(story.id) ?? 1,
            hash: input.plan.hashes[story.id] ?? '',
            record: records[story.id],
            mergeCommit: input.merged.get(story.id) ?? null,
          }),
        );
  const started = Object.values(records)
    .map((r) => r.startedAt)
    .filter((t): t is string => t !== undefined)
    .sort()[0];
  return renderReport(
    {
      epic: `#${input.epic.number}`,
      title: sanitizeIssueText(input.epic.title),
      epicBranch: epicBranchName(String(input.epic.number)),
      startedAt: started,
      now: input.now,
      stories,
      halts: input.halt === undefined ? [] : [input.halt],
      ...(input.planning === undefined ? {} : { planning: input.planning }),
      links: {
        branch: (b) => `${input.repoHtmlUrl}/tree/${b}`,
        commit: (sha) => `${input.repoHtmlUrl}/commit/${sha}`,
      },
    },
    { maxChars: FILE_MAX_CHARS },
  );
}
