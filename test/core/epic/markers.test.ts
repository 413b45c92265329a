/**
 * The one marker module: every hidden marker epicflow writes or reads is made and
 * parsed there. A name that could close the HTML comment early (and so show text, or
 * forge another marker) is refused, whoever builds it.
 */
import { describe, expect, it } from '@jest/globals';
import {
  epicMarker,
  epicOfStoryIssue,
  ERROR_MARKER,
  hasMarker,
  markerComment,
  markerNames,
  NOT_AN_EPIC_MARKER,
  PLAN_SECTION_END,
  PLAN_SECTION_START,
  storyMarker,
  withMarkers,
  withoutMarker,
} from '../../../src/core/epic/markers.js';
import { isEpicflowError } from '../../../src/core/errors.js';

describe('markers', () => {
  it('names every comment and section epicflow keeps', () => {
    expect([ERROR_MARKER, NOT_AN_EPIC_MARKER, epicMarker(12)].map(markerComment)).toEqual([
      '<!-- epicflow:error -->',
      '<!-- epicflow:not-an-epic -->',
      '<!-- epicflow:epic:12 -->',
    ]);
    expect([PLAN_SECTION_START, PLAN_SECTION_END]).toEqual([
      '<!-- epicflow:plan:start -->',
      '<!-- epicflow:plan:end -->',
    ]);
  });

  it('refuses a name that would end the comment early or forge another marker', () => {
    for (const name of [
      'a --> shown <!-- epicflow:status',
      'a--b',
      '',
      ' status',
      'x'.repeat(201),
    ]) {
      let thrown: unknown;
      try {
        markerComment(name);
      } catch (e) {
        thrown = e;
      }
      expect(isEpicflowError(thrown, 'internal')).toBe(true);
    }
    // Looking for a hostile name is refused too: no body can answer for it.
    expect(() => hasMarker('', storyMarker('a -->'))).toThrow('invalid epicflow marker name');
  });

  it('reads back the names in a body and the epic of a story sub-issue', () => {
    const body = withMarkers('Story text', [storyMarker('api'), epicMarker(7)]);
    expect(markerNames(body)).toEqual(['story:api', 'epic:7']);
    expect(epicOfStoryIssue(body)).toBe(7);
    expect(epicOfStoryIssue('no marker here')).toBeUndefined();
  });

  it('takes a marker off a body the writer marks again', () => {
    const body = 'Status\n\n<!-- epicflow:status -->\n';
    expect(withoutMarker(body, 'status')).toBe('Status');
    expect(withMarkers(withoutMarker(body, 'status'), ['status'])).toBe(
      'Status\n\n<!-- epicflow:status -->',
    );
  });

  it('keeps a body with its markers under the limit, saying what was cut', () => {
    const body = withMarkers('x'.repeat(500), [storyMarker('api')], 'https://example.com/r', 200);
    expect(body.length).toBeLessThanOrEqual(200);
    expect(body).toContain('characters omitted');
    expect(body).toContain('Full text: https://example.com/r');
    expect(body.endsWith('<!-- epicflow:story:api -->')).toBe(true);
  });
});
