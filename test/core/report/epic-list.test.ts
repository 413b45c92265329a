import { describe, expect, it } from '@jest/globals';
import { renderEpicList, type EpicListEntry } from '../../../src/core/report/index.js';

const entry = (over: Partial<EpicListEntry>): EpicListEntry => ({
  epic: 'e',
  title: null,
  stories: 2,
  merged: 0,
  done: 0,
  landedInto: null,
  running: false,
  ...over,
});

describe('renderEpicList', () => {
  it('says where each epic stands', () => {
    expect(
      renderEpicList([
        entry({ epic: 'new', running: true }),
        entry({ epic: 'skipped', merged: 1, done: 2, title: 'Half merged, half skipped' }),
        entry({ epic: 'landed', merged: 2, done: 2, landedInto: 'release' }),
      ]),
    ).toBe(
      [
        'epics in this repository (3):',
        '  new      0/2 merged · in progress (running now)',
        '  skipped  1/2 merged · finished, not landed       Half merged, half skipped',
        '  landed   2/2 merged · landed in release',
        '',
      ].join('\n'),
    );
  });

  it('an epic without stories is not finished', () => {
    expect(renderEpicList([entry({ stories: 0 })])).toContain('0/0 merged · in progress');
  });
});
