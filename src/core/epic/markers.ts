/**
 * Hidden markers: how epicflow finds its own comments and sub-issues again
 * (PRODUCT §9.2). A marker is an HTML comment, invisible on GitHub. The adapter
 * must also check the author is epicflow's bot login, since anyone can paste a
 * marker into a comment of their own.
 */

/** The name inside `<!-- epicflow:<name> -->`. */
export type MarkerName =
  'status' | 'report' | 'violations' | `story:${string}` | `failure:${string}:${number}`;

export const STATUS_MARKER: MarkerName = 'status';
export const REPORT_MARKER: MarkerName = 'report';
export const VIOLATIONS_MARKER: MarkerName = 'violations';

/** Marks the sub-issue of one story. */
export function storyMarker(story: string): MarkerName {
  return `story:${story}`;
}

/** Marks the failure comment of one attempt of a story, so each attempt gets one. */
export function failureMarker(story: string, attempt: number): MarkerName {
  return `failure:${story}:${attempt}`;
}

/** The HTML comment for a marker name. */
export function markerComment(marker: MarkerName): string {
  return `<!-- epicflow:${marker} -->`;
}

/** The closing ` -->` is part of the match, so `story:a` never matches `story:ab`. */
export function hasMarker(body: string, marker: MarkerName): boolean {
  return body.includes(markerComment(marker));
}

/**
 * The body with the marker on its own last line (kept out of the first line so
 * notification previews stay readable). Idempotent.
 */
export function withMarker(body: string, marker: MarkerName): string {
  if (hasMarker(body, marker)) return body;
  return `${body.trimEnd()}\n\n${markerComment(marker)}\n`;
}

/** Characters `withMarker` adds at most: renderers reserve them from the size limit. */
export function markerOverhead(marker: MarkerName): number {
  return markerComment(marker).length + 3;
}
