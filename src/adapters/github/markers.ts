/**
 * Hidden markers find epicflow's own comments and issues again (`<!-- epicflow:<name> -->`),
 * and bodies are kept under GitHub's 65,536-character limit.
 */
import { EpicflowError } from '../../core/errors.js';

/** GitHub refuses longer issue and comment bodies with 422 "Body is too long". */
export const GITHUB_BODY_LIMIT = 65_536;

const MARKER_NAME = /^[A-Za-z0-9][A-Za-z0-9:._=/-]*$/;

/** `<!-- epicflow:<name> -->`; the name may not close the HTML comment early. */
export function marker(name: string): string {
  if (!MARKER_NAME.test(name) || name.includes('--') || name.length > 200) {
    throw new EpicflowError('internal', `invalid epicflow marker name ${JSON.stringify(name)}`);
  }
  return `<!-- epicflow:${name} -->`;
}

export function hasMarker(body: string | null | undefined, name: string): boolean {
  return (body ?? '').includes(marker(name));
}

/**
 * The body with its markers appended (kept off the first line so notifications stay
 * readable), truncated to fit GitHub's limit with a note that says where the rest is.
 */
export function withMarkers(
  text: string,
  markers: readonly string[],
  fullTextUrl?: string,
  limit = GITHUB_BODY_LIMIT,
): string {
  const tail = markers.length === 0 ? '' : `\n\n${markers.map(marker).join('\n')}`;
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
