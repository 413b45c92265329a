/**
 * GitHub's content-creation limit met while the App labels an epic (it creates and links a
 * sub-issue per story in one decision): what the App is answered is GitHub's own 403, and
 * with probot's throttling as in production the App waits it out and the epic carries on.
 * The limit is lowered to 10 a minute so that a small epic meets it (the answer is the same
 * at GitHub's 80).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { secondaryBody } from '../github-double/limits.js';
import { throttleOnClock } from '../github-double/throttle.js';
import {
  APP_ACTOR,
  completeStory,
  dispatched,
  OWNER,
  planBody,
  REPO,
  startApp,
  startEpic,
  type AppWorld,
} from './harness.js';

const EIGHT = Array.from({ length: 8 }, (_, i) => ({ id: `s${i}` }));
const LIMIT = { contentCreation: { perMinute: 10, perHour: 500 } } as const;

let w: AppWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe('the content-creation limit in the middle of labelling', () => {
  it('reaches the App as the 403 GitHub sends (retries off)', async () => {
    w = await startApp({ double: { limits: LIMIT, clock: { mode: 'manual' } } });
    // The App logs the refused write (it is transient for the App: no comment, no state).
    w.expectError(/secondary rate limit/);
    const { gh } = w;
    const created0 = gh.stats.contentCreatingRequests;
    const epic = await startEpic(w, 'Eight', planBody(EIGHT));
    const [hit] = gh.stats.limitHits;
    expect(hit).toMatchObject({ limit: 'content-creation-per-minute', at: gh.clock.now() });
    // Partway: some sub-issues made and linked, not all of them.
    const linked = gh.state.issue(OWNER, REPO, epic)?.subIssueIds.length ?? 0;
    expect(linked).toBeGreaterThan(0);
    expect(linked).toBeLessThan(EIGHT.length);
    expect(gh.stats.contentCreatingRequests - created0).toBeGreaterThan(10);
    // What the App was answered, in its own words: GitHub's status and message, request id and all.
    const message = String(secondaryBody(hit?.requestId ?? '')['message']);
    const logged = w.log.filter((e) => e.level >= 50).map((e) => e.msg);
    expect(logged.some((m) => m.includes(`HTTP 403: ${message}`))).toBe(true);
  });

  it('with probot throttling waiting on the clock, is waited out and the epic is delivered without a command', async () => {
    w = await startApp({
      double: { limits: LIMIT, clock: 'auto' },
      throttle: (gh) => throttleOnClock(gh.clock, { actor: APP_ACTOR }),
    });
    const { gh } = w;
    const epic = await startEpic(w, 'Eight', planBody(EIGHT));
    expect(gh.stats.limitHits.length).toBeGreaterThan(0);
    const completed = new Set<string>();
    while (completed.size < EIGHT.length) {
      const running = dispatched(gh, epic).filter((d) => !completed.has(d));
      if (running.length === 0)
        throw new Error(`nothing running after ${[...completed].join(', ')}`);
      for (const d of running) {
        completed.add(d);
        await completeStory(w, epic, d.split('#')[0] ?? '');
      }
    }
    expect(dispatched(gh, epic).sort()).toEqual(EIGHT.map((s) => `${s.id}#1`).sort());
    const subs = gh.state.issue(OWNER, REPO, epic)?.subIssueIds ?? [];
    expect(subs).toHaveLength(EIGHT.length);
    const open = gh.state
      .issues(OWNER, REPO)
      .filter((i) => subs.includes(i.id) && i.state !== 'closed');
    expect(open).toEqual([]);
  });
});
