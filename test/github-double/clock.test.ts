/**
 * The clock the double's limits run on: real by default, manual (moved by the test) or
 * auto (jumps when everyone waits on it), and Octokit's throttling waiting on it.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';
import { createClock } from './clock.js';
import { startGitHubDouble, type GitHubDouble } from './index.js';
import { throttleOnClock } from './throttle.js';

const HOUR = 3_600_000;
const owner = 'acme';
const repo = 'shop';

let gh: GitHubDouble | undefined;
afterEach(async () => {
  await gh?.close();
  gh = undefined;
});

/** Resolves after `ms` of real time (to show that something did NOT happen meanwhile). */
const realWait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tracked(p: Promise<unknown>): { done: () => boolean } {
  let done = false;
  void p.then(() => (done = true));
  return { done: () => done };
}

describe('manual clock', () => {
  it('stands still until advanced, and wakes each sleeper when its time comes', async () => {
    const clock = createClock({ mode: 'manual', start: 1_000_000 });
    const woke: string[] = [];
    void clock.sleep(30_000).then(() => woke.push('30 s'));
    void clock.sleepUntil(1_000_000 + 10_000).then(() => woke.push('10 s'));
    await realWait(20);
    expect([clock.now(), woke]).toEqual([1_000_000, []]);
    clock.advance(9_999);
    await realWait(0);
    expect(woke).toEqual([]);
    clock.advance(1);
    await realWait(0);
    expect(woke).toEqual(['10 s']);
    clock.advance(HOUR);
    await realWait(0);
    expect([clock.now(), woke, clock.sleeping]).toEqual([
      1_000_000 + 10_000 + HOUR,
      ['10 s', '30 s'],
      0,
    ]);
    await clock.sleepUntil(0); // in the past: at once
    expect(() => clock.advance(-1)).toThrow(/cannot advance the clock by -1 ms/);
  });

  it('a real clock cannot be advanced', () => {
    expect(() => createClock().advance(1)).toThrow(/a real clock cannot be advanced/);
  });
});

describe('auto clock', () => {
  it('jumps to the earliest sleeper when nothing else happens', async () => {
    gh = await startGitHubDouble({ clock: 'auto' });
    const before = gh.clock.now();
    await gh.clock.sleep(HOUR);
    expect(gh.clock.now() - before).toBeGreaterThanOrEqual(HOUR);
    expect(gh.clock.skippedMs).toBeGreaterThan(HOUR - 60_000);
  });

  it('does not jump while a tracked actor is busy and not asleep on it', async () => {
    gh = await startGitHubDouble({ clock: 'auto' });
    const untrack = gh.clock.track('app', () => true);
    const sleeper = tracked(gh.clock.sleep(HOUR, 'job'));
    await realWait(100);
    expect(sleeper.done()).toBe(false);
    // The actor asleep on the clock too: everyone waits, and the clock jumps twice.
    const before = gh.clock.now();
    await gh.clock.sleep(2 * HOUR, 'app');
    expect(sleeper.done()).toBe(true);
    expect(gh.clock.now() - before).toBeGreaterThanOrEqual(2 * HOUR);
    untrack();
  });

  it('does not jump while a request is being answered', async () => {
    // The answer takes longer than the clock's quiet time, so a clock that ignored the
    // request in flight would jump before it; the quiet time after the answer leaves the
    // client time to read it on a loaded machine.
    gh = await startGitHubDouble({ clock: { mode: 'auto', quietMs: 400 } });
    const alice = gh.seed.user({ login: 'alice' });
    await gh.seed.repo({ owner, name: repo });
    gh.faults.add({ route: 'GET /repos/{owner}/{repo}', latencyMs: 1_200 });
    const order: string[] = [];
    const before = gh.stats.requests;
    const request = fetch(`${gh.url}/repos/${owner}/${repo}`, {
      headers: { authorization: `token ${alice.token}` },
    }).then(async (r) => {
      await r.arrayBuffer();
      order.push('answer');
    });
    while (gh.stats.requests === before) await realWait(5);
    const sleep = gh.clock.sleep(HOUR).then(() => order.push('an hour later'));
    await Promise.all([request, sleep]);
    expect(order).toEqual(['answer', 'an hour later']);
  });
});

describe('Octokit throttling on the clock', () => {
  it('waits out a secondary limit on the clock, spaces writes a second apart, and retries once', async () => {
    gh = await startGitHubDouble({
      clock: 'auto',
      limits: { contentCreation: { perMinute: 2, perHour: 100 } },
    });
    const alice = gh.seed.user({ login: 'alice', permission: 'write' });
    await gh.seed.repo({ owner, name: repo });
    const limits: string[] = [];
    const octokit = new (Octokit.plugin(throttling, retry))({
      baseUrl: gh.url,
      auth: alice.token,
      throttle: throttleOnClock(gh.clock, {
        onLimit: (kind, after) => limits.push(`${kind} ${after}`),
      }) as never,
    });
    const start = gh.clock.now();
    for (const title of ['a', 'b', 'c']) await octokit.rest.issues.create({ owner, repo, title });
    expect(gh.state.issues(owner, repo).map((i) => i.title)).toEqual(['a', 'b', 'c']);
    expect(limits).toEqual(['secondary 60']);
    expect(gh.stats.limitHits.map((h) => h.limit)).toEqual(['content-creation-per-minute']);
    // Notifying writes 3 s apart, then 60 s of retry-after: more than a minute of GitHub time.
    expect(gh.clock.now() - start).toBeGreaterThanOrEqual(66_000);
  });

  it('waits for x-ratelimit-reset on the clock after the primary limit', async () => {
    gh = await startGitHubDouble({ clock: 'auto', limits: { rest: { perHour: 2 } } });
    const alice = gh.seed.user({ login: 'alice', permission: 'write' });
    await gh.seed.repo({ owner, name: repo });
    const octokit = new (Octokit.plugin(throttling, retry))({
      baseUrl: gh.url,
      auth: alice.token,
      throttle: throttleOnClock(gh.clock) as never,
    });
    const first = await octokit.rest.repos.get({ owner, repo });
    const reset = Number(first.headers['x-ratelimit-reset']) * 1000;
    await octokit.rest.repos.get({ owner, repo });
    const third = await octokit.rest.repos.get({ owner, repo });
    expect(third.status).toBe(200);
    expect(gh.clock.now()).toBeGreaterThanOrEqual(reset);
    expect(third.headers['x-ratelimit-used']).toBe('1');
    expect(gh.stats.limitHits.map((h) => h.limit)).toEqual(['primary-rest']);
  });
});
