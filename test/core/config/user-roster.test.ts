import { describe, expect, it } from '@jest/globals';
import { parseConfig } from '../../../src/core/config/schema.js';
import { userRosterPath } from '../../../src/core/config/user-roster.js';
import { parseUserRoster } from '../../../src/core/config/user-roster-schema.js';
import { parseExecutorIds, selectExecutors } from '../../../src/core/roster/select.js';
import { isEpicflowError } from '../../../src/core/errors.js';

function failure(fn: () => unknown): { tag: string; message: string; details: string } {
  try {
    fn();
  } catch (e) {
    if (!isEpicflowError(e)) throw e;
    return { tag: e.tag, message: e.message, details: (e.details ?? []).join('\n') };
  }
  throw new Error('expected an error');
}

describe('userRosterPath', () => {
  it('prefers an absolute XDG_CONFIG_HOME, else ~/.config', () => {
    expect(userRosterPath({ XDG_CONFIG_HOME: '/x/conf/', HOME: '/home/u' })).toBe(
      '/x/conf/epicflow/executors.yml',
    );
    expect(userRosterPath({ XDG_CONFIG_HOME: 'relative', HOME: '/home/u' })).toBe(
      '/home/u/.config/epicflow/executors.yml',
    );
    expect(userRosterPath({})).toBeNull();
  });
});

describe('a user roster under the config', () => {
  const user = parseUserRoster(
    [
      'executors:',
      '  - { id: local, harness: command, command: [llm], roles: [coder, judge] }',
      '  - { id: codex, harness: codex, model: from-user, slots: 3 }',
    ].join('\n'),
    '/u/executors.yml',
  );

  it('adds the user entries; an entry of the same id in the file replaces the user one whole', () => {
    const config = parseConfig(
      'executors:\n  - { id: codex, harness: codex }\njudge: { executor: local }\n',
      'epicflow.yml',
      user,
    );
    expect(config.executors.map((e) => e.id)).toEqual(['codex', 'local']);
    const codex = config.executors.find((e) => e.id === 'codex');
    expect(codex?.model).toBeUndefined();
    expect(codex?.slots).toBe(1);
  });

  it('drops disabled entries, and refuses a judge that is disabled', () => {
    const config = parseConfig(
      'executors:\n  - { id: local, harness: command, command: [llm], disabled: true }\n',
      'epicflow.yml',
      user,
    );
    expect(config.executors.map((e) => e.id)).toEqual(['codex']);
    const judged = failure(() =>
      parseConfig(
        'executors:\n  - { id: local, harness: command, command: [llm], roles: [judge], disabled: true }\n  - { id: c, harness: codex }\njudge: { executor: local }\n',
        'epicflow.yml',
      ),
    );
    expect(judged.details).toContain(
      'judge.executor: expected the id of an executor with role judge, got "local" (it is disabled)',
    );
  });

  it('names the user file, its own entries and a misspelt key', () => {
    const bad = failure(() =>
      parseUserRoster(
        'executors:\n  - { id: a, harness: codex }\n  - { id: a, harness: codex, slotz: 2 }\n',
        '/u/executors.yml',
      ),
    );
    expect(bad.tag).toBe('config');
    expect(bad.message).toBe('invalid executors file /u/executors.yml');
    expect(bad.details).toContain('executors[1].id: expected a unique id');
    expect(bad.details).toContain('slotz: unknown key (did you mean "slots"?)');
    expect(failure(() => parseUserRoster('gates: [x]\n', '/u/e.yml')).details).toContain(
      'gates: unknown key',
    );
  });

  it('checks the health URL', () => {
    const bad = failure(() =>
      parseConfig('executors:\n  - { id: a, harness: codex, health: localhost:1234 }\n', 'e.yml'),
    );
    expect(bad.details).toContain('executors[0].health: expected an http(s) URL');
  });
});

describe('--executors', () => {
  const config = parseConfig(
    'executors:\n  - { id: a, harness: codex }\n  - { id: b, harness: claude, roles: [coder, judge] }\n  - { id: p, harness: claude, roles: [planner] }\njudge: { executor: b }\n',
    'e.yml',
  );

  it('narrows the roster to the named ids', () => {
    expect(selectExecutors(config, parseExecutorIds(' b , ')).executors.map((e) => e.id)).toEqual([
      'b',
    ]);
  });

  it('refuses unknown ids, a judge left out and a roster without a coder (usage errors)', () => {
    const unknown = failure(() => selectExecutors(config, ['b', 'x', 'y']));
    expect(unknown).toMatchObject({
      tag: 'usage',
      message: '--executors: unknown executors "x", "y"',
      details: 'known executors: a, b, p',
    });
    expect(failure(() => selectExecutors(config, ['a'])).message).toBe(
      '--executors leaves out the judge "b"',
    );
    const { judge: _judge, ...noJudge } = config;
    expect(failure(() => selectExecutors(noJudge, ['p']))).toMatchObject({
      tag: 'usage',
      message: '--executors p names no coder',
      details: 'coders: a, b',
    });
    expect(failure(() => selectExecutors(config, [])).message).toBe(
      '--executors names no executor',
    );
  });
});
