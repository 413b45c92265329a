/**
 * The epic's owner on the state branch: recorded by the epic's first decision, so
 * writers acting as another login find the owner's sub-issues and comments; for
 * an epic opened before owners were recorded, claimed by a decision people cause,
 * never by a finished run's (a story job then cannot tell who opened the epic).
 * A malformed owner stops the decision with a message naming the file and field.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GitHubStateStore, STATE_BRANCH } from '../../src/adapters/github/state-store.js';
import {
  commentsOn,
  completeStory,
  OWNER,
  planBody,
  REPO,
  say,
  startApp,
  startEpic,
  type AppWorld,
} from './harness.js';

let w: AppWorld;
beforeAll(async () => {
  w = await startApp();
});
afterAll(() => w.close());

async function epicDoc(epic: number): Promise<unknown> {
  const text = await w.gh.state.file(OWNER, REPO, STATE_BRANCH, `epics/${epic}/epic.json`);
  return text === undefined ? undefined : JSON.parse(text);
}

/** Sets (or, with undefined, removes) the owner, keeping the rest of the document. */
async function setOwner(epic: number, owner: unknown): Promise<void> {
  const store = new GitHubStateStore({ repo: w.repo, epic: String(epic) });
  const current = await store.readJson<Record<string, unknown>>('epic');
  const { owner: _old, ...rest } = current?.value ?? {};
  const value = owner === undefined ? rest : { ...rest, owner };
  const written = await store.writeJson('epic', value, current?.sha ?? null);
  expect(written.ok).toBe(true);
}

const ownerOf = async (epic: number): Promise<unknown> =>
  ((await epicDoc(epic)) as { owner?: unknown } | undefined)?.owner;

describe("the epic's owner", () => {
  it('is recorded by the first decision, and claimed later only by a decision people cause', async () => {
    const epic = await startEpic(w, 'Owner', planBody([{ id: 'api' }, { id: 'db' }]));
    expect(await ownerOf(epic)).toBe('epicflow[bot]');

    // As an epic opened before owners were recorded: a finished run does not claim it.
    await setOwner(epic, undefined);
    await completeStory(w, epic, 'api');
    expect(await epicDoc(epic)).toBeDefined();
    expect(await ownerOf(epic)).toBeUndefined();
    await say(w, epic, '/status');
    expect(await ownerOf(epic)).toBe('epicflow[bot]');
  });

  it('that is not a login stops the decision, naming the file and the field', async () => {
    w.expectError('state');
    const epic = await startEpic(w, 'Bad owner', planBody([{ id: 'ui' }]));
    await setOwner(epic, 'not a login <script>');
    await say(w, epic, '/status');
    const errors = commentsOn(w.gh, epic).filter((c) => c.body.includes(`epics/${epic}/epic.json`));
    expect(errors.map((c) => c.author)).toEqual(['epicflow[bot]']);
    expect(errors[0]?.body).toMatch(/owner must be a GitHub login/);
  });
});
