/**
 * The epic's Projects (v2) board: one item per story sub-issue with the fields
 * Status, Wave, Executor, Tokens and Cost. Reads come first and writes are
 * batched (aliased mutations in one GraphQL document) and skipped when the value
 * is already set, because board writes count toward GitHub's content-creation
 * and secondary rate limits. Its fields are set up in board-fields.ts; the selections
 * it reads the board and its items' values with are in board-read.ts.
 */
import { boardStatusOf, storyStatusOf, type BoardValues } from '../../core/epic/board-values.js';
import { EpicflowError } from '../../core/errors.js';
import type { StoryStatus } from '../../core/model.js';
import { attempt } from './errors.js';
import type { GitHubClient } from './resources/resource.js';
import {
  BOARD_FIELDS,
  PROJECT_PERMISSION,
  FIELD_SELECTION,
  type FieldInfo,
  type RawField,
  fieldInfo,
  missingOptions,
  statusInUse,
  setUpFields,
  checkFields,
} from './board-fields.js';
import {
  CONTENT_ITEMS,
  NODES_PER_QUERY,
  VALUE_SELECTION,
  parseProjectUrl,
  valuesOf,
  type BoardRead,
  type CurrentValue,
  type ItemValues,
  type RawContent,
} from './board-read.js';

/**
 * The cells one write sets on a story's item; omitted cells are left as they are.
 * What a story shows is `BoardValues` (core/epic/board-values.ts): see `cellsOf`.
 */
interface BoardCells {
  readonly status?: StoryStatus;
  readonly wave?: number;
  readonly executor?: string;
  readonly tokens?: number;
  /** US dollars. */
  readonly cost?: number;
}

/** The cells that show a story's values; an empty cell stays empty (no write to clear it again). */
export function cellsOf(v: BoardValues): BoardCells {
  return {
    status: storyStatusOf(v.Status),
    wave: v.Wave,
    tokens: v.Tokens,
    ...(v.Executor === '' ? {} : { executor: v.Executor }),
    ...(v.Cost === null ? {} : { cost: v.Cost }),
  };
}

/** Mutations per GraphQL document: large enough to batch a wave, small enough for the 10 s limit. */
const MUTATIONS_PER_DOCUMENT = 50;

interface OpenOptions {
  /**
   * Issues or pull requests (node ids) whose board items and cell values are read along
   * with the board, in the same request: `ensureItems` and `updateMany` then need no read
   * of their own for them.
   */
  readonly contents?: readonly string[];
  /**
   * The board and the items of `contents` as another read of this decision already
   * answered them (the epic view's `boardSelection`): the board is then opened without a
   * request of its own, unless its fields have to be set up.
   */
  readonly read?: BoardRead;
}

export class ProjectBoard {
  /** Content node id → its item on this board, or null when it has none (as last read). */
  private readonly itemOf = new Map<string, string | null>();
  /** Item id → field id → value, as read or written through this instance. */
  private readonly cellsOf = new Map<string, Map<string, CurrentValue>>();

  private constructor(
    private readonly octokit: GitHubClient,
    readonly url: string,
    readonly projectId: string,
    private readonly fields: ReadonlyMap<string, FieldInfo>,
  ) {}

  /**
   * Resolves the configured board and ensures its five fields (created when missing).
   * An instance remembers the items and values it read or wrote, so it is meant for one
   * decision: values changed meanwhile by others are seen by the next one.
   */
  static async open(
    octokit: GitHubClient,
    url: string,
    options: OpenOptions = {},
  ): Promise<ProjectBoard> {
    const ref = parseProjectUrl(url);
    const hint =
      ref.ownerType === 'user'
        ? ' (a user-owned board needs a token with the "project" scope; GitHub Apps cannot reach it)'
        : '';
    const contents = [...new Set(options.contents ?? [])].slice(0, NODES_PER_QUERY);
    const read = async (): Promise<{
      id: string;
      fields: Map<string, FieldInfo>;
      itemCount: number;
      nodes: readonly (RawContent | null)[];
    }> => {
      const withContents = contents.length > 0;
      const data = await attempt<
        Record<
          string,
          {
            projectV2: {
              id: string;
              fields: { nodes: RawField[] };
              items: { totalCount: number };
            } | null;
          } | null
        > & {
          nodes?: (RawContent | null)[];
        }
      >(`read the project board ${url}${hint}`, PROJECT_PERMISSION, () =>
        octokit.graphql(
          `query EpicflowBoard($login: String!, $number: Int!${withContents ? ', $ids: [ID!]!' : ''}) {
              owner: ${ref.ownerType}(login: $login) {
                projectV2(number: $number) {
                  id
                  fields(first: 100) { nodes { ${FIELD_SELECTION} } }
                  items(first: 1) { totalCount }
                }
              }
              ${withContents ? CONTENT_ITEMS : ''}
            }`,
          { login: ref.owner, number: ref.number, ...(withContents ? { ids: contents } : {}) },
        ),
      );
      const project = data['owner']?.projectV2;
      if (!project) {
        throw new EpicflowError('github', `GitHub: cannot find the project board ${url}${hint}`);
      }
      const fields = new Map<string, FieldInfo>();
      for (const raw of project.fields.nodes) {
        const f = fieldInfo(raw);
        if (f) fields.set(f.name.toLowerCase(), f);
      }
      return {
        id: project.id,
        fields,
        itemCount: project.items.totalCount,
        nodes: data.nodes ?? [],
      };
    };

    const given = options.read?.url === url ? options.read : undefined;
    const first =
      given === undefined
        ? await read()
        : {
            id: given.id,
            fields: new Map(
              given.fields.flatMap((raw) => {
                const f = fieldInfo(raw);
                return f === null ? [] : [[f.name.toLowerCase(), f] as const];
              }),
            ),
            itemCount: given.itemCount,
            nodes: given.nodes,
          };
    const missing = BOARD_FIELDS.filter((f) => !first.fields.has(f.name.toLowerCase()));
    // A new project's own Status (Todo, In Progress, Done) is rewritten to epicflow's options
    // while no item has a Status: the rewrite would clear the values already set.
    const status = first.fields.get('status');
    const rewrite =
      status?.dataType === 'SINGLE_SELECT' &&
      missingOptions(status).length > 0 &&
      (first.itemCount === 0 || !(await statusInUse(octokit, url, first.id, status.name)))
        ? status
        : undefined;
    // A board that cannot be used is left as it is: nothing is created on it.
    checkFields(url, first.fields, { creating: missing, rewriting: rewrite !== undefined });
    if (missing.length > 0 || rewrite) {
      await setUpFields(octokit, url, first.id, missing, rewrite);
    }
    const board = missing.length > 0 || rewrite ? await read() : first;
    checkFields(url, board.fields);
    const opened = new ProjectBoard(octokit, url, board.id, board.fields);
    // What another read answered covers the contents it read; the others are looked up.
    opened.remember(
      board === first && given !== undefined ? given.nodes.map((n) => n.id) : contents,
      board.nodes,
    );
    return opened;
  }

  /** Notes which of `contents` have an item on this board, and the items' values. */
  private remember(contents: readonly string[], nodes: readonly (RawContent | null)[]): void {
    for (const id of contents) this.itemOf.set(id, null);
    for (const node of nodes) {
      const item = node?.projectItems?.nodes.find((i) => i.project.id === this.projectId);
      if (!node || !item) continue;
      this.itemOf.set(node.id, item.id);
      this.cellsOf.set(item.id, valuesOf(item));
    }
  }

  private field(name: string): FieldInfo {
    const f = this.fields.get(name.toLowerCase());
    if (!f) throw new EpicflowError('internal', `board field ${name} was not ensured`);
    return f;
  }

  /** The board item of an issue or pull request (by node id), added when missing. */
  async ensureItem(contentNodeId: string): Promise<string> {
    const ids = await this.ensureItems([contentNodeId]);
    const id = ids.get(contentNodeId);
    if (!id) throw new EpicflowError('internal', `no board item for ${contentNodeId}`);
    return id;
  }

  /**
   * Items of several issues at once: those not read yet are looked up in one query
   * (sub-issues inherit their parent's board) with their values, and one batched
   * mutation adds the ones missing (adding an item that exists returns it).
   */
  async ensureItems(contentNodeIds: readonly string[]): Promise<Map<string, string>> {
    const items = new Map<string, string>();
    if (contentNodeIds.length === 0) return items;
    const unread = [...new Set(contentNodeIds.filter((id) => !this.itemOf.has(id)))];
    for (const chunk of chunks(unread, NODES_PER_QUERY)) {
      const found = await attempt<{ nodes: (RawContent | null)[] }>(
        `read the board items of ${chunk.length} issue(s) on ${this.url}`,
        PROJECT_PERMISSION,
        () =>
          this.octokit.graphql(`query EpicflowItemsOnBoard($ids: [ID!]!) {\n${CONTENT_ITEMS}\n}`, {
            ids: chunk,
          }),
      );
      this.remember(chunk, found.nodes);
    }
    for (const id of contentNodeIds) {
      const item = this.itemOf.get(id);
      if (item) items.set(id, item);
    }
    const missing = [...new Set(contentNodeIds.filter((id) => !items.has(id)))];
    for (const chunk of chunks(missing, MUTATIONS_PER_DOCUMENT)) {
      const vars: Record<string, unknown> = { project: this.projectId };
      const decls = ['$project: ID!'];
      const body = chunk.map((contentId, i) => {
        vars[`c${i}`] = contentId;
        decls.push(`$c${i}: ID!`);
        return `a${i}: addProjectV2ItemById(input: { projectId: $project, contentId: $c${i} }) { item { id } }`;
      });
      const added = await attempt<Record<string, { item: { id: string } }>>(
        `add ${chunk.length} item(s) to the project board ${this.url}`,
        PROJECT_PERMISSION,
        () =>
          this.octokit.graphql(
            `mutation EpicflowAddItems(${decls.join(', ')}) {\n${body.join('\n')}\n}`,
            vars,
          ),
      );
      chunk.forEach((contentId, i) => {
        const id = added[`a${i}`]?.item.id;
        if (!id) return;
        items.set(contentId, id);
        this.itemOf.set(contentId, id);
        // A new item's cells are taken as empty: at worst a value is written again.
        if (!this.cellsOf.has(id)) this.cellsOf.set(id, new Map());
      });
    }
    return items;
  }

  /** Sets one item's fields; see `updateMany`. */
  updateFields(itemId: string, values: BoardCells): Promise<number> {
    return this.updateMany([{ itemId, values }]);
  }

  /**
   * Writes only the values that differ from the items' current ones (read in one query
   * unless already known), as aliased mutations in one document. Returns how many were
   * written.
   */
  async updateMany(
    updates: readonly { readonly itemId: string; readonly values: BoardCells }[],
  ): Promise<number> {
    const wanted: {
      itemId: string;
      fieldId: string;
      value: Record<string, unknown>;
      current: CurrentValue;
    }[] = [];
    for (const { itemId, values } of updates) {
      for (const [field, value] of this.fieldValues(values)) {
        wanted.push({ itemId, fieldId: field.id, ...value });
      }
    }
    if (wanted.length === 0) return 0;
    const unknown = [...new Set(updates.map((u) => u.itemId))].filter(
      (id) => !this.cellsOf.has(id),
    );
    for (const [itemId, values] of await this.currentValues(unknown))
      this.cellsOf.set(itemId, values);
    const changes = wanted.filter((w) => this.cellsOf.get(w.itemId)?.get(w.fieldId) !== w.current);
    for (const chunk of chunks(changes, MUTATIONS_PER_DOCUMENT)) {
      const vars: Record<string, unknown> = { project: this.projectId };
      const decls = ['$project: ID!'];
      const body = chunk.map((c, i) => {
        vars[`i${i}`] = c.itemId;
        vars[`f${i}`] = c.fieldId;
        vars[`v${i}`] = c.value;
        decls.push(`$i${i}: ID!`, `$f${i}: ID!`, `$v${i}: ProjectV2FieldValue!`);
        return (
          `u${i}: updateProjectV2ItemFieldValue(input: { projectId: $project, itemId: $i${i}, ` +
          `fieldId: $f${i}, value: $v${i} }) { projectV2Item { id } }`
        );
      });
      await attempt(
        `update ${chunk.length} field value(s) on the project board ${this.url}`,
        PROJECT_PERMISSION,
        () =>
          this.octokit.graphql(
            `mutation EpicflowUpdateValues(${decls.join(', ')}) {\n${body.join('\n')}\n}`,
            vars,
          ),
      );
      for (const c of chunk) {
        const cells = this.cellsOf.get(c.itemId) ?? new Map<string, CurrentValue>();
        cells.set(c.fieldId, c.current);
        this.cellsOf.set(c.itemId, cells);
      }
    }
    return changes.length;
  }

  /** Field → the GraphQL value to set and its comparable form. */
  private fieldValues(
    values: BoardCells,
  ): [FieldInfo, { value: Record<string, unknown>; current: CurrentValue }][] {
    const out: [FieldInfo, { value: Record<string, unknown>; current: CurrentValue }][] = [];
    if (values.status !== undefined) {
      const status = this.field('Status');
      const optionId = status.options.get(boardStatusOf(values.status));
      if (!optionId) throw new EpicflowError('internal', `no Status option for ${values.status}`);
      out.push([status, { value: { singleSelectOptionId: optionId }, current: optionId }]);
    }
    const num = (name: string, n: number | undefined): void => {
      if (n !== undefined) out.push([this.field(name), { value: { number: n }, current: n }]);
    };
    num('Wave', values.wave);
    if (values.executor !== undefined) {
      out.push([
        this.field('Executor'),
        { value: { text: values.executor }, current: values.executor },
      ]);
    }
    num('Tokens', values.tokens);
    // Cents are what people read; sub-cent changes would only burn write budget.
    num('Cost', values.cost === undefined ? undefined : Math.round(values.cost * 100) / 100);
    return out;
  }

  private async currentValues(
    itemIds: readonly string[],
  ): Promise<Map<string, Map<string, CurrentValue>>> {
    const out = new Map<string, Map<string, CurrentValue>>();
    for (const chunk of chunks(itemIds, 100)) {
      const data = await attempt<{
        nodes: (({ id: string } & ItemValues) | null)[];
      }>(`read field values on the project board ${this.url}`, PROJECT_PERMISSION, () =>
        this.octokit.graphql(
          `query EpicflowFieldValues($ids: [ID!]!) {
              nodes(ids: $ids) {
                ... on ProjectV2Item {
                  id
                  ${VALUE_SELECTION}
                }
              }
            }`,
          { ids: [...chunk] },
        ),
      );
      for (const node of data.nodes) {
        if (node) out.set(node.id, valuesOf(node));
      }
    }
    return out;
  }
}

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}
