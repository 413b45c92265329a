import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ProjectBoard } from '../../../src/adapters/github/board.js';
import { parseProjectUrl } from '../../../src/adapters/github/board-read.js';
import { describeError } from '../../../src/core/errors.js';
import { OWNER, REPO, startWorld, type World } from './setup.js';

let w: World;

beforeAll(async () => {
  w = await startWorld();
});
afterAll(() => w.gh.close());

const gql = (): Record<string, number> => ({ ...w.gh.stats.graphql });
const delta = (before: Record<string, number>): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(w.gh.stats.graphql)) {
    const d = v - (before[k] ?? 0);
    if (d > 0) out[k] = d;
  }
  return out;
};

const octokitGraphql = (query: string, vars: Record<string, unknown>): Promise<unknown> =>
  w.repo.octokit.graphql(query, vars);

/** Adds an issue to a board as a person would; returns the item id. */
async function addItem(projectId: string, contentId: string): Promise<string> {
  const added = (await octokitGraphql(
    `mutation AddByHand($p: ID!, $c: ID!) { addProjectV2ItemById(input: { projectId: $p, contentId: $c }) { item { id } } }`,
    { p: projectId, c: contentId },
  )) as { addProjectV2ItemById: { item: { id: string } } };
  return added.addProjectV2ItemById.item.id;
}

describe('parseProjectUrl', () => {
  it('reads organization and user boards, and refuses anything else', () => {
    expect(parseProjectUrl('https://github.com/orgs/acme/projects/7')).toEqual({
      ownerType: 'organization',
      owner: 'acme',
      number: 7,
    });
    expect(parseProjectUrl('https://github.com/users/alice/projects/2/views/1')).toEqual({
      ownerType: 'user',
      owner: 'alice',
      number: 2,
    });
    expect(() => parseProjectUrl('https://github.com/acme/shop/projects/1')).toThrow(
      'board.project: expected a project URL like https://github.com/orgs/<org>/projects/<number> ' +
        'or https://github.com/users/<user>/projects/<number>, got "https://github.com/acme/shop/projects/1"',
    );
  });
});

describe('ProjectBoard', () => {
  it("turns a new board's default Status into epicflow's and adds the four fields in one mutation, and changes nothing the second time", async () => {
    w.gh.seed.project({ owner: OWNER, number: 7 });
    const defaultStatus = w.gh.state.project(OWNER, 7)?.fields[1];
    expect(defaultStatus?.options.map((o) => o.name)).toEqual(['Todo', 'In Progress', 'Done']);
    const url = 'https://github.com/orgs/acme/projects/7';
    const before = gql();
    await ProjectBoard.open(w.repo.octokit, url);
    expect(delta(before)).toEqual({ EpicflowBoard: 2, EpicflowSetUpFields: 1 });
    const project = w.gh.state.project(OWNER, 7);
    // GitHub's own Status field, kept (same id) with epicflow's options.
    expect(project?.fields[1]?.id).toBe(defaultStatus?.id);
    expect(project?.fields[1]?.options.map((o) => o.color)).toEqual([
      'GRAY',
      'BLUE',
      'YELLOW',
      'GREEN',
      'RED',
    ]);
    expect(project?.fields.map((f) => [f.name, f.dataType])).toEqual([
      ['Title', 'TITLE'],
      ['Status', 'SINGLE_SELECT'],
      ['Wave', 'NUMBER'],
      ['Executor', 'TEXT'],
      ['Tokens', 'NUMBER'],
      ['Cost', 'NUMBER'],
    ]);
    expect(project?.fields[1]?.options.map((o) => o.name)).toEqual([
      'Planned',
      'Active',
      'Waiting',
      'Done',
      'Failed',
    ]);
    const again = gql();
    await ProjectBoard.open(w.repo.octokit, url);
    expect(delta(again)).toEqual({ EpicflowBoard: 1 });
    expect(w.gh.state.project(OWNER, 7)?.fields).toHaveLength(6);
  });

  it('adds items once and batches field updates, skipping values already set', async () => {
    w.gh.seed.project({ owner: OWNER, number: 8 });
    const url = 'https://github.com/orgs/acme/projects/8';
    const board = await ProjectBoard.open(w.repo.octokit, url);
    const issues = [1, 2, 3].map((i) =>
      w.gh.seed.issue({ owner: OWNER, repo: REPO, title: `story ${i}` }),
    );
    const first = await board.ensureItem(issues[0]?.nodeId ?? '');
    const again = await board.ensureItem(issues[0]?.nodeId ?? '');
    expect(again).toBe(first);
    const items = await board.ensureItems(issues.map((i) => i.nodeId));
    expect(items.get(issues[0]?.nodeId ?? '')).toBe(first);
    expect(w.gh.state.project(OWNER, 8)?.items).toHaveLength(3);
    expect(w.gh.stats.graphql['EpicflowAddItems']).toBe(2);

    const ids = issues.map((i) => items.get(i.nodeId) ?? '');
    const before = gql();
    const written = await board.updateMany(
      ids.map((itemId, i) => ({
        itemId,
        values: { status: 'active', wave: i + 1, executor: 'codex', tokens: 1200, cost: 0.123 },
      })),
    );
    expect(written).toBe(15);
    // The items' values were read with the items (new ones are empty): only the write.
    expect(delta(before)).toEqual({ EpicflowUpdateValues: 1 });

    const second = gql();
    const rewritten = await board.updateMany(
      ids.map((itemId, i) => ({
        itemId,
        values: { status: i === 0 ? 'done' : 'active', wave: i + 1, executor: 'codex' },
      })),
    );
    expect(rewritten).toBe(1);
    expect(delta(second)).toEqual({ EpicflowUpdateValues: 1 });

    const project = w.gh.state.project(OWNER, 8);
    const status = project?.fields.find((f) => f.name === 'Status');
    const cost = project?.fields.find((f) => f.name === 'Cost');
    const done = status?.options.find((o) => o.name === 'Done')?.id;
    const item0 = project?.items.find((i) => i.id === ids[0]);
    expect(item0?.values.get(status?.id ?? '')).toEqual({ singleSelectOptionId: done });
    expect(item0?.values.get(cost?.id ?? '')).toEqual({ number: 0.12 });

    const third = gql();
    expect(await board.updateFields(ids[1] ?? '', { status: 'active', wave: 2 })).toBe(0);
    expect(delta(third)).toEqual({});

    // Someone moves a card by hand; the next decision opens the board with its issues,
    // reads their items and values in that one request and puts the card back.
    const active = status?.options.find((o) => o.name === 'Active')?.id;
    project?.items
      .find((i) => i.id === ids[1])
      ?.values.set(status?.id ?? '', { singleSelectOptionId: done ?? '' });
    const next = gql();
    const reopened = await ProjectBoard.open(w.repo.octokit, url, {
      contents: issues.map((i) => i.nodeId),
    });
    const known = await reopened.ensureItems(issues.map((i) => i.nodeId));
    expect(known).toEqual(items);
    const restored = await reopened.updateMany(
      ids.map((itemId, i) => ({
        itemId,
        values: { status: i === 0 ? 'done' : 'active', wave: i + 1, executor: 'codex' },
      })),
    );
    expect(restored).toBe(1);
    expect(delta(next)).toEqual({ EpicflowBoard: 1, EpicflowUpdateValues: 1 });
    expect(project?.items.find((i) => i.id === ids[1])?.values.get(status?.id ?? '')).toEqual({
      singleSelectOptionId: active,
    });
    // An item read at another decision than its own: its values are read before writing.
    const later = gql();
    const plain = await ProjectBoard.open(w.repo.octokit, url);
    expect(await plain.updateFields(ids[2] ?? '', { status: 'active', wave: 3 })).toBe(0);
    expect(delta(later)).toEqual({ EpicflowBoard: 1, EpicflowFieldValues: 1 });
  });

  it('reads the items and values of 100 issues with the board for a point or two', async () => {
    w.gh.seed.project({ owner: OWNER, number: 19 });
    const url = 'https://github.com/orgs/acme/projects/19';
    const setUp = await ProjectBoard.open(w.repo.octokit, url);
    const issues = Array.from({ length: 100 }, (_, i) =>
      w.gh.seed.issue({ owner: OWNER, repo: REPO, title: `wide ${i}` }),
    );
    const items = await setUp.ensureItems(issues.map((i) => i.nodeId));
    await setUp.updateMany(
      issues.map((issue, i) => ({
        itemId: items.get(issue.nodeId) ?? '',
        values: { status: 'planned', wave: i % 7, executor: 'codex', tokens: i, cost: i / 100 },
      })),
    );
    const points = w.gh.stats.graphqlPoints;
    const before = gql();
    const board = await ProjectBoard.open(w.repo.octokit, url, {
      contents: issues.map((i) => i.nodeId),
    });
    // 100 item listings (one per issue) and the board's own two: 102 requests, not 5,102
    // (a value connection under each of 50 items per issue, as before).
    expect(w.gh.stats.graphqlPoints - points).toBeLessThanOrEqual(2);
    // Every value came with it: writing the same values again reads and writes nothing.
    const again = await board.updateMany(
      issues.map((issue, i) => ({
        itemId: items.get(issue.nodeId) ?? '',
        values: { status: 'planned', wave: i % 7, executor: 'codex', tokens: i, cost: i / 100 },
      })),
    );
    expect(again).toBe(0);
    expect(delta(before)).toEqual({ EpicflowBoard: 1 });
  });

  it('rewrites the default Status of a board whose items have no Status yet', async () => {
    // Someone put the epic issue on the new board before configuring epicflow.
    w.gh.seed.project({ owner: OWNER, number: 10 });
    const epic = w.gh.seed.issue({ owner: OWNER, repo: REPO, title: 'Epic: on the board' });
    const project = w.gh.state.project(OWNER, 10);
    await addItem(project?.id ?? '', epic.nodeId);
    const before = gql();
    const board = await ProjectBoard.open(
      w.repo.octokit,
      'https://github.com/orgs/acme/projects/10',
    );
    expect(delta(before)).toEqual({
      EpicflowBoard: 2,
      EpicflowStatusInUse: 1,
      EpicflowSetUpFields: 1,
    });
    expect(project?.fields[1]?.options.map((o) => o.name)).toEqual([
      'Planned',
      'Active',
      'Waiting',
      'Done',
      'Failed',
    ]);
    const item = await board.ensureItem(epic.nodeId);
    expect(await board.updateFields(item, { status: 'active' })).toBe(1);
  });

  it('refuses, naming the missing options, a default Status that an item already uses, and rewrites nothing', async () => {
    w.gh.seed.project({ owner: OWNER, number: 9 });
    const project = w.gh.state.project(OWNER, 9);
    const status = project?.fields[1];
    const todo = status?.options.find((o) => o.name === 'Todo')?.id ?? '';
    // Another issue on the board, on Todo (and a first page of items without a Status).
    const others = Array.from({ length: 101 }, (_, i) =>
      w.gh.seed.issue({ owner: OWNER, repo: REPO, title: `other ${i}` }),
    );
    const items = await Promise.all(others.map((o) => addItem(project?.id ?? '', o.nodeId)));
    const used = items[100] ?? '';
    await octokitGraphql(
      `mutation SetTodo($p: ID!, $i: ID!, $f: ID!, $o: String!) {
        updateProjectV2ItemFieldValue(input: { projectId: $p, itemId: $i, fieldId: $f, value: { singleSelectOptionId: $o } }) { projectV2Item { id } }
      }`,
      { p: project?.id, i: used, f: status?.id, o: todo },
    );
    const fieldsBefore = project?.fields.length;
    const before = gql();
    const err = await ProjectBoard.open(
      w.repo.octokit,
      'https://github.com/orgs/acme/projects/9',
    ).catch((e: unknown) => e);
    expect(describeError(err)).toBe(
      'GitHub: the project board https://github.com/orgs/acme/projects/9 cannot be used as is\n' +
        '  field Status lacks the option(s) Planned, Active, Waiting, Failed: add them in the ' +
        "board's field settings (items on the board already have a Status, and epicflow does not " +
        'rewrite an option list in use: GitHub would drop the values already set)',
    );
    // Both pages of items were looked at, and nothing was written to the board.
    expect(delta(before)).toEqual({ EpicflowBoard: 1, EpicflowStatusInUse: 2 });
    expect(project?.fields.length).toBe(fieldsBefore);
    expect(status?.options.map((o) => o.name)).toEqual(['Todo', 'In Progress', 'Done']);
    expect(project?.items.find((i) => i.id === used)?.values.get(status?.id ?? '')).toEqual({
      singleSelectOptionId: todo,
    });
  });

  it('resolves a user-owned board', async () => {
    w.gh.seed.user({ login: 'alice', permission: 'write' });
    // A project without a Status field at all: epicflow creates it.
    w.gh.seed.project({ owner: 'alice', number: 2, bare: true });
    const board = await ProjectBoard.open(
      w.repo.octokit,
      'https://github.com/users/alice/projects/2',
    );
    expect(board.projectId).toBe(w.gh.state.project('alice', 2)?.id);
    const status = w.gh.state.project('alice', 2)?.fields.find((f) => f.name === 'Status');
    expect(status?.options.map((o) => o.name)).toEqual([
      'Planned',
      'Active',
      'Waiting',
      'Done',
      'Failed',
    ]);
  });

  it('says which permission is missing when the board cannot be found', async () => {
    const err = await ProjectBoard.open(
      w.repo.octokit,
      'https://github.com/orgs/acme/projects/99',
    ).catch((e: unknown) => e);
    expect(describeError(err)).toBe(
      'GitHub: cannot read the project board https://github.com/orgs/acme/projects/99 ' +
        '(Could not resolve to a ProjectV2 with the number 99.)\n' +
        '  the token probably lacks the GitHub App permission "Organization projects: read and write" ' +
        '(or the App is not installed for this repository or organization)',
    );
  });
});
