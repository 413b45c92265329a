/**
 * Hidden markers: how epicflow finds its own comments, sub-issues and plan
 * sections again. A marker is an HTML comment, `<!-- epicflow:<name> -->`,
 * invisible on GitHub. Every marker epicflow writes or reads is named, made and
 * parsed here. Whoever finds one must also check the author is epicflow's own
 * login (or the epic owner's): anyone can paste a marker into a comment of their
 * own (adapters/github/resources/comments.ts, issues.ts).
 */
import { EpicflowError } from '../errors.js';
import { GITHUB_BODY_MAX } from '../report/markdown.js';

/** The name inside `<!-- epicflow:<name> -->` of the comments and issues epicflow keeps. */
export type MarkerName =
  /** The status comment on the epic issue. */
  | 'status'
  /** The report comment on the epic's pull request. */
  | 'report'
  /** The comment listing what is wrong with the plan. */
  | 'violations'
  /** The comment saying why epicflow stopped (an invalid configuration, a failed decision). */
  | 'error'
  /** The answer to a command on an issue that is not an epic. */
  | 'not-an-epic'
  /** The final report on the epic issue, once its pull request was merged or closed. */
  | 'landed'
  /** A story's sub-issue. */
  | `story:${string}`
  /** The epic a story's sub-issue belongs to (on the sub-issue, beside its story marker). */
  | `epic:${number}`
  /** The failure comment of one attempt of a story, on its sub-issue. */
  | `failure:${string}:${number}`
  /** The retro's proposal on the epic issue, a checkbox per fix (`/retro`). */
  | 'retro'
  /** What the planner of refine round n could not place as stories (`/refine`). */
  | `not-planned:${number}`
  /** The start and end of the plan section epicflow writes below an epic's prose. */
  | 'plan:start'
  | 'plan:end';

export const STATUS_MARKER: MarkerName = 'status';
export const REPORT_MARKER: MarkerName = 'report';
export const VIOLATIONS_MARKER: MarkerName = 'violations';
export const ERROR_MARKER: MarkerName = 'error';
export const NOT_AN_EPIC_MARKER: MarkerName = 'not-an-epic';
export const RETRO_MARKER: MarkerName = 'retro';

/** Marks the sub-issue of one story. */
export function storyMarker(story: string): MarkerName {
  return `story:${story}`;
}

/** Marks a story's sub-issue as one of this epic's. */
export function epicMarker(epic: number): MarkerName {
  return `epic:${epic}`;
}

/** Marks the not-planned comment of refine round `round`, so each round gets one. */
export function notPlannedMarker(round: number): MarkerName {
  return `not-planned:${round}`;
}

/** Marks the failure comment of one attempt of a story, so each attempt gets one. */
export function failureMarker(story: string, attempt: number): MarkerName {
  return `failure:${story}:${attempt}`;
}

/** What a marker name may hold: nothing that closes the HTML comment early. */
const MARKER_NAME = /^[A-Za-z0-9][A-Za-z0-9:._=/-]*$/;

/** The HTML comment for a marker name; a name that could break out of it is refused. */
export function markerComment(name: MarkerName | string): string {
  if (!MARKER_NAME.test(name) || name.includes('--') || name.length > 200) {
    throw new EpicflowError('internal', `invalid epicflow marker name ${JSON.stringify(name)}`);
  }
  return `<!-- epicflow:${name} -->`;
}

/** The plan section's first and last lines. */
export const PLAN_SECTION_START = markerComment('plan:start');
export const PLAN_SECTION_END = markerComment('plan:end');

/** The closing ` -->` is part of the match, so `story:a` never matches `story:ab`. */
export function hasMarker(body: string | null | undefined, name: MarkerName | string): boolean {
  return (body ?? '').includes(markerComment(name));
}

/** Every marker name in a body, in order. */
export function markerNames(body: string): string[] {
  return [...body.matchAll(/<!-- epicflow:([A-Za-z0-9][A-Za-z0-9:._=/-]*) -->/g)].map(
    (m) => m[1] ?? '',
  );
}

/** The epic a story sub-issue of ours belongs to, from its `epic:<n>` marker. */
export function epicOfStoryIssue(body: string): number | undefined {
  const m = /<!-- epicflow:epic:(\d+) -->/.exec(body);
  return m === null ? undefined : Number(m[1]);
}

/**
 * The body with the marker on its own last line (kept out of the first line so
 * notification previews stay readable). Idempotent.
 */
export function withMarker(body: string, marker: MarkerName): string {
  if (hasMarker(body, marker)) return body;
  return `${body.trimEnd()}\n\n${markerComment(marker)}\n`;
}

/** The body without the marker: what is left to write when the writer adds it again. */
export function withoutMarker(body: string, marker: MarkerName | string): string {
  return body.split(markerComment(marker)).join('').trimEnd();
}

/** Characters `withMarker` adds at most: renderers reserve them from the size limit. */
export function markerOverhead(marker: MarkerName): number {
  return markerComment(marker).length + 3;
}

/**
 * The body with its markers appended (kept off the first line so notifications stay
 * readable), truncated to fit GitHub's limit with a note that says where the rest is.
 */
export function withMarkers(
  text: string,
  markers: readonly (MarkerName | string)[],
  fullTextUrl?: string,
  limit = GITHUB_BODY_MAX,
): string {
  const tail = markers.length === 0 ? '' : `\n\n${markers.map(markerComment).join('\n')}`;
  if (text.length + tail.length <= limit) return `${text}${tail}`;
  const omittedNote = (n: number): string =>
    `\n\n… truncated: ${n} characters omitted to stay under GitHub's ${limit}-character limit.` +
    (fullTextUrl ? ` Full text: ${fullTextUrl}` : '');
  // The note's length depends on the omitted count; reserve room for its longest form.
  const room = limit - tail.length - omittedNote(text.length).length;
  let kept = text.slice(0, Math.max(0, room));
  // Do not split a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
  return `${kept}${omittedNote(text.length - kept.length)}${tail}`;
}
