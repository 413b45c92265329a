/**
 * The App's installation tokens, minted by the action from the App's key (the publish job
 * and the jobs of one): a token is used while it has time left and minted again before it
 * runs out, so a job that outlives a token still reaches GitHub, and the token it dropped is
 * refused once it expired.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { appTokens } from '../../../src/adapters/github/app-auth.js';
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
