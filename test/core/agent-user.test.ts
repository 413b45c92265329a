import { describe, expect, it } from '@jest/globals';
import { chooseAgentUser, DEFAULT_AGENT_USER } from '../../src/core/agent-user.js';

describe('who the agent runs as locally', () => {
  it('is the user named, without a note, as root or not', () => {
    for (const asRoot of [true, false]) {
      expect(chooseAgentUser('ci-agent', asRoot)).toEqual({ user: 'ci-agent', note: undefined });
    }
  });

  it('is an unprivileged user of its own as root, and says so', () => {
    const choice = chooseAgentUser(undefined, true);
    expect(choice.user).toBe(DEFAULT_AGENT_USER);
    expect(choice.note).toContain('epicflow runs as root, so the agent, setup and gates run as');
  });

  it('is you otherwise, and says what that means', () => {
    expect(chooseAgentUser(undefined, false)).toEqual({
      user: undefined,
      note: 'note: the agent, setup and gates run as you: they can read what you can (your files, and the environment of every process of yours, this one included); --agent-user USER runs them as another user',
    });
    expect(chooseAgentUser(false, false).user).toBeUndefined();
  });

  it('is root when asked with --no-agent-user, and says it is not isolated', () => {
    const choice = chooseAgentUser(false, true);
    expect(choice.user).toBeUndefined();
    expect(choice.note).toMatch(
      /^note: the agent, setup and gates run as root \(--no-agent-user\)/,
    );
  });

  it('needs no word inside the kernel sandbox, unless it is root', () => {
    expect(chooseAgentUser(undefined, false, true)).toEqual({ user: undefined, note: undefined });
    expect(chooseAgentUser(false, true, true).note).toMatch(
      /^note: the agent, setup and gates run as root without capabilities inside the kernel sandbox/,
    );
  });
});

describe('who the agent runs as in a job of the Action', () => {
  const job = (flag: string | undefined, asRoot: boolean, walled: boolean) =>
    chooseAgentUser(flag, asRoot, walled, 'agent-user').user;

  it('is the runner itself inside the kernel sandbox, unless the runner is root', () => {
    expect(job(undefined, false, true)).toBeUndefined();
    expect(job(undefined, true, true)).toBe(DEFAULT_AGENT_USER);
  });

  it('is an agent user where the sandbox does not run, root or not', () => {
    expect(job(undefined, false, false)).toBe(DEFAULT_AGENT_USER);
    expect(job(undefined, true, false)).toBe(DEFAULT_AGENT_USER);
  });

  it('is the user the workflow names, in the sandbox or not', () => {
    for (const walled of [true, false]) expect(job('ci-agent', false, walled)).toBe('ci-agent');
  });
});
