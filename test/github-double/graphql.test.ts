import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
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
    fields: [{ name: 'Wave', dataType: 'NUMBER' }],
  });
  octokit = octokitFor(gh, alice.token);
});

afterEach(() => gh.assertNoViolations());
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
