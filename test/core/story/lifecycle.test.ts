import { describe, expect, it } from '@jest/globals';
import type { ExecutorConfig } from '../../../src/core/config/types.js';
import { isEpicflowError } from '../../../src/core/errors.js';
import type { GateVerdict } from '../../../src/core/gates/index.js';
import type { JudgeVerdict } from '../../../src/core/judge/index.js';
import { describeStrays, type PerimeterResult } from '../../../src/core/perimeter/index.js';
import type { PromptFeedback } from '../../../src/core/prompt/index.js';
import {
  decideAfterCatchUp,
  decideAfterCheck,
  decideAfterExclusion,
  decideAfterHandover,
  decideAfterJudge,
  decideAfterTurn,
  decideAfterVerifier,
  INTERRUPTED,
  startRounds,
  type Awaiting,
  type BlockedClaim,
  type CatchUpFacts,
  type CheckFacts,
  type Decision,
  type JudgeFacts,
  type RoundRules,
  type StoryAction,
  type StoryEffect,
  type StoryRounds,
  type TurnFacts,
} from '../../../src/core/story/index.js';

function executor(id: string): ExecutorConfig {
  return { id, harness: 'command', args: [], slots: 1, priority: 100, roles: ['coder'], env: {} };
}

const alpha = executor('alpha');
const beta = executor('beta');
const none = { transient: 0, backoffMs: 1000 };
const noJudge: RoundRules = {
  fixRounds: 2,
  judgeRounds: undefined,
  verifier: false,
  retries: none,
};
const withJudge: RoundRules = { fixRounds: 2, judgeRounds: 2, verifier: false, retries: none };

/** The state while waiting for `awaiting`, with `over` changed from a fresh start. */
function at(awaiting: Awaiting, over: Partial<StoryRounds> = {}): StoryRounds {
  return { ...startRounds(noJudge, alpha, ['alpha']).state, awaiting, ...over };
}

const say = (message: string): StoryEffect => ({ kind: 'say', message });
/** The record's progress: `commit` passed these checks (a resume starts there). */
const progress = (commit: string, passed: 'checks' | 'judge'): StoryEffect => ({
  kind: 'progress',
  progress: { commit, passed },
});
const code = (feedback: PromptFeedback | undefined): StoryAction => ({
  kind: 'code',
  feedback,
  waitMs: 0,
});
const failed = (reason: string, outgrown?: 'timed-out' | 'still-red'): StoryAction => ({
  kind: 'stop',
  status: 'failed',
  reason,
  ...(outgrown === undefined ? {} : { outgrown }),
});
/** Failed as a story too big for one coder: still red after its fix rounds. */
const stillRed = (reason: string): StoryAction => failed(reason, 'still-red');

interface Row<F> {
  readonly state: StoryRounds;
  readonly facts: F;
  readonly next: StoryAction;
  readonly effects?: readonly StoryEffect[];
  /** Fields of the new state that must hold. */
  readonly then?: Partial<StoryRounds>;
}

function check<F>(decide: (s: StoryRounds, f: F) => Decision, row: Row<F>): void {
  const d = decide(row.state, row.facts);
  expect(d.next).toEqual(row.next);
  expect(d.effects).toEqual(row.effects ?? []);
  if (row.then !== undefined) expect(d.state).toMatchObject(row.then);
  // A step that ends the story waits for nothing more.
  const ends = ['stop', 'integrate', 'in-place'].includes(d.next.kind);
  expect(d.state.awaiting.step === 'end').toBe(ends);
}

describe('startRounds', () => {
  it('starts with a coder turn without feedback and every round of the config left', () => {
    const d = startRounds({ fixRounds: 3, judgeRounds: 1, verifier: true, retries: none }, alpha, [
      'x',
      'alpha',
    ]);
    expect(d.next).toEqual(code(undefined));
    expect(d.effects).toEqual([]);
    expect(d.state).toMatchObject({
      awaiting: { step: 'turn' },
      executor: alpha,
      chain: ['x', 'alpha'],
      handovers: 0,
      fixRoundsLeft: 3,
      perimeterShown: false,
      blockedPushback: false,
      judgeRevisions: 0,
      transientRetries: 0,
      checked: '',
    });
  });
});

// --- coder turns and BLOCKED_ON ------------------------------------------------

const ok: TurnFacts = { interrupted: false, outcome: 'ok', missingBinary: false, detail: '' };
const planned: BlockedClaim = {
  claim: 'src/api/client.ts',
  answer: 'src/api/client.ts belongs to story api, already merged before you started.',
  suggestedEdit: 'add "api" to dependsOn of "ui"',
  decided: true,
};
const open: BlockedClaim = { ...planned, claim: 'the payments service', decided: false };
const turn = at({ step: 'turn' });

describe('decideAfterTurn', () => {
  it.each<[string, Row<TurnFacts>]>([
    ['an ok turn is checked', { state: turn, facts: ok, next: { kind: 'check' } }],
    [
      'an interrupt leaves the story waiting, whatever the turn did',
      {
        state: turn,
        facts: { ...ok, interrupted: true, outcome: 'failed' },
        next: { kind: 'stop', status: 'waiting', reason: INTERRUPTED },
      },
    ],
    [
      'a failed turn fails the story with the first and last lines of its detail',
      {
        state: turn,
        facts: { ...ok, outcome: 'failed', detail: 'exit 2\n\n a\nb\nc\nd\n' },
        next: failed('coder turn failed (alpha): exit 2 | b | c | d'),
      },
    ],
    [
      'a turn that ran out of time fails the story as one too big for a coder',
      {
        state: turn,
        facts: { ...ok, outcome: 'failed', timedOut: true, detail: 'timed out after 60s' },
        next: failed('coder turn failed (alpha): timed out after 60s', 'timed-out'),
      },
    ],
    [
      'a missing CLI goes to the roster as such, even when the turn also failed',
      {
        state: turn,
        facts: { ...ok, outcome: 'failed', missingBinary: true, detail: 'not found' },
        next: {
          kind: 'exclude',
          executor: 'alpha',
          signal: { kind: 'missing-binary', detail: 'not found' },
        },
        then: { awaiting: { step: 'exclusion' } },
      },
    ],
    [
      'a usage limit goes to the roster with its reset time',
      {
        state: turn,
        facts: { ...ok, outcome: 'usage-limit', detail: 'limit', resetAt: '2030-01-01T00:00:00Z' },
        next: {
          kind: 'exclude',
          executor: 'alpha',
          signal: {
            kind: 'signal',
            outcome: 'usage-limit',
            resetAt: '2030-01-01T00:00:00Z',
            detail: 'limit',
          },
        },
      },
    ],
    [
      'BLOCKED_ON the plan settles: pushed back once with the plan answer',
      {
        state: at({ step: 'turn' }, { rules: { ...noJudge, verifier: true } }),
        facts: { ...ok, blocked: planned },
        next: code({ blocked: { claim: planned.claim, answer: planned.answer } }),
        effects: [say('BLOCKED_ON rejected once: src/api/client.ts')],
        then: { blockedPushback: true },
      },
    ],
    [
      'BLOCKED_ON the plan cannot settle, with a verifier: the verifier is asked',
      {
        state: at({ step: 'turn' }, { rules: { ...noJudge, verifier: true } }),
        facts: { ...ok, blocked: open },
        next: { kind: 'verify', claim: open },
        then: { awaiting: { step: 'verifier', claim: open }, blockedPushback: false },
      },
    ],
    [
      'BLOCKED_ON the plan cannot settle, without a verifier: pushed back from the plan',
      {
        state: turn,
        facts: { ...ok, blocked: open },
        next: code({ blocked: { claim: open.claim, answer: open.answer } }),
        effects: [say('BLOCKED_ON rejected once: the payments service')],
        then: { blockedPushback: true },
      },
    ],
    [
      'BLOCKED_ON again after the pushback: a missing dependency with the plan edit',
      {
        state: at(
          { step: 'turn' },
          { blockedPushback: true, rules: { ...noJudge, verifier: true } },
        ),
        facts: { ...ok, blocked: open },
        next: failed(
          'missing dependency: the payments service (suggested plan edit: add "api" to dependsOn of "ui")',
        ),
      },
    ],
  ])('%s', (_name, row) => check(decideAfterTurn, row));
});

describe('decideAfterTurn: stalls', () => {
  const silence = { signal: 'silence', detail: 'no output for 15m' } as const;
  const gateRed: PromptFeedback = {
    gateFailures: [{ command: 'npm test', lines: ['x fails'], output: 'x fails' }],
  };
  const note = (text: string): StoryEffect => ({ kind: 'note', notes: [text] });

  it.each<[string, Row<TurnFacts>]>([
    [
      'a stalled turn counts as a failed round: another turn, told why, keeping its feedback',
      {
        state: at(
          { step: 'turn' },
          { feedback: { ...gateRed, takeover: { from: 'beta', reason: 'quota' } } },
        ),
        facts: { ...ok, round: 2, outcome: 'failed', detail: 'stalled', stalled: silence },
        next: code({ ...gateRed, stalled: 'no output for 15m' }),
        effects: [
          say('round 2 stalled (silence): no output for 15m; another round'),
          note('round 2 stalled (silence): no output for 15m'),
        ],
        then: { fixRoundsLeft: 1 },
      },
    ],
    [
      'a stall with no fix round left fails the story, never as a fault to retry',
      {
        state: at(
          { step: 'turn' },
          { fixRoundsLeft: 0, rules: { ...noJudge, retries: { transient: 3, backoffMs: 1 } } },
        ),
        facts: {
          ...ok,
          round: 3,
          outcome: 'failed',
          exitCode: null,
          detail: 'stalled',
          stalled: { signal: 'repeat', detail: 'the same tool call 5 times in a row: Bash {}' },
        },
        next: failed('stalled (alpha): the same tool call 5 times in a row: Bash {}'),
        effects: [note('round 3 stalled (repeat): the same tool call 5 times in a row: Bash {}')],
      },
    ],
    [
      'a fix round that changed nothing is a stall: the same diff is not checked again',
      {
        state: at({ step: 'turn' }, { feedback: gateRed, fixRoundsLeft: 1 }),
        facts: { ...ok, round: 2, unchanged: true },
        next: code({ ...gateRed, stalled: 'it changed nothing' }),
        effects: [
          say('round 2 stalled (no-progress): it changed nothing; another round'),
          note('round 2 stalled (no-progress): it changed nothing'),
        ],
        then: { fixRoundsLeft: 0 },
      },
    ],
    [
      'the last fix round changing nothing fails the story with the failures that still stand',
      {
        state: at(
          { step: 'turn' },
          { feedback: gateRed, fixRoundsLeft: 0, blocking: 'npm test: x fails' },
        ),
        facts: { ...ok, round: 3, unchanged: true },
        next: stillRed('gates failed: npm test: x fails (stalled (alpha): it changed nothing)'),
        effects: [note('round 3 stalled (no-progress): it changed nothing')],
      },
    ],
    [
      'a first turn or a perimeter round that changed nothing is checked as before',
      {
        state: at({ step: 'turn' }, { feedback: { perimeter: ['README.md'] } }),
        facts: { ...ok, round: 2, unchanged: true },
        next: { kind: 'check' },
      },
    ],
  ])('%s', (_name, row) => check(decideAfterTurn, row));
});

describe('decideAfterVerifier', () => {
  const asked = at({ step: 'verifier', claim: open });
  it.each<[string, Row<Parameters<typeof decideAfterVerifier>[1]>]>([
    [
      'a real claim (confirmed) fails the story as a missing dependency',
      {
        state: asked,
        facts: { kind: 'answer', executor: 'v', real: true, reason: 'no such service' },
        next: failed(
          'missing dependency: the payments service (suggested plan edit: add "api" to dependsOn of "ui"); confirmed by v: no such service',
        ),
        effects: [say('BLOCKED_ON confirmed by v: no such service')],
      },
    ],
    [
      'a claim the verifier rejects is pushed back with its reason',
      {
        state: asked,
        facts: { kind: 'answer', executor: 'v', real: false, reason: 'it is a stub you write' },
        next: code({
          blocked: {
            claim: open.claim,
            answer: `${open.answer}\nA verifier checked your claim and found it is not real: it is a stub you write`,
          },
        }),
        effects: [say('BLOCKED_ON rejected once: the payments service')],
        then: { blockedPushback: true },
      },
    ],
    [
      'no verifier available: the plan answers',
      {
        state: asked,
        facts: { kind: 'unavailable', why: 'no executor can take the verifier role' },
        next: code({ blocked: { claim: open.claim, answer: open.answer } }),
        effects: [
          say(
            'verifier unavailable (no executor can take the verifier role); answering from the plan',
          ),
          say('BLOCKED_ON rejected once: the payments service'),
        ],
        then: { blockedPushback: true },
      },
    ],
  ])('%s', (_name, row) => check(decideAfterVerifier, row));
});

// --- handovers and rate limits ---------------------------------------------------

describe('decideAfterExclusion and decideAfterHandover', () => {
  const excluded = at({ step: 'exclusion' }, { feedback: { oracle: ['x'] } });
  const exhausted = { message: 'roster exhausted: alpha (usage limit; back at 10:00)', until: 'T' };
  it.each<[string, Row<Parameters<typeof decideAfterExclusion>[1]>]>([
    [
      'a rate limit below the threshold retries the same executor after 1 s, same feedback',
      {
        state: excluded,
        facts: { exclusion: null, exhausted: null },
        next: { kind: 'code', feedback: { oracle: ['x'] }, waitMs: 1000 },
        effects: [say('alpha was rate limited; trying again')],
        then: { rateRetries: 1, executor: alpha },
      },
    ],
    [
      'the second retry waits 2 s',
      {
        state: { ...excluded, rateRetries: 1 },
        facts: { exclusion: null, exhausted: null },
        next: { kind: 'code', feedback: { oracle: ['x'] }, waitMs: 2000 },
        effects: [say('alpha was rate limited; trying again')],
        then: { rateRetries: 2 },
      },
    ],
    [
      'an excluded executor hands over',
      {
        state: { ...excluded, rateRetries: 2 },
        facts: { exclusion: 'usage limit', exhausted: null },
        next: { kind: 'hand-over' },
        effects: [say('alpha stopped: usage limit')],
        then: {
          rateRetries: 0,
          awaiting: { step: 'handover', why: 'usage limit', exhausted: false },
        },
      },
    ],
    [
      'an exclusion that leaves no coder halts launching, then hands over',
      {
        state: excluded,
        facts: { exclusion: 'usage limit', exhausted },
        next: { kind: 'hand-over' },
        effects: [
          say('alpha stopped: usage limit'),
          {
            kind: 'halt',
            halt: { kind: 'roster-exhausted', message: exhausted.message, until: 'T' },
          },
        ],
        then: { awaiting: { step: 'handover', why: 'usage limit', exhausted: true } },
      },
    ],
    [
      'after 2 handovers the story fails',
      {
        state: { ...excluded, handovers: 2 },
        facts: { exclusion: 'outage', exhausted: { message: 'roster exhausted: none' } },
        next: failed('alpha stopped (outage) after 2 handovers'),
        effects: [
          say('alpha stopped: outage'),
          { kind: 'halt', halt: { kind: 'roster-exhausted', message: 'roster exhausted: none' } },
        ],
      },
    ],
  ])('%s', (_name, row) => check(decideAfterExclusion, row));

  it.each<[string, Row<Parameters<typeof decideAfterHandover>[1]>]>([
    [
      'the next coder takes over with the feedback and a takeover note',
      {
        state: at(
          { step: 'handover', why: 'usage limit', exhausted: false },
          { feedback: { oracle: ['x'] }, handovers: 1 },
        ),
        facts: { next: beta },
        next: code({ oracle: ['x'], takeover: { from: 'alpha', reason: 'usage limit' } }),
        effects: [
          say('handed over from alpha to beta'),
          { kind: 'executors', executors: ['alpha', 'beta'] },
        ],
        then: { executor: beta, chain: ['alpha', 'beta'], handovers: 2 },
      },
    ],
    [
      'no other coder, the roster not exhausted: the story fails',
      {
        state: at({ step: 'handover', why: 'auth', exhausted: false }),
        facts: { next: null },
        next: failed('alpha stopped (auth) and no other executor can take over'),
      },
    ],
    [
      'no other coder, the roster exhausted: the story waits for an executor',
      {
        state: at({ step: 'handover', why: 'usage limit', exhausted: true }),
        facts: { next: null },
        next: {
          kind: 'stop',
          status: 'waiting',
          reason: 'alpha stopped (usage limit) and no other executor can take over',
        },
      },
    ],
  ])('%s', (_name, row) => check(decideAfterHandover, row));
});

// --- checks: gates, oracle guard, perimeter ---------------------------------------

const clean: PerimeterResult = { owned: ['src/a.ts'], readOnly: [], outside: [], forbidden: [] };
const stray: PerimeterResult = { ...clean, readOnly: ['docs/r.md'], outside: ['OUT.md'] };
const forbidden: PerimeterResult = {
  ...clean,
  forbidden: [{ path: '.github/workflows/ci.yml', reason: 'workflow file' }],
};
const pass: GateVerdict = { command: 'npm test', status: 'pass', newLines: [], passCount: 3 };
const red: GateVerdict = {
  command: 'npm test',
  status: 'new',
  newLines: ['FAIL a', 'FAIL b', 'FAIL c', 'FAIL d'],
  passCount: 1,
};
const inherited: GateVerdict = {
  command: 'lint',
  status: 'inherited',
  newLines: [],
  passCount: null,
};
const green: CheckFacts = {
  interrupted: false,
  empty: false,
  verdicts: [pass, inherited],
  oracle: [],
  perimeter: clean,
  runs: [
    { command: 'npm test', output: 'the whole output' },
    { command: 'lint', output: 'old warnings' },
  ],
  commit: 'c1',
};
const failing: CheckFacts = { ...green, verdicts: [red, inherited] };
const gateFeedback = { command: 'npm test', lines: red.newLines, output: 'the whole output' };

describe('decideAfterCheck', () => {
  const checking = at({ step: 'check' });
  const judging = at({ step: 'check' }, { rules: withJudge });
  it.each<[string, Row<CheckFacts>]>([
    [
      'an interrupt leaves the story waiting: killed gates prove nothing',
      {
        state: checking,
        facts: { ...failing, interrupted: true },
        next: { kind: 'stop', status: 'waiting', reason: INTERRUPTED },
      },
    ],
    [
      'no changes without a judge fail',
      {
        state: checking,
        facts: { ...green, empty: true },
        next: failed('no changes'),
      },
    ],
    [
      'no changes with a judge: the judge says whether the work is in place',
      {
        state: judging,
        facts: { ...green, empty: true },
        next: { kind: 'judge', inPlace: true },
        then: { awaiting: { step: 'judge', inPlace: true } },
      },
    ],
    [
      'a new gate failure gets a fix round with the failing lines and the whole output',
      {
        state: checking,
        facts: failing,
        next: code({ gateFailures: [gateFeedback], oracle: [] }),
        effects: [say('gates failed: npm test: FAIL a')],
        then: { fixRoundsLeft: 1, feedback: { gateFailures: [gateFeedback], oracle: [] } },
      },
    ],
    [
      'an oracle finding alone gets a fix round',
      {
        state: checking,
        facts: { ...green, oracle: ['test deleted: a.test.ts', 'fewer tests pass'] },
        next: code({ gateFailures: [], oracle: ['test deleted: a.test.ts', 'fewer tests pass'] }),
        effects: [say('gates failed: test deleted: a.test.ts; fewer tests pass')],
      },
    ],
    [
      'a fix round also shows strays the coder has not seen',
      {
        state: checking,
        facts: { ...failing, perimeter: stray },
        next: code({
          gateFailures: [gateFeedback],
          oracle: [],
          perimeter: [
            'docs/r.md: read-only for this story (context, never change)',
            "OUT.md: not in this story's owned paths",
          ],
        }),
        effects: [say('gates failed: npm test: FAIL a')],
        then: { perimeterShown: true },
      },
    ],
    [
      'a fix round does not show strays twice',
      {
        state: at({ step: 'check' }, { perimeterShown: true }),
        facts: { ...failing, perimeter: stray },
        next: code({ gateFailures: [gateFeedback], oracle: [] }),
        effects: [say('gates failed: npm test: FAIL a')],
      },
    ],
    [
      'fix rounds exhausted: failed with three lines per gate and the oracle findings',
      {
        state: at({ step: 'check' }, { fixRoundsLeft: 0 }),
        facts: { ...failing, oracle: ['fewer tests pass'] },
        next: stillRed('gates failed: npm test: FAIL a; FAIL b; FAIL c | fewer tests pass'),
      },
    ],
    [
      'a red gate naming no line is reported as failed',
      {
        state: at({ step: 'check' }, { fixRoundsLeft: 0 }),
        facts: { ...failing, verdicts: [{ ...red, newLines: [] }] },
        next: stillRed('gates failed: npm test: failed'),
      },
    ],
    [
      'strays not shown yet: one perimeter round',
      {
        state: checking,
        facts: { ...green, perimeter: stray },
        next: code({
          perimeter: [
            'docs/r.md: read-only for this story (context, never change)',
            "OUT.md: not in this story's owned paths",
          ],
        }),
        effects: [say('gates passed'), say('changes outside its perimeter: docs/r.md, OUT.md')],
        then: { perimeterShown: true, fixRoundsLeft: 2 },
      },
    ],
    [
      'forbidden paths are shown once like strays',
      {
        state: checking,
        then: { perimeterShown: true },
        facts: { ...green, perimeter: forbidden },
        // The lines are the perimeter's own (`describeStrays`).
        next: code({ perimeter: describeStrays(forbidden) }),
        effects: [
          say('gates passed'),
          say('changes outside its perimeter: .github/workflows/ci.yml'),
        ],
      },
    ],
    [
      'forbidden paths still there once shown: refused',
      {
        state: at({ step: 'check' }, { perimeterShown: true }),
        facts: { ...green, perimeter: forbidden },
        next: failed('refused: .github/workflows/ci.yml (workflow file)'),
        effects: [say('gates passed')],
      },
    ],
    [
      'strays still there once shown: put back, then checked again',
      {
        state: at({ step: 'check' }, { perimeterShown: true }),
        facts: { ...green, perimeter: stray },
        next: { kind: 'restore', paths: ['docs/r.md', 'OUT.md'] },
        effects: [say('gates passed')],
        then: { checked: 'c1', awaiting: { step: 'recheck' } },
      },
    ],
    [
      'clean without a judge: the checked commit is merged',
      {
        state: checking,
        facts: green,
        next: { kind: 'integrate', commit: 'c1' },
        effects: [say('gates passed'), progress('c1', 'checks')],
        then: { checked: 'c1' },
      },
    ],
    [
      'clean with a judge: the branch takes the epic head before the judge reads it',
      {
        state: judging,
        facts: green,
        next: { kind: 'catch-up' },
        effects: [say('gates passed'), progress('c1', 'checks')],
        then: { checked: 'c1', awaiting: { step: 'catch-up' } },
      },
    ],
    [
      'red after taking the epic head: a merge revision with the red lines, not a fix round',
      {
        state: at(
          { step: 'check', afterCatchUp: true },
          { rules: { ...withJudge, mergeRevisions: 1 } },
        ),
        facts: failing,
        next: code({ gateFailures: [gateFeedback], oracle: [] }),
        effects: [
          say('the gates failed after taking the epic head: merge revision 1 of 1'),
          {
            kind: 'note',
            notes: ['the gates failed after taking the epic head: merge revision 1 of 1'],
          },
        ],
        then: { mergeRevisions: 1, fixRoundsLeft: 2 },
      },
    ],
    [
      'red after taking the epic head with no merge revision left: failed, fix rounds or not',
      {
        state: at(
          { step: 'check', afterCatchUp: true },
          { rules: { ...withJudge, mergeRevisions: 1 }, mergeRevisions: 1 },
        ),
        facts: failing,
        next: failed('gates failed after taking the epic head: npm test: FAIL a; FAIL b; FAIL c'),
      },
    ],
    [
      'green after taking the epic head: on to the judge by way of the catch-up',
      {
        state: at({ step: 'check', afterCatchUp: true }, { rules: withJudge }),
        facts: { ...green, commit: 'c5' },
        next: { kind: 'catch-up' },
        effects: [say('gates passed'), progress('c5', 'checks')],
        then: { checked: 'c5' },
      },
    ],
  ])('%s', (_name, row) => check(decideAfterCheck, row));

  const restored = at({ step: 'recheck' }, { perimeterShown: true, checked: 'c1' });
  it.each<[string, Row<CheckFacts>]>([
    [
      'restored, nothing left: everything it changed was outside',
      {
        state: restored,
        facts: { ...green, empty: true, commit: 'c2' },
        next: failed('no changes (everything it changed was outside its perimeter)'),
      },
    ],
    [
      'restored, the gates fail without the restored paths (no fix round)',
      {
        state: restored,
        facts: { ...failing, commit: 'c2' },
        next: failed(
          'gates failed after restoring paths outside the perimeter: npm test: FAIL a; FAIL b; FAIL c',
        ),
      },
    ],
    [
      'restored, an oracle finding blocks too',
      {
        state: restored,
        facts: { ...green, oracle: ['fewer tests pass'], commit: 'c2' },
        next: failed('gates failed after restoring paths outside the perimeter: fewer tests pass'),
      },
    ],
    [
      'restored, paths still outside (each named once)',
      {
        state: restored,
        facts: {
          ...green,
          perimeter: { ...forbidden, outside: ['OUT.md'] },
          commit: 'c2',
        },
        next: failed(
          'still outside its perimeter after restoring: OUT.md, .github/workflows/ci.yml',
        ),
      },
    ],
    [
      'restored and clean: the restored commit is merged',
      {
        state: restored,
        facts: { ...green, commit: 'c2' },
        next: { kind: 'integrate', commit: 'c2' },
        effects: [progress('c2', 'checks')],
        then: { checked: 'c2' },
      },
    ],
    [
      'restored and clean with a judge: the judge reads the restored commit',
      {
        state: { ...restored, rules: withJudge },
        facts: { ...green, commit: 'c2' },
        next: { kind: 'catch-up' },
        effects: [progress('c2', 'checks')],
        then: { checked: 'c2' },
      },
    ],
  ])('%s', (_name, row) => check(decideAfterCheck, row));
});

// --- catching up before the judge ---------------------------------------------

describe('decideAfterCatchUp', () => {
  const catching = at({ step: 'catch-up' }, { rules: withJudge, checked: 'c1' });
  it.each<[string, Row<CatchUpFacts>]>([
    [
      'the epic head did not move: the judge reads the checked commit',
      {
        state: catching,
        facts: { moved: false },
        next: { kind: 'judge', inPlace: false },
        then: { checked: 'c1', awaiting: { step: 'judge', inPlace: false } },
      },
    ],
    [
      'stories merged meanwhile: checked again on the branch that took them',
      {
        state: catching,
        facts: { moved: true },
        next: { kind: 'check' },
        effects: [
          say('took the epic head before the judge (stories merged meanwhile): checking again'),
        ],
        then: { awaiting: { step: 'check', afterCatchUp: true } },
      },
    ],
  ])('%s', (_name, row) => check(decideAfterCatchUp, row));
});

// --- the judge -----------------------------------------------------------------

const scores = { provides: 2, scope: 2, style: 2, tests: 2 };
const clear: JudgeVerdict = { scores, cleared: true, findings: [] };
const unclear: JudgeVerdict = {
  scores: { ...scores, tests: 1 },
  cleared: false,
  findings: ['no test for the empty list', ' '],
};
const all2 = 'provides 2/2, scope 2/2, style 2/2, tests 2/2';
const tests1 = 'provides 2/2, scope 2/2, style 2/2, tests 1/2';
const minorOnly: JudgeVerdict = {
  ...unclear,
  findings: [
    { severity: 'minor', text: 'name it after what it returns' },
    { severity: 'major', text: 'no test for the empty list' },
  ],
};
const deferring: RoundRules = { ...withJudge, deferNonBlocking: true };
const verdict = (v: JudgeVerdict, independent = true): JudgeFacts => ({
  kind: 'verdict',
  verdict: v,
  executor: 'judge',
  independent,
});

describe('decideAfterJudge', () => {
  const reading = at({ step: 'judge', inPlace: false }, { rules: withJudge, checked: 'c1' });
  const inPlace = at({ step: 'judge', inPlace: true }, { rules: withJudge });
  it.each<[string, Row<JudgeFacts>]>([
    [
      'no judge available fails the story',
      {
        state: reading,
        facts: { kind: 'unavailable', why: 'no executor can take the judge role' },
        next: failed('judge unavailable: no executor can take the judge role'),
      },
    ],
    [
      'cleared: the checked commit is merged, with the note',
      {
        state: reading,
        facts: verdict(clear),
        next: { kind: 'integrate', commit: 'c1' },
        effects: [
          say(`judge judge: cleared (${all2})`),
          { kind: 'note', notes: [`judge judge cleared (${all2})`] },
          progress('c1', 'judge'),
        ],
      },
    ],
    [
      'cleared after revisions by a judge that also coded: both notes in one save',
      {
        state: { ...reading, judgeRevisions: 2 },
        facts: verdict(clear, false),
        next: { kind: 'integrate', commit: 'c1' },
        effects: [
          say(`judge judge: cleared (${all2})`),
          {
            kind: 'note',
            notes: [
              `judge judge cleared after 2 revisions (${all2})`,
              'judge was not independent: judge also coded the story',
            ],
          },
          progress('c1', 'judge'),
        ],
      },
    ],
    [
      'not cleared: a revision round with the findings',
      {
        state: reading,
        facts: verdict(unclear),
        next: code({ judge: { findings: ['no test for the empty list'] } }),
        effects: [say(`judge judge: not cleared (${tests1}): no test for the empty list`)],
        then: { judgeRevisions: 1 },
      },
    ],
    [
      'not cleared after judge.rounds revisions: failed',
      {
        state: { ...reading, judgeRevisions: 1, rules: { ...withJudge, judgeRounds: 1 } },
        facts: verdict(unclear),
        next: failed('judge did not clear the story after 1 revision: no test for the empty list'),
        effects: [say(`judge judge: not cleared (${tests1}): no test for the empty list`)],
      },
    ],
    [
      'not cleared with judge.rounds 0: failed at once, findings from the scores',
      {
        state: { ...reading, rules: { ...withJudge, judgeRounds: 0 } },
        facts: verdict({ ...unclear, findings: [] }),
        next: failed('judge did not clear the story after 0 revisions: tests scored 1/2'),
        effects: [say(`judge judge: not cleared (${tests1}): tests scored 1/2`)],
      },
    ],
    [
      'no changes, cleared: already in place',
      {
        state: inPlace,
        facts: verdict(clear),
        next: { kind: 'in-place' },
        effects: [
          say(`judge judge: cleared (${all2})`),
          { kind: 'note', notes: [`judge judge cleared (${all2})`] },
        ],
      },
    ],
    [
      'no changes, not cleared: a revision round that says nothing changed',
      {
        state: inPlace,
        facts: verdict(unclear),
        next: code({ noChanges: true, judge: { findings: ['no test for the empty list'] } }),
        effects: [say(`judge judge: not cleared (${tests1}): no test for the empty list`)],
        then: { judgeRevisions: 1 },
      },
    ],
    [
      'no changes, not in place after judge.rounds revisions: failed',
      {
        state: { ...inPlace, judgeRevisions: 2 },
        facts: verdict(unclear),
        next: failed(
          'no changes, and the judge did not find the story in place after 2 revisions: no test for the empty list',
        ),
        effects: [say(`judge judge: not cleared (${tests1}): no test for the empty list`)],
      },
    ],
    [
      'deferNonBlocking, only findings below critical: merged, the findings deferred',
      {
        state: { ...reading, rules: deferring },
        facts: verdict(minorOnly),
        next: { kind: 'integrate', commit: 'c1' },
        effects: [
          say(
            `judge judge: nothing critical (${tests1}); deferred: minor: name it after what it returns; major: no test for the empty list`,
          ),
          { kind: 'note', notes: [`judge judge cleared (${tests1}); 2 findings deferred`] },
          {
            kind: 'deferred',
            findings: ['minor: name it after what it returns', 'major: no test for the empty list'],
          },
          progress('c1', 'judge'),
        ],
      },
    ],
    [
      'deferNonBlocking, cleared with none: the record says nothing is deferred',
      {
        state: { ...reading, rules: deferring },
        facts: verdict(clear),
        next: { kind: 'integrate', commit: 'c1' },
        effects: [
          say(`judge judge: cleared (${all2})`),
          { kind: 'note', notes: [`judge judge cleared (${all2})`] },
          { kind: 'deferred', findings: [] },
          progress('c1', 'judge'),
        ],
      },
    ],
    [
      'deferNonBlocking, a critical finding (a plain string is one): a revision round with every finding',
      {
        state: { ...reading, rules: deferring },
        facts: verdict({
          ...minorOnly,
          findings: ['src/a.ts crashes on empty input', ...minorOnly.findings],
        }),
        next: code({
          judge: {
            findings: [
              'src/a.ts crashes on empty input',
              'minor: name it after what it returns',
              'major: no test for the empty list',
            ],
          },
        }),
        effects: [
          say(
            `judge judge: not cleared (${tests1}): src/a.ts crashes on empty input; minor: name it after what it returns; major: no test for the empty list`,
          ),
        ],
        then: { judgeRevisions: 1 },
      },
    ],
    [
      'deferNonBlocking, not cleared and naming nothing: blocked by the low scores',
      {
        state: { ...reading, judgeRevisions: 2, rules: deferring },
        facts: verdict({ ...unclear, findings: [] }),
        next: failed('judge did not clear the story after 2 revisions: tests scored 1/2'),
        effects: [say(`judge judge: not cleared (${tests1}): tests scored 1/2`)],
      },
    ],
    [
      'without deferNonBlocking, a minor finding blocks as any',
      {
        state: { ...reading, judgeRevisions: 2 },
        facts: verdict(minorOnly),
        next: failed(
          'judge did not clear the story after 2 revisions: minor: name it after what it returns; major: no test for the empty list',
        ),
        effects: [
          say(
            `judge judge: not cleared (${tests1}): minor: name it after what it returns; major: no test for the empty list`,
          ),
        ],
      },
    ],
  ])('%s', (_name, row) =>
    // The round's structured record (the say's data, the evaluation) is checked below.
    check((st, f: JudgeFacts) => withoutRoundRecord(decideAfterJudge(st, f)), row),
  );

  it('tells each round with its scores as data and records it with what followed', () => {
    const d = decideAfterJudge({ ...reading, judgeRevisions: 1 }, verdict(unclear));
    const data = {
      evaluation: 'judge',
      round: 2,
      cleared: false,
      findings: 1,
      scores: { provides: 2, scope: 2, style: 2, tests: 1 },
      executors: ['judge'],
    };
    expect(d.effects.find((e) => e.kind === 'say')).toMatchObject({ data });
    expect(d.effects.filter((e) => e.kind === 'evaluation')).toEqual([
      {
        kind: 'evaluation',
        evaluation: {
          kind: 'judge',
          round: 2,
          commit: 'c1',
          cleared: false,
          findings: ['no test for the empty list'],
          scores: data.scores,
          executors: ['judge'],
          outcome: 'fixing',
        },
      },
    ]);
    const last = decideAfterJudge({ ...reading, judgeRevisions: 2 }, verdict(unclear));
    expect(last.effects.find((e) => e.kind === 'evaluation')).toMatchObject({
      evaluation: { round: 3, outcome: 'failed' },
    });
  });
});

/** A decision with the say's data and the evaluation effect left out. */
function withoutRoundRecord(d: Decision): Decision {
  return {
    ...d,
    effects: d.effects
      .filter((e) => e.kind !== 'evaluation')
      .map((e) => (e.kind === 'say' ? { kind: 'say', message: e.message } : e)),
  };
}

// --- whole stories -------------------------------------------------------------

describe('a story through its rounds', () => {
  it('fix round, perimeter round, restore, judge revision, cleared: merged as the restored commit', () => {
    let d = startRounds({ ...withJudge, fixRounds: 1, judgeRounds: 1 }, alpha, ['alpha']);
    d = decideAfterTurn(d.state, ok);
    d = decideAfterCheck(d.state, { ...failing, perimeter: stray });
    expect(d.next.kind).toBe('code');
    expect(d.state.perimeterShown).toBe(true);
    d = decideAfterTurn(d.state, ok);
    // Gates green now; the strays were shown with the fix round: put back at once.
    d = decideAfterCheck(d.state, { ...green, perimeter: stray, commit: 'c2' });
    expect(d.next).toEqual({ kind: 'restore', paths: ['docs/r.md', 'OUT.md'] });
    d = decideAfterCheck(d.state, { ...green, commit: 'c3' });
    expect(d.next).toEqual({ kind: 'catch-up' });
    d = decideAfterCatchUp(d.state, { moved: false });
    expect(d.next).toEqual({ kind: 'judge', inPlace: false });
    d = decideAfterJudge(d.state, verdict(unclear));
    d = decideAfterTurn(d.state, ok);
    // A second failure finds no fix round left.
    expect(decideAfterCheck(d.state, failing).next).toEqual(
      stillRed('gates failed: npm test: FAIL a; FAIL b; FAIL c'),
    );
    d = decideAfterCheck(d.state, { ...green, commit: 'c4' });
    d = decideAfterCatchUp(d.state, { moved: false });
    d = decideAfterJudge(d.state, verdict(clear));
    expect(d.next).toEqual({ kind: 'integrate', commit: 'c4' });
    expect(d.effects).toContainEqual({
      kind: 'note',
      notes: [`judge judge cleared after 1 revision (${all2})`],
    });
  });

  it('a result for a step that was not asked for is an internal error, not a decision', () => {
    const d = startRounds(noJudge, alpha, ['alpha']);
    let error: unknown;
    try {
      decideAfterCheck(d.state, green);
    } catch (e) {
      error = e;
    }
    expect(isEpicflowError(error, 'internal')).toBe(true);
    expect(() => decideAfterJudge(d.state, verdict(clear))).toThrow(
      'story rounds: a judge result while waiting for a turn result',
    );
  });
});
