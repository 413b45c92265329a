/**
 * GitHub's content-creation limit met while the App labels an epic (it creates and links a
 * sub-issue per story in one decision): what the App is answered is GitHub's own 403; with
 * probot's throttling as in production the App waits it out, and with no retries in the
 * client at all the App handles the delivery again itself once `retry-after` has passed —
 * either way the epic carries on without a command. The limit is lowered to 10 a minute so
 * that a small epic meets it (the answer is the same at GitHub's 80). A limit met on a later
 * decision shows on the status comment until the App decides again.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { hasMarker, STATUS_MARKER } from '../../src/core/epic/markers.js';
import { secondaryBody } from '../github-double/limits.js';
import { throttleOnClock } from '../github-double/throttle.js';
import {
  APP_ACTOR,
  botComments,
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
    w = await startApp({
      double: { limits: LIMIT, clock: { mode: 'manual' } },
      // The clock stands still: each of the App's own retries (see the last test) comes at
      // once and is refused again, until the App gives up and logs the refusal.
      clock: (gh) => ({ now: () => gh.clock.now(), sleep: async () => undefined }),
    });
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
    const messages = gh.stats.limitHits.map((h) => String(secondaryBody(h.requestId)['message']));
    const logged = w.log.filter((e) => e.level >= 50).map((e) => e.msg);
    expect(logged.some((m) => messages.some((msg) => m.includes(`HTTP 403: ${msg}`)))).toBe(true);
  });

  it('with probot throttling waiting on the clock, is waited out and the epic carries on without a command', async () => {
    w = await startApp({
      double: { limits: LIMIT, clock: 'auto' },
      throttle: (gh) => throttleOnClock(gh.clock, { actor: APP_ACTOR }),
    });
    const { gh } = w;
    const labelledAt = gh.clock.now();
    const epic = await startEpic(w, 'Eight', planBody(EIGHT));
    const [hit] = gh.stats.limitHits;
    expect(hit?.limit).toBe('content-creation-per-minute');
    // The throttle waited the limit out on the clock, and labelling went on to its end: every
    // sub-issue made once and linked, the first stories dispatched, nothing typed. (Delivering
    // the rest is the ordinary epic from here: after a limit in labelling, to the end, in the
    // next test.)
    expect(gh.clock.now() - labelledAt).toBeGreaterThanOrEqual(60_000);
    const subs = gh.state.issue(OWNER, REPO, epic)?.subIssueIds ?? [];
    expect(subs).toHaveLength(EIGHT.length);
    const titles = gh.state.issues(OWNER, REPO).filter((i) => subs.includes(i.id));
    expect(new Set(titles.map((i) => i.title)).size).toBe(EIGHT.length);
    const running = dispatched(gh, epic);
    expect(running.length).toBeGreaterThan(0);
    expect(new Set(running).size).toBe(running.length);
    expect(running.every((d) => EIGHT.some((s) => d === `${s.id}#1`))).toBe(true);
    expect(gh.state.comments(OWNER, REPO, epic).filter((c) => c.author === 'alice')).toEqual([]);
  });

  it('with no retries in the client, the App handles the label again after retry-after by itself: the epic completes without a command', async () => {
    w = await startApp({
      // probot's plugins off: only the App's own retry waits the limit out.
      double: { limits: LIMIT, clock: 'auto' },
      clock: (gh) => ({ now: () => gh.clock.now(), sleep: (ms) => gh.clock.sleep(ms, APP_ACTOR) }),
    });
    const { gh } = w;
    const labelledAt = gh.clock.now();
    const epic = await startEpic(w, 'Eight', planBody(EIGHT));
    const [hit] = gh.stats.limitHits;
    expect(hit?.limit).toBe('content-creation-per-minute');
    // The App waited GitHub's `retry-after` (60 s) on the clock, then went on by itself.
    expect(gh.clock.now() - labelledAt).toBeGreaterThanOrEqual(60_000);
    const retried = w.log.filter((e) => /handled again at/.test(e.msg));
    expect(retried.length).toBeGreaterThan(0);
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
    // Every story once, every sub-issue once, all closed; no command was typed.
    expect(dispatched(gh, epic).sort()).toEqual(EIGHT.map((s) => `${s.id}#1`).sort());
    const subs = gh.state.issue(OWNER, REPO, epic)?.subIssueIds ?? [];
    expect(subs).toHaveLength(EIGHT.length);
    const titles = gh.state.issues(OWNER, REPO).filter((i) => subs.includes(i.id));
    expect(new Set(titles.map((i) => i.title)).size).toBe(EIGHT.length);
    expect(titles.filter((i) => i.state !== 'closed')).toEqual([]);
    expect(gh.state.comments(OWNER, REPO, epic).filter((c) => c.author === 'alice')).toEqual([]);
    // And the status comment no longer says it waits.
    const status = botComments(w, epic).find((b) => hasMarker(b, STATUS_MARKER));
    expect(status).toBeDefined();
    expect(status).not.toContain('Waiting for GitHub’s rate limit');
  });
});

describe('a rate limit on a later decision', () => {
  it('says on the status comment until when it waits, and goes on by itself then', async () => {
    w = await startApp({
      double: { clock: 'auto' },
      clock: (gh) => ({ now: () => gh.clock.now(), sleep: (ms) => gh.clock.sleep(ms, APP_ACTOR) }),
    });
    const { gh } = w;
    const two = [{ id: 'a' }, { id: 'b', dependsOn: ['a'] }];
    const epic = await startEpic(w, 'Two', planBody(two));
    expect(dispatched(gh, epic)).toEqual(['a#1']);
    // The decision after `a` finished meets a secondary limit on its first read.
    gh.faults.add({
      route: 'graphql:EpicflowEpicView',
      kind: 'secondary-rate-limit',
      retryAfterSeconds: 120,
    });
    const before = gh.clock.now();
    await completeStory(w, epic, 'a');
    await gh.idle();
    const noted = gh.deliveries.flatMap((d) => {
      const body = (d.payload as { comment?: { body?: string } }).comment?.body ?? '';
      return d.event === 'issue_comment' && d.action === 'edited' && hasMarker(body, STATUS_MARKER)
        ? [body]
        : [];
    });
    const note = noted.find((b) => b.includes('Waiting for GitHub’s rate limit'));
    // Two minutes (the retry-after) from when the App was refused, to the minute: that was
    // within half a minute of `before`, so the minute is one of two around a boundary.
    const minute = (ms: number): string => new Date(ms).toISOString().slice(11, 16);
    const until = /Waiting for GitHub’s rate limit until (\d\d:\d\d) UTC\.\*\*/.exec(
      note ?? '',
    )?.[1];
    expect([minute(before + 120_000), minute(before + 150_000)]).toContain(until);
    expect(note).toContain('epicflow goes on by itself then (nothing to do)');
    // Two minutes later on the clock the App decided again: `b` runs, the note is gone.
    expect(gh.clock.now() - before).toBeGreaterThanOrEqual(120_000);
    expect(dispatched(gh, epic)).toEqual(['a#1', 'b#1']);
    const status = botComments(w, epic).find((b) => hasMarker(b, STATUS_MARKER));
    expect(status).not.toContain('Waiting for GitHub’s rate limit');
  });
});
