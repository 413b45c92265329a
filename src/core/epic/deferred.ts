/**
 * Deferred findings (`judge.deferNonBlocking`, docs/executors.md): a judge's findings below
 * critical do not hold a story back; its record lists them (`deferred`), and once every
 * story is done the epic offers one follow-up round over them (`/resume deferred`,
 * `epicflow run --deferred`). The round is a new attempt of each such story on its branch
 * (caught up with the epic head), its coder told the findings, then the gates and the
 * judge again and the merge; while it runs, the story's earlier merge no longer counts as
 * done (`deferredRound.supersedes`), as a review round's does not.
 */
import type { DeferredRound, StoryRecord } from '../model.js';
import { code } from '../report/escape.js';
import { withoutReason } from './rules.js';
import type { Entry } from './story-state.js';
import { login, statusOf } from './story-state.js';

/** The stories a follow-up round would take: done, with deferred findings, and no round yet. */
export function deferredStories(
  stories: readonly {
    readonly id: string;
    readonly done: boolean;
    readonly record?: StoryRecord;
  }[],
): string[] {
  return stories
    .filter(
      (s) =>
        s.done && (s.record?.deferred?.length ?? 0) > 0 && s.record?.deferredRound === undefined,
    )
    .map((s) => s.id);
}

/** Stories named in a sentence about deferred findings; the rest are counted. */
const NAMED_STORIES = 10;

/** How many findings the stories defer, for people: `3 deferred findings on \`a\`, \`b\``. */
export function deferredSummary(
  records: readonly (StoryRecord | undefined)[],
  ids: readonly string[],
): string {
  const n = records
    .filter((r): r is StoryRecord => r !== undefined && ids.includes(r.story))
    .reduce((sum, r) => sum + (r.deferred?.length ?? 0), 0);
  const named = ids.slice(0, NAMED_STORIES).map(code).join(', ');
  const more = ids.length > NAMED_STORIES ? ` and ${ids.length - NAMED_STORIES} more` : '';
  return `${n} deferred finding${n === 1 ? '' : 's'} on ${named}${more}`;
}

/** A story's record as its follow-up round starts: a new attempt on its branch, told the findings. */
function followUpRecord(record: StoryRecord, supersedes: string | undefined): StoryRecord {
  const {
    mergeCommit: _m,
    finishedAt: _f,
    storyCommit: _c,
    deferred,
    ...rest
  } = withoutReason(record);
  const round: DeferredRound = {
    findings: deferred ?? [],
    ...(supersedes === undefined ? {} : { supersedes }),
  };
  return { ...rest, status: 'planned', deferredRound: round };
}

/**
 * A follow-up round that ends with the work in place (the coder changed nothing and the judge
 * let it pass): the story's earlier merge counts again, as its merge. Nothing for a story
 * outside a round, or one whose earlier work was in place too.
 */
export function followUpInPlace(record: StoryRecord): Partial<StoryRecord> {
  const round = record.deferredRound;
  if (round?.supersedes === undefined) return {};
  return { mergeCommit: round.supersedes, deferredRound: { findings: round.findings } };
}

/** Whether the story's merge on the epic branch is the one its running follow-up round replaces. */
export function supersededByFollowUp(
  record: StoryRecord | undefined,
  merge: string | undefined,
): boolean {
  return merge !== undefined && record?.deferredRound?.supersedes === merge;
}

/** The note every report shows for a story a follow-up round ran again. */
export function deferredRoundNote(round: DeferredRound): string {
  const n = round.findings.length;
  return `follow-up round over ${n} deferred finding${n === 1 ? '' : 's'}`;
}

/**
 * A `deferred` trigger: once every story is done, each story with deferred findings and
 * no follow-up round yet runs one; otherwise nothing starts and the reply says why.
 */
export function applyDeferredRound(
  entries: readonly Entry[],
  by: string | undefined,
  replies: string[],
): void {
  const notDone = entries.filter((e) => statusOf(e) !== 'done').map((e) => e.story.id);
  if (notDone.length > 0) {
    const shown = notDone.slice(0, 5).map(code).join(', ');
    replies.push(
      `No follow-up round: the epic is not finished (${shown}${notDone.length > 5 ? ', …' : ''} not done). ` +
        'Deferred findings are followed up once every story is done.',
    );
    return;
  }
  const ids = deferredStories(
    entries.map((e) => ({
      id: e.story.id,
      done: true,
      ...(e.current === undefined ? {} : { record: e.current }),
    })),
  );
  if (ids.length === 0) {
    replies.push('No follow-up round: no story has deferred findings left to follow up.');
    return;
  }
  const summary = deferredSummary(
    entries.map((e) => e.current),
    ids,
  );
  for (const e of entries) {
    if (!ids.includes(e.story.id) || e.current === undefined) continue;
    e.current = followUpRecord(e.current, e.mergeCommit);
    e.mergeCommit = undefined;
    delete e.derivedFailure;
  }
  replies.push(
    `Follow-up round${by === undefined ? '' : ` started by @${login(by)}`}: ${summary} ` +
      '(each story once more on its branch, then its gates, the judge and the merge).',
  );
}

/** What a follow-up round would take once every story is done, for people (undefined: nothing). */
export function deferredOffer(entries: readonly Entry[]): string | undefined {
  const ids = deferredStories(
    entries.map((e) => ({
      id: e.story.id,
      done: statusOf(e) === 'done',
      ...(e.current === undefined ? {} : { record: e.current }),
    })),
  );
  return ids.length === 0
    ? undefined
    : deferredSummary(
        entries.map((e) => e.current),
        ids,
      );
}
