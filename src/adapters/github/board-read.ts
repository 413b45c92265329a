/**
 * How the board and its items' values are read: the project's URL, the GraphQL
 * selections of an item's values (each of epicflow's fields by name), the read the epic
 * view does of the board along with its own (`boardSelection`, `boardRead`), and the
 * values it answers. `ProjectBoard` (board.ts) reads and writes with these.
 */
import { EpicflowError } from '../../core/errors.js';
import { BOARD_FIELDS, FIELD_SELECTION, type RawField } from './board-fields.js';
interface ProjectRef {
  readonly ownerType: 'organization' | 'user';
  readonly owner: string;
  readonly number: number;
}

/** `https://github.com/orgs/<org>/projects/<n>` or `…/users/<user>/projects/<n>` (any host). */
export function parseProjectUrl(url: string): ProjectRef {
  const m =
    /^https?:\/\/[^/]+\/(orgs|users)\/([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)\/projects\/(\d+)(?:\/.*)?$/.exec(
      url.trim(),
    );
  if (!m) {
    throw new EpicflowError(
      'config',
      `board.project: expected a project URL like https://github.com/orgs/<org>/projects/<number> ` +
        `or https://github.com/users/<user>/projects/<number>, got ${JSON.stringify(url)}`,
    );
  }
  return {
    ownerType: m[1] === 'orgs' ? 'organization' : 'user',
    owner: m[2] ?? '',
    number: Number(m[3]),
  };
}

export type CurrentValue = string | number;

/** A board and its items' values, read with the epic view (see `boardSelection`). */
export interface BoardRead {
  readonly url: string;
  readonly id: string;
  readonly fields: readonly RawField[];
  readonly itemCount: number;
  /** The contents (sub-issues) with their board items, as `CONTENT_ITEMS` selects them. */
  readonly nodes: readonly RawContent[];
}

/**
 * What the epic view selects to open the board at `url` without a read of its own: the
 * project with its fields (`owner`'s alias) and, under each issue of `contents`, its items
 * with their values. Both cost one request each in GitHub's formula (connections of 100 at most).
 */
export function boardSelection(url: string): { readonly owner: string; readonly items: string } {
  const ref = parseProjectUrl(url);
  return {
    owner: `boardOwner: ${ref.ownerType}(login: ${JSON.stringify(ref.owner)}) {
      projectV2(number: ${ref.number}) {
        id
        fields(first: 100) { nodes { ${FIELD_SELECTION} } }
        items(first: 1) { totalCount }
      }
    }`,
    items: ITEMS_SELECTION,
  };
}

/** The board the epic view read with `boardSelection`; undefined when it found none. */
export function boardRead(
  url: string,
  owner: unknown,
  contents: readonly unknown[],
): BoardRead | undefined {
  const project = (owner as RawProjectOwner | null | undefined)?.projectV2;
  if (!project) return undefined;
  return {
    url,
    id: project.id,
    fields: project.fields.nodes,
    itemCount: project.items.totalCount,
    nodes: contents as RawContent[],
  };
}

interface RawProjectOwner {
  readonly projectV2: {
    readonly id: string;
    readonly fields: { readonly nodes: RawField[] };
    readonly items: { readonly totalCount: number };
  } | null;
}

interface RawValue {
  optionId?: string | null;
  number?: number | null;
  text?: string | null;
  field?: { id?: string };
}

/** An issue or pull request with its board items (on any board) and their values. */
export interface RawContent {
  id: string;
  projectItems?: {
    nodes: ({ id: string; project: { id: string } } & ItemValues)[];
  };
}

/** Node ids per `nodes(ids:)` query (GitHub's limit). */
export const NODES_PER_QUERY = 100;

/**
 * An item's values of epicflow's fields, each by `fieldValueByName` (one object, not a
 * connection): reading the items of 100 issues costs one point instead of fifty (a
 * `fieldValues(first: 50)` connection under each item counts as a request of its own). A
 * field named in another case is not found by name: its cell reads as empty and is
 * written again, which sets the same value.
 */
const ONE_VALUE = `
    ... on ProjectV2ItemFieldSingleSelectValue { optionId field { ... on ProjectV2FieldCommon { id } } }
    ... on ProjectV2ItemFieldNumberValue { number field { ... on ProjectV2FieldCommon { id } } }
    ... on ProjectV2ItemFieldTextValue { text field { ... on ProjectV2FieldCommon { id } } }`;

const valueAlias = (field: string): string => `value${field}`;

export const VALUE_SELECTION = BOARD_FIELDS.map(
  (f) => `${valueAlias(f.name)}: fieldValueByName(name: "${f.name}") { ${ONE_VALUE} }`,
).join('\n');

/** An item's values as `VALUE_SELECTION` reads them, by alias. */
export type ItemValues = Readonly<Record<string, unknown>>;

const ITEMS_SELECTION = `projectItems(first: 50) { nodes { id project { id } ${VALUE_SELECTION} } }`;

/** The board items of `$ids` with their values, as a query selection. */
export const CONTENT_ITEMS = `nodes(ids: $ids) {
  ... on Issue { id ${ITEMS_SELECTION} }
  ... on PullRequest { id ${ITEMS_SELECTION} }
}`;

export function valuesOf(item: ItemValues): Map<string, CurrentValue> {
  const values = new Map<string, CurrentValue>();
  for (const f of BOARD_FIELDS) {
    const v = item[valueAlias(f.name)] as RawValue | null | undefined;
    if (v === null || v === undefined) continue;
    const fieldId = v.field?.id;
    const value = v.optionId ?? v.number ?? v.text;
    if (fieldId && value !== undefined && value !== null) values.set(fieldId, value);
  }
  return values;
}
