/** The Action's retro job: a story job of the reserved story `_retro`. */
import { describe, expect, it } from '@jest/globals';
import { readInputs } from '../../src/action/inputs.js';

const base = { 'INPUT_GITHUB-TOKEN': 'ghs_x', INPUT_EPIC: '12', INPUT_ATTEMPT: '2' };

describe('a retro job', () => {
  it('is what a story job of the story _retro runs, with the story job isolation inputs', () => {
    expect(readInputs({ ...base, INPUT_MODE: 'story', INPUT_STORY: '_retro' })).toEqual({
      mode: 'retro',
      epic: '12',
      attempt: 2,
      allowUnisolatedAgent: 'false',
      sandbox: 'true',
      config: '.github/epicflow.yml',
      auth: { kind: 'token', token: 'ghs_x' },
    });
  });

  it('leaves a story named retro to story mode', () => {
    expect(readInputs({ ...base, INPUT_MODE: 'story', INPUT_STORY: 'retro' }).mode).toBe('story');
  });
});
