/**
 * The fields of an epic's project board (Status, Wave, Executor, Tokens, Cost): what
 * epicflow needs of them, how they are read, checked, and set up in one mutation.
 */
import { BOARD_STATUSES, boardStatusOf } from '../../core/epic/board-values.js';
import { EpicflowError } from '../../core/errors.js';
import { attempt } from './errors.js';
import type { GitHubClient } from './resources/resource.js';

type FieldType = 'SINGLE_SELECT' | 'NUMBER' | 'TEXT';

/** The Status options epicflow creates, in board order; descriptions show on the board. */
const STATUS_OPTION_INPUTS: readonly { name: string; color: string; description: string }[] = (
  [
    ['planned', 'GRAY', 'epicflow: waits for its dependencies or a free slot'],
    ['active', 'BLUE', 'epicflow: an agent is working on it'],
    ['waiting', 'YELLOW', 'epicflow: not started or held up; the epic comment says why'],
    ['done', 'GREEN', 'epicflow: merged into the epic branch'],
    ['failed', 'RED', 'epicflow: failed; /retry or /skip it on the epic'],
  ] as const
).map(([status, color, description]) => ({ name: boardStatusOf(status), color, description }));

export const BOARD_FIELDS: readonly { readonly name: string; readonly type: FieldType }[] = [
  { name: 'Status', type: 'SINGLE_SELECT' },
  { name: 'Wave', type: 'NUMBER' },
  { name: 'Executor', type: 'TEXT' },
  { name: 'Tokens', type: 'NUMBER' },
  { name: 'Cost', type: 'NUMBER' },
];
export const PROJECT_PERMISSION = 'Organization projects: read and write';
export interface FieldInfo {
  readonly id: string;
  readonly name: string;
  readonly dataType: string;
  /** Option name → id (single-select fields). */
  readonly options: ReadonlyMap<string, string>;
}

export interface RawField {
  id?: string;
  name?: string;
  dataType?: string;
  options?: { id: string; name: string }[];
}

export const FIELD_SELECTION = `
  ... on ProjectV2FieldCommon { id name dataType }
  ... on ProjectV2SingleSelectField { options { id name } }`;

export function fieldInfo(raw: RawField): FieldInfo | null {
  if (!raw.id || !raw.name || !raw.dataType) return null;
  return {
    id: raw.id,
    name: raw.name,
    dataType: raw.dataType,
    options: new Map((raw.options ?? []).map((o) => [o.name, o.id])),
  };
}
/** Status options epicflow needs that the field lacks. */
export function missingOptions(status: FieldInfo): string[] {
  return BOARD_STATUSES.filter((o) => !status.options.has(o));
}

/** Item pages read before deciding a Status is unused; past them it is taken as used. */
const STATUS_PAGES = 10;

/**
 * Whether any item on the board has a Status value. Only asked when Status lacks
 * epicflow's options on a board with items: a board set up costs no read for it.
 */
export async function statusInUse(
  octokit: GitHubClient,
  url: string,
  projectId: string,
  fieldName: string,
): Promise<boolean> {
  let after: string | null = null;
  for (let page = 0; page < STATUS_PAGES; page++) {
    const data: {
      node: {
        items?: {
          pageInfo: { hasNextPage: boolean; endCursor: string | null };
          nodes: ({ fieldValueByName: { optionId?: string | null } | null } | null)[];
        };
      } | null;
    } = await attempt(
      `read the Status values on the project board ${url}`,
      PROJECT_PERMISSION,
      () =>
        octokit.graphql(
          `query EpicflowStatusInUse($project: ID!, $field: String!, $after: String) {
              node(id: $project) {
                ... on ProjectV2 {
                  items(first: 100, after: $after) {
                    pageInfo { hasNextPage endCursor }
                    nodes {
                      fieldValueByName(name: $field) {
                        ... on ProjectV2ItemFieldSingleSelectValue { optionId }
                      }
                    }
                  }
                }
              }
            }`,
          { project: projectId, field: fieldName, after },
        ),
    );
    const items = data.node?.items;
    if (!items) return true;
    if (items.nodes.some((n) => typeof n?.fieldValueByName?.optionId === 'string')) return true;
    if (!items.pageInfo.hasNextPage) return false;
    after = items.pageInfo.endCursor;
  }
  return true;
}

/**
 * One mutation document: the Status options rewritten (when `status` is given) and the
 * missing fields created.
 */
export async function setUpFields(
  octokit: GitHubClient,
  url: string,
  projectId: string,
  missing: readonly { name: string; type: FieldType }[],
  status: FieldInfo | undefined,
): Promise<void> {
  const vars: Record<string, unknown> = { project: projectId };
  const decls = ['$project: ID!'];
  const body: string[] = [];
  if (status) {
    vars['status'] = status.id;
    vars['statusOptions'] = STATUS_OPTION_INPUTS;
    decls.push('$status: ID!', '$statusOptions: [ProjectV2SingleSelectFieldOptionInput!]');
    body.push(
      'status: updateProjectV2Field(input: { fieldId: $status, singleSelectOptions: $statusOptions }) ' +
        '{ projectV2Field { ... on ProjectV2FieldCommon { id } } }',
    );
  }
  missing.forEach((f, i) => {
    vars[`n${i}`] = f.name;
    decls.push(`$n${i}: String!`);
    let options = '';
    if (f.type === 'SINGLE_SELECT') {
      vars[`o${i}`] = STATUS_OPTION_INPUTS;
      decls.push(`$o${i}: [ProjectV2SingleSelectFieldOptionInput!]`);
      options = `, singleSelectOptions: $o${i}`;
    }
    body.push(
      `f${i}: createProjectV2Field(input: { projectId: $project, dataType: ${f.type}, ` +
        `name: $n${i}${options} }) { projectV2Field { ... on ProjectV2FieldCommon { id } } }`,
    );
  });
  const what = [
    ...(status ? [`set the options of the field ${status.name}`] : []),
    ...(missing.length > 0 ? [`create the field(s) ${missing.map((f) => f.name).join(', ')}`] : []),
  ].join(' and ');
  await attempt(`${what} on the project board ${url}`, PROJECT_PERMISSION, () =>
    octokit.graphql(
      `mutation EpicflowSetUpFields(${decls.join(', ')}) {\n${body.join('\n')}\n}`,
      vars,
    ),
  );
}

/**
 * Existing fields must have the right type, and Status every epicflow option. GitHub's
 * API can only replace a single-select field's whole option list (new option ids, so
 * values already set on items would be lost): once items have a Status, missing options
 * are reported, not forced.
 */
export function checkFields(
  url: string,
  fields: ReadonlyMap<string, FieldInfo>,
  setUp: { creating: readonly { name: string }[]; rewriting: boolean } = {
    creating: [],
    rewriting: false,
  },
): void {
  const problems: string[] = [];
  for (const want of BOARD_FIELDS) {
    const f = fields.get(want.name.toLowerCase());
    if (!f) {
      if (!setUp.creating.some((c) => c.name === want.name)) {
        problems.push(`field ${want.name} is missing`);
      }
    } else if (f.dataType !== want.type) {
      problems.push(`field ${f.name} has type ${f.dataType}; epicflow needs ${want.type}`);
    }
  }
  const status = fields.get('status');
  if (status?.dataType === 'SINGLE_SELECT' && !setUp.rewriting) {
    const missing = missingOptions(status);
    if (missing.length > 0) {
      problems.push(
        `field Status lacks the option(s) ${missing.join(', ')}: add them in the board's ` +
          'field settings (items on the board already have a Status, and epicflow does not ' +
          'rewrite an option list in use: GitHub would drop the values already set)',
      );
    }
  }
  if (problems.length > 0) {
    throw new EpicflowError('github', `GitHub: the project board ${url} cannot be used as is`, {
      details: problems,
    });
  }
}
