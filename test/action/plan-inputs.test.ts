/** The Action's plan mode inputs: given directly, or as a story job of the reserved story `_plan`. */
import { describe, expect, it } from '@jest/globals';
import { readInputs } from '../../src/action/inputs.js';
import { describeError } from '../../src/core/errors.js';

const base = { 'INPUT_GITHUB-TOKEN': 'ghs_x', INPUT_EPIC: '12', INPUT_ATTEMPT: '2' };

describe('plan mode', () => {
  it('is what a story job of the story _plan runs, with the story job isolation inputs', () => {
    const inputs = readInputs({ ...base, INPUT_MODE: 'story', INPUT_STORY: '_plan' });
    expect(inputs).toEqual({
      mode: 'plan',
      epic: '12',
      attempt: 2,
      allowUnisolatedAgent: 'false',
      sandbox: 'true',
      config: '.github/epicflow.yml',
      auth: { kind: 'token', token: 'ghs_x' },
    });
  });

  it('can be given directly; without an attempt it names the input', () => {
    expect(readInputs({ ...base, INPUT_MODE: 'plan' }).mode).toBe('plan');
    const { INPUT_ATTEMPT: _a, ...noAttempt } = base;
    let message = '';
    try {
      readInputs({ ...noAttempt, INPUT_MODE: 'plan' });
    } catch (e) {
      message = describeError(e);
    }
    expect(message).toContain('input "attempt" is required in plan mode');
  });

  it('leaves any other story to story mode', () => {
    expect(readInputs({ ...base, INPUT_MODE: 'story', INPUT_STORY: 'plan' }).mode).toBe('story');
  });
});
