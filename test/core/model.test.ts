import { describe, expect, it } from '@jest/globals';
import { addTokens, epicBranchName, formatChain, storyBranchName } from '../../src/core/model.js';
import { describeError, EpicflowError } from '../../src/core/errors.js';

describe('model', () => {
  it('formats an executor chain with arrows', () => {
    expect(formatChain(['codex', 'claude'])).toBe('codex → claude');
    expect(formatChain(['codex'])).toBe('codex');
  });

  it('names epic and story branches', () => {
    expect(epicBranchName('42')).toBe('epic/42');
    expect(storyBranchName('42', 'health-endpoint')).toBe('story/42/health-endpoint');
  });

  it('adds token counts field by field', () => {
    const a = { input: 1, cachedInput: 2, cacheWrite: 3, output: 4 };
    expect(addTokens(a, a)).toEqual({ input: 2, cachedInput: 4, cacheWrite: 6, output: 8 });
  });

  it('renders typed errors with their detail lines', () => {
    const e = new EpicflowError('config', 'invalid config in epicflow.yml', {
      details: ['gates: expected an array of strings'],
    });
    expect(describeError(e)).toBe(
      'invalid config in epicflow.yml\n  gates: expected an array of strings',
    );
  });
});
