import { describe, expect, it } from '@jest/globals';
import { collectSecrets, resolveEnv } from '../../../src/core/config/schema.js';
import { EpicflowError, describeError } from '../../../src/core/errors.js';

describe('resolveEnv', () => {
  it('replaces ${VAR} references from the source and keeps literals', () => {
    const env = { OPENAI_API_KEY: '${OPENAI_API_KEY}', AUTH: 'Bearer ${TOKEN}', MODE: 'ci' };
    const source = { OPENAI_API_KEY: 'sk-live-1', TOKEN: 't0k3n', OTHER: 'unused' };
    expect(resolveEnv(env, source, 'executor "codex"')).toEqual({
      OPENAI_API_KEY: 'sk-live-1',
      AUTH: 'Bearer t0k3n',
      MODE: 'ci',
    });
    // The config value itself is untouched: resolution happens only on demand.
    expect(env.OPENAI_API_KEY).toBe('${OPENAI_API_KEY}');
  });

  it('names the executor, the field and every missing or empty variable', () => {
    let thrown: unknown;
    try {
      resolveEnv(
        { A: '${MISSING_ONE}', B: 'x-${EMPTY}', C: 'literal' },
        { EMPTY: '' },
        'executor "codex"',
      );
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(EpicflowError);
    expect((thrown as EpicflowError).tag).toBe('config');
    expect(describeError(thrown)).toBe(
      [
        'missing environment variables for executor "codex"',
        '  env.A: ${MISSING_ONE} is not set',
        '  env.B: ${EMPTY} is not set',
      ].join('\n'),
    );
  });

  it('resolves an empty env to an empty env', () => {
    expect(resolveEnv({}, {}, 'executor "a"')).toEqual({});
  });
});

describe('collectSecrets', () => {
  it('returns the referenced values, longest first, without literals', () => {
    const env = { A: '${SHORT}', B: 'Bearer ${LONG}', C: 'plain', D: '${SHORT}', E: '${UNSET}' };
    const source = { SHORT: 'abc123', LONG: 'sk-very-long-secret', UNUSED: 'zzz' };
    expect(collectSecrets(env, source)).toEqual(['sk-very-long-secret', 'abc123']);
  });
});
