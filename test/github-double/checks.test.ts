/**
 * The contract check nobody has to remember: every running double is checked
 * after each test, and a violation raised after the last test fails `close()`.
 */
import { describe, expect, it } from '@jest/globals';
import { runChecks } from '../support/checks.js';
import { startGitHubDouble } from './index.js';

async function provoke(url: string, token: string): Promise<void> {
  const r = await fetch(`${url}/repos/acme/shop/no-such-thing`, {
    headers: { authorization: `token ${token}` },
  });
  await r.arrayBuffer();
}

describe('automatic contract checks', () => {
  it('lists a running double among the checks run after each test, naming its violations', async () => {
    const gh = await startGitHubDouble();
    try {
      const alice = gh.seed.user({ login: 'alice' });
      await gh.seed.repo({ owner: 'acme', name: 'shop' });
      await provoke(gh.url, alice.token);
      expect(() => runChecks()).toThrow(
        `GitHub double ${gh.url}: GitHub contract violations:\n- [unknown-route]`,
      );
      // Reported once: the next check is clean.
      expect(() => runChecks()).not.toThrow();
    } finally {
      await gh.close();
    }
  });

  it('fails close() on a violation raised after the last check, and stops checking a closed double', async () => {
    const gh = await startGitHubDouble();
    const alice = gh.seed.user({ login: 'alice' });
    await gh.seed.repo({ owner: 'acme', name: 'shop' });
    await provoke(gh.url, alice.token);
    await expect(gh.close()).rejects.toThrow(/GitHub contract violations:\n- \[unknown-route\]/);
    expect(() => runChecks()).not.toThrow();
  });
});
