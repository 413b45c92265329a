import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Octokit } from '@octokit/rest';
import { octokitFor } from './client.js';
import { startGitHubDouble, type GitHubDouble } from './index.js';

let gh: GitHubDouble;
let octokit: Octokit;

const BOARD = `query Board($org: String!, $number: Int!) {
  organization(login: $org) {
    projectV2(number: $number) {
      id
      title
      fields(first: 20) {
        nodes {
          ... on ProjectV2FieldCommon { id name dataType }
          ... on ProjectV2SingleSelectField { options { id name } }
        }
      }
    }
  }
}`;

interface BoardAnswer {
  organization: {
    projectV2: {
      id: string;
      title: string;
      fields: {
        nodes: {
          id: string;
          name: string;
          dataType: string;
          options?: { id: string; name: string }[];
        }[];
      };
    };
  };
}

beforeAll(async () => {
  gh = await startGitHubDouble();
  const alice = gh.seed.user({ login: 'alice', permission: 'write' });
  await gh.seed.repo({ owner: 'acme', name: 'shop' });
  gh.seed.project({
    owner: 'acme',
    number: 3,
    title: 'Epics',
    bare: true,
    fields: [{ name: 'Wave', dataType: 'NUMBER' }],
  });
  octokit = octokitFor(gh, alice.token);
});

afterAll(() => gh.close());

describe('Projects v2 over GraphQL', () => {
  it('finds a board, creates a Status field, adds an item (idempotently) and sets values', async () => {
    const board = await octokit.graphql<BoardAnswer>(BOARD, { org: 'acme', number: 3 });
    const project = board.organization.projectV2;
    expect(project.fields.nodes.map((f) => f.name)).toEqual(['Title', 'Wave']);

    const created = await octokit.graphql<{
      createProjectV2Field: {
        projectV2Field: { id: string; options: { id: string; name: string }[] };
      };
    }>(
      `mutation Field($project: ID!) {
        createProjectV2Field(input: { projectId: $project, dataType: SINGLE_SELECT, name: "Status",
          singleSelectOptions: [
            { name: "Planned", color: GRAY, description: "" },
            { name: "Done", color: GREEN, description: "" }
          ] }) {
          projectV2Field { ... on ProjectV2SingleSelectField { id options { id name } } }
        }
      }`,
      { project: project.id },
    );
    const status = created.createProjectV2Field.projectV2Field;
    expect(status.options.map((o) => o.name)).toEqual(['Planned', 'Done']);
    expect(new Set(status.options.map((o) => o.id)).size).toBe(2);

    const story = gh.seed.issue({ owner: 'acme', repo: 'shop', title: 'story' });
    const add = `mutation Add($project: ID!, $content: ID!) {
      addProjectV2ItemById(input: { projectId: $project, contentId: $content }) { item { id } }
    }`;
    type Added = { addProjectV2ItemById: { item: { id: string } } };
    const first = await octokit.graphql<Added>(add, { project: project.id, content: story.nodeId });
    const second = await octokit.graphql<Added>(add, {
      project: project.id,
      content: story.nodeId,
    });
    expect(second.addProjectV2ItemById.item.id).toBe(first.addProjectV2ItemById.item.id);

    const wave = project.fields.nodes.find((f) => f.name === 'Wave');
    const done = status.options.find((o) => o.name === 'Done');
    await octokit.graphql(
      `mutation Set($p: ID!, $i: ID!, $status: ID!, $option: String!, $wave: ID!) {
        s: updateProjectV2ItemFieldValue(input: { projectId: $p, itemId: $i, fieldId: $status, value: { singleSelectOptionId: $option } }) { projectV2Item { id } }
        w: updateProjectV2ItemFieldValue(input: { projectId: $p, itemId: $i, fieldId: $wave, value: { number: 2 } }) { projectV2Item { id } }
      }`,
      {
        p: project.id,
        i: first.addProjectV2ItemById.item.id,
        status: status.id,
        option: done?.id,
        wave: wave?.id,
      },
    );
    const item = await octokit.graphql<{
      node: { status: { name: string }; wave: { number: number }; content: { number: number } };
    }>(
      `query Item($id: ID!) {
        node(id: $id) {
          ... on ProjectV2Item {
            status: fieldValueByName(name: "Status") { ... on ProjectV2ItemFieldSingleSelectValue { name } }
            wave: fieldValueByName(name: "Wave") { ... on ProjectV2ItemFieldNumberValue { number } }
            content { ... on Issue { number } }
          }
        }
      }`,
      { id: first.addProjectV2ItemById.item.id },
    );
    expect(item.node).toEqual({
      status: { name: 'Done' },
      wave: { number: 2 },
      content: { number: story.number },
    });
    expect(gh.stats.graphql['Add']).toBe(2);
  });

  it("gives a new board GitHub's default Status, whose options updateProjectV2Field overwrites", async () => {
    gh.seed.project({ owner: 'acme', number: 4, title: 'Fresh' });
    const board = await octokit.graphql<{
      organization: {
        projectV2: {
          id: string;
          fields: {
            nodes: {
              id: string;
              name: string;
              options?: { id: string; name: string; color: string; description: string }[];
            }[];
          };
        };
      };
    }>(
      `query Fresh { organization(login: "acme") { projectV2(number: 4) { id fields(first: 20) { nodes {
        ... on ProjectV2FieldCommon { id name }
        ... on ProjectV2SingleSelectField { options { id name color description } }
      } } } } }`,
    );
    const project = board.organization.projectV2;
    const [title, status] = project.fields.nodes;
    expect(title?.name).toBe('Title');
    expect(status?.name).toBe('Status');
    expect(
      status?.options?.map(({ name, color, description }) => [name, color, description]),
    ).toEqual([
      ['Todo', 'GREEN', "This item hasn't been started"],
      ['In Progress', 'YELLOW', 'This is actively being worked on'],
      ['Done', 'PURPLE', 'This has been completed'],
    ]);
    const todo = status?.options?.find((o) => o.name === 'Todo')?.id;
    const done = status?.options?.find((o) => o.name === 'Done')?.id;

    // Two items: one on Todo, one on Done.
    const items = await Promise.all(
      ['first', 'second'].map(async (title) => {
        const issue = gh.seed.issue({ owner: 'acme', repo: 'shop', title });
        const added = await octokit.graphql<{ addProjectV2ItemById: { item: { id: string } } }>(
          `mutation AddFresh($p: ID!, $c: ID!) { addProjectV2ItemById(input: { projectId: $p, contentId: $c }) { item { id } } }`,
          { p: project.id, c: issue.nodeId },
        );
        return added.addProjectV2ItemById.item.id;
      }),
    );
    for (const [i, option] of [todo, done].entries()) {
      await octokit.graphql(
        `mutation SetFresh($p: ID!, $i: ID!, $f: ID!, $o: String!) {
          updateProjectV2ItemFieldValue(input: { projectId: $p, itemId: $i, fieldId: $f, value: { singleSelectOptionId: $o } }) { projectV2Item { id } }
        }`,
        { p: project.id, i: items[i], f: status?.id, o: option },
      );
    }

    const updated = await octokit.graphql<{
      updateProjectV2Field: {
        projectV2Field: { id: string; options: { id: string; name: string }[] };
      };
    }>(
      `mutation Rewrite($f: ID!) {
        updateProjectV2Field(input: { fieldId: $f, singleSelectOptions: [
          { name: "Planned", color: GRAY, description: "" },
          { name: "Done", color: GREEN, description: "finished" }
        ] }) { projectV2Field { ... on ProjectV2SingleSelectField { id options { id name } } } }
      }`,
      { f: status?.id },
    );
    const field = updated.updateProjectV2Field.projectV2Field;
    // The same field, a new option list: every option has a new id, even the one named alike.
    expect(field.id).toBe(status?.id);
    expect(field.options.map((o) => o.name)).toEqual(['Planned', 'Done']);
    expect(field.options.map((o) => o.id)).not.toContain(done);
    expect(field.options.map((o) => o.id)).not.toContain(todo);
    // The values that pointed to the old options are gone.
    const rec = gh.state.project('acme', 4);
    expect(rec?.items.map((it) => it.values.has(status?.id ?? ''))).toEqual([false, false]);
    expect(rec?.fields[1]?.options.map((o) => [o.name, o.color, o.description])).toEqual([
      ['Planned', 'GRAY', ''],
      ['Done', 'GREEN', 'finished'],
    ]);

    // Options only fit a single-select field, as GitHub answers.
    const wrong = await octokit
      .graphql(
        `mutation RewriteTitle($f: ID!) { updateProjectV2Field(input: { fieldId: $f, singleSelectOptions: [{ name: "x", color: RED, description: "" }] }) { projectV2Field { ... on ProjectV2FieldCommon { id } } } }`,
        { f: title?.id },
      )
      .catch((e: { errors: { type: string }[] }) => e.errors.map((x) => x.type));
    expect(wrong).toEqual(['UNPROCESSABLE']);
  });

  it('answers an unknown board as GitHub does (NOT_FOUND), without a violation', async () => {
    const r = await octokit
      .graphql(BOARD, { org: 'acme', number: 99 })
      .catch((e: { errors: { type: string; message: string }[] }) => e.errors);
    expect(r).toEqual([
      expect.objectContaining({
        type: 'NOT_FOUND',
        message: 'Could not resolve to a ProjectV2 with the number 99.',
      }),
    ]);
  });

  it('catches an unknown field or input field, naming the operation and the field', async () => {
    const r = await octokit
      .graphql(`query Oops { organization(login: "acme") { projectV2(number: 3) { id colour } } }`)
      .catch((e: { errors: { message: string }[] }) => e.errors.map((x) => x.message));
    expect(r).toEqual(['graphql Oops: Cannot query field "colour" on type "ProjectV2".']);
    expect(gh.violations.map((v) => `${v.operation}: ${v.message}`)).toEqual([
      'graphql Oops: Cannot query field "colour" on type "ProjectV2".',
    ]);
    gh.takeViolations();

    await octokit
      .graphql(
        `mutation Bad($p: ID!, $c: ID!) { addProjectV2ItemById(input: { projectId: $p, contentId: $c, status: "x" }) { item { id } } }`,
        { p: 'a', c: 'b' },
      )
      .catch(() => undefined);
    expect(gh.violations[0]?.message).toBe(
      'Field "status" is not defined by type "AddProjectV2ItemByIdInput".',
    );
    gh.takeViolations();
  });

  it('checks variables against the schema', async () => {
    await octokit.graphql(BOARD, { org: 'acme', number: 'three' }).catch(() => undefined);
    expect(gh.violations[0]?.message).toContain('Variable "$number" got invalid value "three"');
    gh.takeViolations();
  });
});
