import { describe, expect, it } from '@jest/globals';
import {
  formatHandover,
  handoverTexts,
  parseHandover,
  type RetroHandover,
} from '../../../src/core/publish/handover.js';
import { isResultRefusal } from '../../../src/core/publish/result.js';
import { describeSecrets, scanTextsForSecrets } from '../../../src/core/publish/secrets.js';

const retro: RetroHandover = {
  version: 1,
  job: 'retro',
  epic: '7',
  attempt: 2,
  usage: [],
  notes: ['discarded a change to README.md'],
  outcome: {
    kind: 'proposed',
    rounds: 1,
    fixes: [{ story: 'api', why: 'the export is missing', kind: 'retry', note: 'Export it.' }],
    leftOut: [],
  },
};

const expected = { job: 'retro', epic: '7', attempt: 2 } as const;

function refusal(text: string, want: { job: 'plan' | 'retro'; epic: string; attempt: number }) {
  try {
    parseHandover(text, 'result.json', want);
  } catch (e) {
    if (isResultRefusal(e, 'malformed')) return [e.message, ...e.details].join('\n');
    throw e;
  }
  throw new Error('not refused');
}

describe('a planning or retro hand-over, as the publish job reads it', () => {
  it('reads back what the work job wrote', () => {
    expect(parseHandover(formatHandover(retro), 'result.json', expected)).toEqual(retro);
  });

  it('refuses a fix of a kind the proposal does not know, naming the field', () => {
    const forged = {
      ...retro,
      outcome: { ...retro.outcome, fixes: [{ story: 'api', why: 'x', kind: 'push-to-main' }] },
    };
    expect(refusal(JSON.stringify(forged), expected)).toMatch(/outcome\.fixes\.0/);
  });

  it('refuses another job, epic or attempt, and a field it does not know', () => {
    expect(refusal(formatHandover(retro), { ...expected, job: 'plan' })).toContain(
      'is not a version 1 plan result',
    );
    expect(refusal(formatHandover(retro), { ...expected, epic: '8' })).toContain(
      'field epic is "7", expected "8"',
    );
    expect(refusal(formatHandover(retro), { ...expected, attempt: 1 })).toContain(
      'field attempt is 2, expected 1',
    );
    expect(refusal(JSON.stringify({ ...retro, push: 'main' }), expected)).toContain('push');
    expect(refusal('{', expected)).toContain('is not JSON');
  });

  it('refuses a plan section longer than an issue body', () => {
    const plan = {
      version: 1,
      job: 'plan',
      epic: '7',
      attempt: 1,
      usage: [],
      notes: [],
      rounds: 1,
      executors: ['planner'],
      outcome: { kind: 'planned', section: 'x'.repeat(70_000), notPlanned: [] },
    };
    expect(refusal(JSON.stringify(plan), { job: 'plan', epic: '7', attempt: 1 })).toContain(
      'outcome.section',
    );
  });

  it('names every text it would write, so a credential in any of them is found', () => {
    const token = 'ghs_' + 'a'.repeat(36);
    const leaking: RetroHandover = {
      ...retro,
      outcome: {
        kind: 'proposed',
        rounds: 1,
        fixes: [{ story: 'db', why: `use ${token}`, kind: 'nothing' }],
        leftOut: ['secret-of-the-job-1234567'],
      },
    };
    expect(
      describeSecrets(
        scanTextsForSecrets(handoverTexts(leaking), ['secret-of-the-job-1234567']),
      ).map((l) => l.replace(/\(.*\)/, '')),
    ).toEqual(['the fix for db: GitHub token ', 'left out 1: a secret of the publish job ']);
  });
});
