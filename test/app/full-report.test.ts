/**
 * The full report behind a shortened report comment: `epics/<n>/report.md` on
 * the state branch, written when the comment links to it and only when its
 * text changed. Driven through the GitHub double with a real plan and records.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GitHubStateStore, gitBlobSha } from '../../src/adapters/github/state-store.js';
import type { Action } from '../../src/core/epic/index.js';
import type { StoryRecord } from '../../src/core/model.js';
import { parsePlan } from '../../src/core/plan/index.js';
import { ensureFullReport, fullReportUrl } from '../../src/orchestrator/full-report.js';
import { readView, stateFromView } from '../../src/orchestrator/load.js';
import { OWNER, planBody, REPO, startApp, type AppWorld } from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
});
afterAll(() => w.close());

describe('the full report', () => {
  it('is linked at <server>/<o>/<r>/blob/epicflow/state/epics/<n>/report.md', () => {
    expect(fullReportUrl(w.repo.htmlUrl, 7)).toBe(
      `${w.gh.url}/acme/shop/blob/epicflow/state/epics/7/report.md`,
    );
  });

  it('is written when the comment was shortened, with every story, and only when it changed', async () => {
    const parsed = parsePlan(planBody([{ id: 'api' }, { id: 'ui', dependsOn: ['api'] }]));
    if (!parsed.ok) throw new Error('plan');
    const plan = parsed.plan;
    const store = new GitHubStateStore({ repo: w.repo, epic: '9' });
    const api: StoryRecord = {
      version: 1,
      epic: '9',
      story: 'api',
      planHash: plan.hashes['api'] ?? '',
      status: 'failed',
      reason: 'gates failed: @someone broke npm test',
      branch: 'story/9/api',
      attempt: 1,
      executors: ['codex'],
      usage: [],
      notes: [],
      timings: {},
    };
    await store.write(api, null);
    const url = fullReportUrl(w.repo.htmlUrl, 9);
    const file = async (path: string): Promise<string> =>
      (await w.gh.state.file(OWNER, REPO, 'epicflow/state', `epics/9/${path}`)) ?? '';
    const recordText = (): Promise<string> => file('stories/api.json');
    const reportText = (): Promise<string> => file('report.md');
    const run = async (body: string, now = '2026-01-01T00:00:00.000Z'): Promise<boolean> => {
      const state = stateFromView(store, plan, await readView(w.repo, 9, 'main'));
      const actions: Action[] = [{ kind: 'ensure-report-comment', marker: 'report', body }];
      return ensureFullReport({
        store,
        epic: { number: 9, title: 'Checkout' },
        plan,
        records: state.records,
        merged: new Map(),
        halt: undefined,
        actions,
        url,
        repoHtmlUrl: w.repo.htmlUrl,
        currentSha: state.reportSha ?? null,
        ...(state.reportText === undefined ? {} : { currentText: state.reportText }),
        now,
      });
    };
    // Not shortened: nothing written.
    expect(await run('the whole report')).toBe(false);
    expect(
      await w.gh.state.file(OWNER, REPO, 'epicflow/state', 'epics/9/report.md'),
    ).toBeUndefined();
    // Shortened: the file holds the whole report.
    expect(await run(`… truncated: 1 story not shown. Full report: [${url}](${url})`)).toBe(true);
    const text = await w.gh.state.file(OWNER, REPO, 'epicflow/state', 'epics/9/report.md');
    expect(text).toContain('`api`');
    expect(text).toContain('`ui`');
    expect(text).toContain('gates failed');
    expect(text).not.toContain('truncated');
    // Same text again: no write.
    const writes = w.gh.stats.rest['repos/create-or-update-file-contents'] ?? 0;
    expect(await run(`… truncated. Full report: ${url}`)).toBe(false);
    expect(w.gh.stats.rest['repos/create-or-update-file-contents'] ?? 0).toBe(writes);
    // Hours later, with a record started long before: only the elapsed time would change,
    // so nothing is written and the file keeps the time of its last change.
    await store.write(
      { ...api, startedAt: '2025-12-31T20:00:00.000Z' },
      gitBlobSha(await recordText()),
    );
    expect(await run(`… truncated. Full report: ${url}`)).toBe(true);
    const started = await reportText();
    expect(started).toContain('- Elapsed: 4h 00m');
    expect(await run(`… truncated. Full report: ${url}`, '2026-01-01T09:30:00.000Z')).toBe(false);
    expect(await reportText()).toBe(started);
  });
});
