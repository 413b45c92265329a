/**
 * The Action's inputs read and checked (src/action/inputs.ts) before anything reaches
 * GitHub: each bad input named. In-process; the bundle's refusal of the same (a failed
 * step, the summary, no stack trace) is shown in node24.test.ts and local-action.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { readInputs } from '../../src/action/inputs.js';
import { describeError } from '../../src/core/errors.js';

function refusal(env: Record<string, string>): string {
  try {
    readInputs(env);
  } catch (e) {
    return describeError(e);
  }
  throw new Error('the inputs were accepted');
}

describe('story mode inputs', () => {
  it('missing inputs: each one named', () => {
    const why = refusal({ INPUT_MODE: 'story', 'INPUT_GITHUB-TOKEN': 'ghs_token' });
    expect(why).toContain('invalid inputs of the epicflow action');
    expect(why).toContain('input "epic" is required in story mode');
    expect(why).toContain('input "story" is required in story mode');
  });

  it('an id that is not an id', () => {
    const why = refusal({
      INPUT_MODE: 'story',
      'INPUT_GITHUB-TOKEN': 'ghs_token',
      INPUT_EPIC: '7',
      INPUT_STORY: 'cart; rm -rf /',
      INPUT_ATTEMPT: '1',
    });
    expect(why).toContain('input "story": story must be an id');
  });

  it('takes a story job whose inputs are in order', () => {
    expect(
      readInputs({
        INPUT_MODE: 'story',
        'INPUT_GITHUB-TOKEN': 'ghs_token',
        INPUT_EPIC: '7',
        INPUT_STORY: 'cart',
        INPUT_ATTEMPT: '1',
      }),
    ).toMatchObject({ mode: 'story', epic: '7', story: 'cart', attempt: 1 });
  });
});
