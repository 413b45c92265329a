/**
 * One story's row in every report — the local report.md and board, `epicflow status`,
 * the pull request's report comment, the issue's status comment and the full report on
 * the state branch — so they never disagree: the status is the effective one (merged on
 * the branch first, then a derived failure, then the record), a story done without a
 * merge (skipped, or found already in place) credits no executor, a story a review round
 * ran again says so, and text is cleaned of hidden characters. Mentions are made inert by each renderer, after it cuts to length.
 */
import type { Story, StoryRecord } from '../model.js';
import type { ReportStory } from '../report/index.js';
import { deferredRoundNote } from './deferred.js';
import { revisionNote } from './review.js';
import { blankRecord, effectiveStatus } from './rules.js';
import { sanitizeIssueText } from './sanitize.js';

interface RowFacts {
  readonly epic: string;
  readonly story: Story;
  readonly wave: number;
  /** The story's plan hash (for a blank record). */
  readonly hash: string;
  readonly record: StoryRecord | undefined;
  /**
   * The merge commit the epic branch holds for the story (null: the branch holds none);
   * undefined when the caller did not read the branch: the record's, when done.
   */
  readonly mergeCommit?: string | null | undefined;
  /** A failure derived from outside facts, shown but not persisted. */
  readonly derivedFailure?: string | undefined;
  /** Notes shown on this report only (derived facts). */
  readonly display?: readonly string[];
}

export function reportRow(facts: RowFacts): ReportStory {
  const clean = sanitizeIssueText;
  const story = { ...facts.story, title: clean(facts.story.title) };
  const mergeCommit =
    facts.mergeCommit === null
      ? undefined
      : (facts.mergeCommit ??
        (facts.record?.status === 'done' ? facts.record.mergeCommit : undefined));
  const status = effectiveStatus({
    mergeCommit,
    derivedFailure: facts.derivedFailure,
    record: facts.record,
  });
  if (facts.record === undefined && status === 'planned') return { story, wave: facts.wave };
  const base = facts.record ?? blankRecord(facts.epic, facts.story.id, facts.hash);
  const reason = facts.derivedFailure ?? base.reason;
  const { reason: _r, mergeCommit: _m, ...rest } = base;
  // A story done without a merge was finished by nobody: no executor is credited with it.
  const skipped = status === 'done' && mergeCommit === undefined;
  const record: StoryRecord = {
    ...rest,
    status,
    ...(skipped ? { executors: [] } : {}),
    ...(reason === undefined ? {} : { reason: clean(reason) }),
    ...(mergeCommit === undefined ? {} : { mergeCommit }),
    ...(base.deferred === undefined ? {} : { deferred: base.deferred.map(clean) }),
    notes: [
      ...base.notes.map(clean),
      ...(base.revision === undefined ? [] : [revisionNote(base.revision)]),
      ...(base.deferredRound === undefined ? [] : [deferredRoundNote(base.deferredRound)]),
      ...(facts.display ?? []),
    ],
  };
  return { story, wave: facts.wave, record };
}
