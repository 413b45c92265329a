import { describe, expect, it } from '@jest/globals';
import { blockedOnClaim, runRecordOf } from '../../../src/core/harness/record.js';
import type { ParsedRun } from '../../../src/core/harness/types.js';
import { requestFor } from './request.js';

const facts = { exitCode: 0, timedOut: false, aborted: false, durationMs: 1234 };
const ok: ParsedRun = { outcome: 'ok', finalMessage: 'Done.', usage: [], detail: '' };

describe('blockedOnClaim', () => {
  it.each([
    ['Work done.\nBLOCKED_ON: src/api.ts (story api)\n\n', 'src/api.ts (story api)'],
    ['**BLOCKED_ON: the db schema**', 'the db schema'],
    ['`BLOCKED_ON: x`', 'x'],
    ['BLOCKED_ON: x\nthen I carried on', undefined],
    ['BLOCKED_ON:   ', undefined],
    ['', undefined],
  ])('%j', (message, need) => {
    expect(blockedOnClaim(message)).toBe(need);
  });
});

describe('runRecordOf', () => {
  it('says when the agent stopped at its own cap, and only for a failed turn', () => {
    const capped: ParsedRun = { ...ok, outcome: 'failed', detail: 'error_max_turns', capped: true };
    const record = runRecordOf(capped, { ...facts, exitCode: 1 }, requestFor('claude'));
    expect(record).toMatchObject({ outcome: 'failed', capped: true, exitCode: 1 });
    expect('capped' in runRecordOf({ ...capped, outcome: 'ok' }, facts, requestFor('claude'))).toBe(
      false,
    );
  });

  it('estimates usage (characters ÷ 4) when the CLI reported none, priced from the table', () => {
    const request = requestFor('aider', {
      prompt: 'x'.repeat(4001),
      executor: { ...requestFor('aider').executor, model: 'gpt-5.4' },
    });
    const record = runRecordOf({ ...ok, finalMessage: 'y'.repeat(8) }, facts, request);
    expect(record.usage).toEqual([
      {
        executor: 'aider',
        model: 'gpt-5.4',
        tokens: { input: 1001, cachedInput: 0, cacheWrite: 0, output: 2 },
        measured: false,
        costUsd: (1001 * 2.5 + 2 * 15) / 1e6,
        costSource: 'price-table',
      },
    ]);
  });

  it('keeps a CLI cost and names the configured model when the CLI did not', () => {
    const record = runRecordOf(
      {
        ...ok,
        usage: [
          {
            model: null,
            tokens: { input: 10, cachedInput: 0, cacheWrite: 0, output: 5 },
            costUsd: 0.5,
          },
          {
            model: 'x',
            tokens: { input: 0, cachedInput: 0, cacheWrite: 0, output: 0 },
            costUsd: null,
          },
        ],
      },
      facts,
      requestFor('opencode'),
    );
    expect(record.usage).toEqual([
      {
        executor: 'opencode',
        model: 'm-1',
        tokens: { input: 10, cachedInput: 0, cacheWrite: 0, output: 5 },
        measured: true,
        costUsd: 0.5,
        costSource: 'cli',
      },
    ]);
  });

  it('records no usage for a refused turn (limit, auth)', () => {
    const record = runRecordOf(
      {
        outcome: 'usage-limit',
        finalMessage: '',
        usage: [],
        resetAt: '2026-12-01T00:00:00.000Z',
        detail: 'limit',
      },
      { ...facts, exitCode: 1 },
      requestFor('codex'),
    );
    expect(record).toMatchObject({
      outcome: 'usage-limit',
      resetAt: '2026-12-01T00:00:00.000Z',
      usage: [],
    });
  });

  it('turns a timeout into a failure, but keeps an infrastructure signal seen before it', () => {
    const timedOut = { ...facts, exitCode: null, timedOut: true };
    const request = requestFor('opencode', { timeoutMs: 90_000 });
    expect(runRecordOf(ok, timedOut, request)).toMatchObject({
      outcome: 'failed',
      timedOut: true,
      detail: 'timed out after 90s',
    });
    expect(
      runRecordOf({ ...ok, outcome: 'outage', detail: 'ERROR service=llm 529' }, timedOut, request),
    ).toMatchObject({ outcome: 'outage', detail: 'timed out after 90s: ERROR service=llm 529' });
  });

  it('reads BLOCKED_ON only from a finished turn', () => {
    const claim = { ...ok, finalMessage: 'BLOCKED_ON: src/db.ts' };
    expect(runRecordOf(claim, facts, requestFor('codex')).blockedOn).toBe('src/db.ts');
    expect(
      runRecordOf({ ...claim, outcome: 'failed' }, facts, requestFor('codex')).blockedOn,
    ).toBeUndefined();
  });

  it('reports a cancel as a failure', () => {
    expect(
      runRecordOf(ok, { ...facts, aborted: true, exitCode: null }, requestFor('codex')),
    ).toMatchObject({
      outcome: 'failed',
      detail: 'cancelled',
      usage: [],
    });
  });
});
