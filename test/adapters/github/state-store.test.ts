import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GitHubStateStore } from '../../../src/adapters/github/state-store.js';
import { describeError } from '../../../src/core/errors.js';
import type { StoryRecord } from '../../../src/core/model.js';
import { OWNER, REPO, startWorld, type World } from './setup.js';

let w: World;

beforeAll(async () => {
  w = await startWorld();
});
afterAll(() => w.gh.close());

function record(epic: string, story: string, over: Partial<StoryRecord> = {}): StoryRecord {
  return {
    version: 1,
    epic,
    story,
    planHash: 'h1',
    status: 'planned',
    branch: `story/${epic}/${story}`,
    attempt: 1,
    executors: [],
    usage: [],
    notes: [],
    timings: {},
    ...over,
  };
}

describe('GitHubStateStore', () => {
  it('creates the state branch on first write and stores readable JSON', async () => {
    const store = new GitHubStateStore({ repo: w.repo, epic: '12' });
    expect(await store.read('api')).toBeNull();
    expect(await w.gh.state.ref(OWNER, REPO, 'epicflow/state')).toBeUndefined();
    const r = record('12', 'api');
    const written = await store.write(r, null);
    expect(written.ok).toBe(true);
    const text = await w.gh.state.file(OWNER, REPO, 'epicflow/state', 'epics/12/stories/api.json');
    expect(text).toBe(`${JSON.stringify(r, null, 2)}\n`);
    const back = await store.read('api');
    expect(back?.record).toEqual(r);
    expect(back?.sha).toBe(written.ok ? written.sha : '');
    const head = (await w.gh.state.ref(OWNER, REPO, 'epicflow/state')) ?? '';
    const { data: commit } = await w.repo.octokit.rest.git.getCommit({
      owner: OWNER,
      repo: REPO,
      commit_sha: head,
    });
    expect(commit.message).toBe('epicflow: epic 12, story api planned (attempt 1) [skip ci]');
    // The default branch is untouched.
    expect(await w.gh.state.file(OWNER, REPO, 'main', 'epics/12/stories/api.json')).toBeUndefined();
  });

  it('answers a write with a stale sha as a conflict, and one without sha on an existing file too', async () => {
    const store = new GitHubStateStore({ repo: w.repo, epic: '13' });
    const first = await store.write(record('13', 'ui'), null);
    if (!first.ok) throw new Error('first write failed');
    const second = await store.write(record('13', 'ui', { status: 'active' }), first.sha);
    expect(second.ok).toBe(true);
    expect(await store.write(record('13', 'ui', { status: 'failed' }), first.sha)).toEqual({
      ok: false,
      conflict: true,
    });
    expect(await store.write(record('13', 'ui', { status: 'failed' }), null)).toEqual({
      ok: false,
      conflict: true,
    });
    expect((await store.read('ui'))?.record.status).toBe('active');
  });

  it('lands two concurrent updates of the same story (no lost update)', async () => {
    const store = new GitHubStateStore({ repo: w.repo, epic: '14', sleep: async () => undefined });
    await store.write(record('14', 'db'), null);
    // Both updates read the same version before either writes, so one write must conflict.
    const calls: string[] = [];
    let release!: () => void;
    const bothRead = new Promise<void>((r) => (release = r));
    const add = (note: string) =>
      store.update('db', async (current) => {
        calls.push(note);
        if (calls.length === 2) release();
        if (calls.length <= 2) await bothRead;
        if (!current) throw new Error('record missing');
        return { ...current, notes: [...current.notes, note] };
      });
    await Promise.all([add('a'), add('b')]);
    expect(calls).toHaveLength(3);
    const final = await store.read('db');
    expect([...(final?.record.notes ?? [])].sort()).toEqual(['a', 'b']);
  });

  it('keeps the roster as a shared document with the same compare-and-swap', async () => {
    const store = new GitHubStateStore({ repo: w.repo, epic: '15', sleep: async () => undefined });
    type Roster = { exclusions: Record<string, string> };
    const exclude = (id: string) =>
      store.updateJson<Roster>('roster', (r) => ({
        exclusions: { ...(r?.exclusions ?? {}), [id]: 'usage-limit' },
      }));
    await Promise.all([exclude('codex'), exclude('claude'), exclude('gemini')]);
    const roster = await store.readJson<Roster>('roster');
    expect(Object.keys(roster?.value.exclusions ?? {}).sort()).toEqual([
      'claude',
      'codex',
      'gemini',
    ]);
    expect(await w.gh.state.file(OWNER, REPO, 'epicflow/state', 'epics/15/roster.json')).toContain(
      '\n  "exclusions": {\n',
    );
  });

  it('lists the stories of an epic and says which file is broken', async () => {
    const store = new GitHubStateStore({ repo: w.repo, epic: '16' });
    await store.write(record('16', 'b'), null);
    await store.write(record('16', 'a', { status: 'done' }), null);
    expect((await store.listStories()).map((r) => [r.story, r.status])).toEqual([
      ['a', 'done'],
      ['b', 'planned'],
    ]);
    await w.repo.octokit.rest.repos.createOrUpdateFileContents({
      owner: OWNER,
      repo: REPO,
      path: 'epics/16/stories/c.json',
      branch: 'epicflow/state',
      message: 'hand edit',
      content: Buffer.from('{ oops').toString('base64'),
    });
    const err = await store.read('c').catch((e: unknown) => e);
    expect(describeError(err)).toMatch(
      /^GitHub state: epics\/16\/stories\/c\.json on branch epicflow\/state of acme\/shop is not valid JSON \(.+\); fix or delete the file$/,
    );
  });
});
