import { describe, expect, it } from '@jest/globals';
import { isEpicflowError } from '../../../src/core/errors.js';
import {
  decideAfterHelperExclusion,
  decideAfterHelperTurn,
  HELPER_ATTEMPTS,
  INTERRUPTED,
  startHelperCall,
  type HelperCall,
  type HelperDecision,
  type HelperFacts,
} from '../../../src/core/story/index.js';

type Verdict = { readonly cleared: boolean };

const fresh = startHelperCall<Verdict>('judge').call;
const answered = (
  answer: { ok: true; value: Verdict } | { ok: false; error: string },
  over: Partial<Extract<HelperFacts<Verdict>, { kind: 'answered' }>> = {},
): HelperFacts<Verdict> => ({
  kind: 'answered',
  executor: 'j1',
  independent: true,
  interrupted: false,
  answer,
  ...over,
});
const stopped = (
  over: Partial<Extract<HelperFacts<Verdict>, { kind: 'stopped' }>>,
): HelperFacts<Verdict> => ({
  kind: 'stopped',
  executor: 'j1',
  interrupted: false,
  outcome: 'failed',
  missingBinary: false,
  detail: 'exit 1\nboom',
  ...over,
});

interface Row {
  readonly call: HelperCall;
  readonly facts: HelperFacts<Verdict>;
  readonly next: HelperDecision<Verdict>['next'];
  readonly effects?: HelperDecision<Verdict>['effects'];
  readonly then?: Partial<HelperCall>;
}

describe('startHelperCall', () => {
  it('asks at once, without a repair, with why there would be no answer', () => {
    const d = startHelperCall<Verdict>('verifier');
    expect(d.next).toEqual({ kind: 'ask', repairError: undefined });
    expect(d.waitMs).toBe(0);
    expect(d.call).toMatchObject({ attempts: 0, why: 'no executor can take the verifier role' });
  });
});

describe('decideAfterHelperTurn', () => {
  it.each<[string, Row]>([
    [
      'no executor for the role: no answer, and why',
      {
        call: fresh,
        facts: { kind: 'no-executor' },
        next: { kind: 'unavailable', why: 'no executor can take the judge role' },
      },
    ],
    [
      'no executor left after one stopped: the last reason',
      {
        call: { ...fresh, attempts: 1, why: 'j1 stopped: usage limit' },
        facts: { kind: 'no-executor' },
        next: { kind: 'unavailable', why: 'j1 stopped: usage limit' },
      },
    ],
    [
      'a readable answer is the answer, with who gave it',
      {
        call: fresh,
        facts: answered({ ok: true, value: { cleared: true } }, { independent: false }),
        next: { kind: 'answer', value: { cleared: true }, executor: 'j1', independent: false },
      },
    ],
    [
      'an unreadable answer is asked once more, quoting the problem',
      {
        call: fresh,
        facts: answered({ ok: false, error: 'cleared: Required' }),
        next: { kind: 'ask', repairError: 'cleared: Required' },
        effects: [
          {
            kind: 'say',
            message: 'judge answer of j1 unreadable (cleared: Required); asking once more',
          },
        ],
        then: { attempts: 0, repairError: 'cleared: Required' },
      },
    ],
    [
      'a second unreadable answer: no answer',
      {
        call: { ...fresh, repairError: 'cleared: Required' },
        facts: answered({ ok: false, error: 'not valid JSON: x' }),
        next: { kind: 'unavailable', why: 'j1 gave no valid answer: not valid JSON: x' },
      },
    ],
    [
      'an interrupt leaves the story waiting, even with an answer',
      {
        call: fresh,
        facts: answered({ ok: true, value: { cleared: true } }, { interrupted: true }),
        next: { kind: 'stop', status: 'waiting', reason: INTERRUPTED },
      },
    ],
    [
      'a failed turn: no answer, with its detail',
      {
        call: fresh,
        facts: stopped({}),
        next: { kind: 'unavailable', why: 'j1 failed: exit 1 | boom' },
      },
    ],
    [
      'a missing CLI goes to the roster',
      {
        call: fresh,
        facts: stopped({ missingBinary: true, detail: 'codex: not found' }),
        next: {
          kind: 'exclude',
          executor: 'j1',
          signal: { kind: 'missing-binary', detail: 'codex: not found' },
        },
        then: { attempts: 1 },
      },
    ],
    [
      'a usage limit goes to the roster with its reset time',
      {
        call: fresh,
        facts: stopped({ outcome: 'usage-limit', detail: 'limit', resetAt: 'T' }),
        next: {
          kind: 'exclude',
          executor: 'j1',
          signal: { kind: 'signal', outcome: 'usage-limit', resetAt: 'T', detail: 'limit' },
        },
        then: { attempts: 1 },
      },
    ],
  ])('%s', (_name, row) => {
    const d = decideAfterHelperTurn(row.call, row.facts);
    expect(d.next).toEqual(row.next);
    expect(d.effects).toEqual(row.effects ?? []);
    expect(d.waitMs).toBe(0);
    if (row.then !== undefined) expect(d.call).toMatchObject(row.then);
  });
});

describe('decideAfterHelperExclusion', () => {
  /** The call after a turn of j1 that stopped this way, `attempts` infrastructure stops before. */
  const after = (facts: HelperFacts<Verdict>, attempts = 0): HelperCall =>
    decideAfterHelperTurn({ ...fresh, attempts, repairError: 'e' }, facts).call;
  it.each<[string, HelperCall, string | null, HelperDecision<Verdict>['next'], number, string]>([
    [
      'a missing CLI: another executor is asked at once',
      after(stopped({ missingBinary: true, detail: 'codex: not found\nnpm i -g codex' })),
      'not installed',
      { kind: 'ask', repairError: 'e' },
      0,
      'j1: codex: not found | npm i -g codex',
    ],
    [
      'an exclusion: another executor is asked at once',
      after(stopped({ outcome: 'usage-limit' })),
      'usage limit',
      { kind: 'ask', repairError: 'e' },
      0,
      'j1 stopped: usage limit',
    ],
    [
      'a rate limit below the threshold: asked again after 1 s',
      after(stopped({ outcome: 'rate-limited' })),
      null,
      { kind: 'ask', repairError: 'e' },
      1000,
      'j1 stopped: rate-limited',
    ],
    [
      'the second one waits 2 s',
      after(stopped({ outcome: 'rate-limited' }), 1),
      null,
      { kind: 'ask', repairError: 'e' },
      2000,
      'j1 stopped: rate-limited',
    ],
    [
      `after ${HELPER_ATTEMPTS} attempts: no answer (a rate limit still waits first)`,
      after(stopped({ outcome: 'rate-limited' }), HELPER_ATTEMPTS - 1),
      null,
      { kind: 'unavailable', why: 'j1 stopped: rate-limited' },
      3000,
      'j1 stopped: rate-limited',
    ],
    [
      `after ${HELPER_ATTEMPTS} attempts ending on a missing CLI: no answer`,
      after(stopped({ missingBinary: true, detail: 'gone' }), HELPER_ATTEMPTS - 1),
      'not installed',
      { kind: 'unavailable', why: 'j1: gone' },
      0,
      'j1: gone',
    ],
  ])('%s', (_name, call, exclusion, next, waitMs, why) => {
    const d = decideAfterHelperExclusion<Verdict>(call, { exclusion });
    expect(d.next).toEqual(next);
    expect(d.waitMs).toBe(waitMs);
    expect(d.call.why).toBe(why);
    expect(d.call.excluding).toBeUndefined();
  });

  it('a roster answer while no executor is being excluded is an internal error', () => {
    let error: unknown;
    try {
      decideAfterHelperExclusion(fresh, { exclusion: null });
    } catch (e) {
      error = e;
    }
    expect(isEpicflowError(error, 'internal')).toBe(true);
  });

  it('a whole call: unreadable, rate limited, then answered by another executor', () => {
    let d = startHelperCall<Verdict>('judge');
    d = decideAfterHelperTurn(d.call, answered({ ok: false, error: 'bad' }));
    d = decideAfterHelperTurn(d.call, stopped({ outcome: 'rate-limited' }));
    d = decideAfterHelperExclusion(d.call, { exclusion: null });
    expect(d.next).toEqual({ kind: 'ask', repairError: 'bad' });
    d = decideAfterHelperTurn(
      d.call,
      answered({ ok: true, value: { cleared: false } }, { executor: 'j2' }),
    );
    expect(d.next).toEqual({
      kind: 'answer',
      value: { cleared: false },
      executor: 'j2',
      independent: true,
    });
  });
});
