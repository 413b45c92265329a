/**
 * The Action's inputs read and checked (src/action/inputs.ts) before anything reaches
 * GitHub: each bad input named. In-process; the bundle's refusal of the same (a failed
 * step, the summary, no stack trace) is shown in node24.test.ts and local-action.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { readInputs } from '../../src/action/inputs.js';
import { describeError, isEpicflowError } from '../../src/core/errors.js';

function refusal(env: Record<string, string>): string {
  try {
    readInputs(env);
  } catch (e) {
    expect(isEpicflowError(e, 'usage')).toBe(true);
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

describe('the way to GitHub: a token or the App, exactly one', () => {
  const story = { INPUT_MODE: 'story', INPUT_EPIC: '7', INPUT_STORY: 'cart', INPUT_ATTEMPT: '1' };
  const KEY = '-----BEGIN RSA PRIVATE KEY-----\nMIIEsecretkeylines\n-----END RSA PRIVATE KEY-----';
  const app = { 'INPUT_APP-ID': '777', 'INPUT_APP-PRIVATE-KEY': KEY };

  it('no way to GitHub at all: names the inputs to give', () => {
    const why = refusal(story);
    expect(why).toContain('invalid inputs of the epicflow action');
    expect(why).toContain(
      'give input "github-token" (an App installation token or GITHUB_TOKEN), or inputs "app-id" and "app-private-key"',
    );
  });

  it('a token and the App both: one way only, the key not quoted', () => {
    const why = refusal({ ...story, 'INPUT_GITHUB-TOKEN': 'ghs_token', ...app });
    expect(why).toContain(
      'give either input "github-token" or inputs "app-id" and "app-private-key", not both',
    );
    expect(why).not.toContain('secretkeylines');
  });

  it('app-id without the key, and a key without app-id', () => {
    expect(refusal({ ...story, 'INPUT_APP-ID': '777' })).toContain(
      'input "app-private-key" is required with "app-id"',
    );
    expect(refusal({ ...story, 'INPUT_APP-PRIVATE-KEY': KEY })).toContain(
      'input "app-id" is required with "app-private-key"',
    );
  });

  it('an app-id that is not one', () => {
    const why = refusal({ ...story, ...app, 'INPUT_APP-ID': 'my app' });
    expect(why).toContain(
      'input "app-id": app-id must be the App\'s numeric id or its client id (Iv…)',
    );
    expect(why).not.toContain('secretkeylines');
  });

  it('takes the App: its id and key, no token', () => {
    expect(readInputs({ ...story, ...app })).toMatchObject({
      auth: { kind: 'app', appId: '777', privateKey: KEY },
    });
  });
});
