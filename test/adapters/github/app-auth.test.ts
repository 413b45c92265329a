/**
 * The App's installation tokens, minted by the action from the App's key (the publish job
 * and the jobs of one): a token is used while it has time left and minted again before it
 * runs out, so a job that outlives a token still reaches GitHub, and the token it dropped is
 * refused once it expired. A key that is not one, and another App's key, are refused with
 * what to check, the key never quoted (the bundle's refusal: test/action/app-token.test.ts).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { appTokens } from '../../../src/adapters/github/app-auth.js';
import { describeError, isEpicflowError } from '../../../src/core/errors.js';
import { startGitHubDouble, type GitHubDouble } from '../../github-double/index.js';

const LIFETIME_MS = 1500;

let gh: GitHubDouble;
afterEach(async () => {
  await gh.close();
});

async function status(token: string): Promise<number> {
  const r = await fetch(`${gh.url}/repos/acme/shop`, {
    headers: { authorization: `token ${token}` },
  });
  return r.status;
}

describe("the App's installation tokens", () => {
  it('are used while they have time left, minted again before they run out, and the old one expires', async () => {
    gh = await startGitHubDouble();
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    gh.seed.app({ id: 777, slug: 'epicflow', privateKey: pem, tokenLifetimeMs: LIFETIME_MS });
    await gh.seed.repo({ owner: 'acme', name: 'shop', files: { 'README.md': 'x\n' } });
    let clock = Date.now();
    const seen: string[] = [];
    const tokens = await appTokens({
      appId: '777',
      privateKey: pem,
      owner: 'acme',
      repo: 'shop',
      baseUrl: gh.url,
      production: false,
      onToken: (t) => seen.push(t),
      now: () => clock,
    });
    const first = await tokens.token();
    expect(await status(first)).toBe(200);
    // Time left: the same token.
    expect(await tokens.token()).toBe(first);
    expect(tokens.minted()).toBe(1);
    // Past its life on GitHub, and past half of it for the action: a new one.
    await sleep(LIFETIME_MS + 200);
    expect(await status(first)).toBe(401);
    clock += LIFETIME_MS;
    const second = await tokens.token();
    expect(second).not.toBe(first);
    expect(tokens.minted()).toBe(2);
    expect(seen).toEqual([first, second]);
    expect(await status(second)).toBe(200);
  });
});

describe('the App credentials refused', () => {
  function keyPair(): string {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  }

  async function refusal(privateKey: string): Promise<{ tag: string; text: string }> {
    const options = {
      appId: '777',
      privateKey,
      owner: 'acme',
      repo: 'shop',
      baseUrl: gh.url,
      production: false,
    };
    try {
      await appTokens(options);
    } catch (e) {
      if (!isEpicflowError(e)) throw e;
      return { tag: e.tag, text: describeError(e) };
    }
    throw new Error('the credentials were taken');
  }

  it('a private key that is not a key: says so without quoting it', async () => {
    gh = await startGitHubDouble();
    gh.seed.app({ id: 777, slug: 'epicflow', privateKey: keyPair() });
    await gh.seed.repo({ owner: 'acme', name: 'shop', files: { 'README.md': 'x\n' } });
    const { tag, text } = await refusal('ghp_notakey_but_a_long_secret_string');
    expect(tag).toBe('usage');
    expect(text).toContain('input "app-private-key" is not a private key');
    expect(text).not.toContain('ghp_notakey_but_a_long_secret_string');
  });

  it("another App's key: GitHub refuses the JWT, the error says to check the pair", async () => {
    gh = await startGitHubDouble();
    gh.seed.app({ id: 777, slug: 'epicflow', privateKey: keyPair() });
    await gh.seed.repo({ owner: 'acme', name: 'shop', files: { 'README.md': 'x\n' } });
    const other = keyPair();
    const { tag, text } = await refusal(other);
    expect(tag).toBe('github');
    expect(text).toContain('cannot find the installation for App 777 on acme/shop');
    expect(text).toContain('check that app-private-key belongs to app-id');
    for (const line of other.split('\n').filter((l) => l !== '' && !l.startsWith('-----')))
      expect(text).not.toContain(line);
  });
});
