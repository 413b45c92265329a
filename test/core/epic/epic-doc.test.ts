import { describe, expect, it } from '@jest/globals';
import { epicDocPatch, patchedEpicDoc } from '../../../src/core/epic/epic-doc.js';
import type { Action } from '../../../src/core/epic/index.js';

const cancel = { kind: 'cancel', message: 'cancelled by @alice' } as const;
const HASHES = { api: 'aaaa', db: 'bbbb' };

describe('epicDocPatch: what one decision changes of the epic document', () => {
  it("folds the decision's approval, halt and owner claim into one patch", () => {
    const actions: Action[] = [
      { kind: 'approve-plan', plan: '0123456789abcdef' },
      { kind: 'clear-halt' },
      { kind: 'reply', body: 'ok' },
    ];
    expect(epicDocPatch(actions, { claim: 'epicflow[bot]', planHashes: HASHES })).toEqual({
      claim: 'epicflow[bot]',
      approval: { plan: '0123456789abcdef', stories: HASHES },
      halt: null,
    });
    expect(epicDocPatch([{ kind: 'set-halt', halt: cancel }], {})).toEqual({ halt: cancel });
  });

  it('is nothing when the decision changes nothing of it', () => {
    expect(epicDocPatch([{ kind: 'reply', body: 'hi' }, { kind: 'finish' }], {})).toBeUndefined();
  });
});

describe('patchedEpicDoc', () => {
  const doc = { owner: 'app[bot]', approvedPlan: '0123456789abcdef', halt: cancel };

  it('never replaces a recorded owner', () => {
    expect(patchedEpicDoc(doc, { claim: 'github-actions[bot]' })).toEqual(doc);
    expect(patchedEpicDoc({}, { claim: 'github-actions[bot]' })).toEqual({
      owner: 'github-actions[bot]',
    });
  });

  it('keeps what the patch does not name, and lifts the halt on null', () => {
    expect(
      patchedEpicDoc(doc, { approval: { plan: 'fedcba9876543210', stories: HASHES }, halt: null }),
    ).toEqual({ owner: 'app[bot]', approvedPlan: 'fedcba9876543210', approvedStories: HASHES });
  });

  it('changes nothing for an approval of the plan already approved', () => {
    expect(patchedEpicDoc(doc, { approval: { plan: '0123456789abcdef', stories: HASHES } })).toBe(
      doc,
    );
  });
});
