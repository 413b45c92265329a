import { LineCounter, parseDocument } from 'yaml';
import type { Document } from 'yaml';
import type { Story } from '../model.js';
import { describeIssue } from './describe.js';
import { extractPlanBlocks } from './extract.js';
import type { PlanBlock } from './extract.js';
import { PlanDocument } from './schema.js';
import type { PlanOptions, PlanResult, StoryResult, Violation } from './types.js';
import { validateStories, validateStory } from './validate.js';
import type { Locate } from './validate.js';

/**
 * Reading a plan from markdown (docs/plan-format.md): find the one ` ```epicflow ` block,
 * parse its YAML, then hand the entries to the shared validation.
 */

/** Keeps `a: &x [*x, *x, ...]`-style alias bombs from blowing up memory. */
const MAX_ALIAS_COUNT = 100;

type Loaded =
  | { readonly ok: true; readonly value: unknown; readonly locate: LocatePath }
  | { readonly ok: false; readonly violations: Violation[] };

/** The markdown line of the node at a YAML path, when it exists. */
type LocatePath = (path: readonly (string | number)[]) => number | undefined;

function findBlock(markdown: string): { block: PlanBlock } | { violations: Violation[] } {
  const blocks = extractPlanBlocks(markdown);
  const [block] = blocks;
  if (block === undefined) {
    return {
      violations: [
        {
          code: 'no-plan-block',
          message:
            'no ```epicflow block found: put the plan in a fenced code block whose info string is epicflow',
        },
      ],
    };
  }
  if (blocks.length > 1) {
    const lines = blocks.map((b) => b.line - 1).join(', ');
    return {
      violations: [
        {
          code: 'multiple-plan-blocks',
          message: `found ${blocks.length} \`\`\`epicflow blocks (opening on lines ${lines}); a plan has exactly one`,
          line: blocks[1]?.line ?? block.line,
        },
      ],
    };
  }
  return { block };
}

/** Parses a block's YAML; errors become `yaml` violations with markdown line numbers. */
function loadYaml(block: PlanBlock): Loaded {
  const lineCounter = new LineCounter();
  const toMarkdownLine = (offset: number): number =>
    block.line + lineCounter.linePos(offset).line - 1;
  let doc: Document;
  try {
    doc = parseDocument(block.content, {
      lineCounter,
      prettyErrors: false,
      uniqueKeys: true,
      // yaml would otherwise print warnings (e.g. collection keys) on the process.
      logLevel: 'error',
    });
  } catch (e) {
    return { ok: false, violations: [yamlViolation(e, block.line)] };
  }
  if (doc.errors.length > 0) {
    return {
      ok: false,
      violations: doc.errors.map((err) => {
        const line = toMarkdownLine(err.pos[0]);
        return { code: 'yaml', message: `line ${line}: ${firstLine(err.message)}`, line };
      }),
    };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    return { ok: false, violations: [yamlViolation(e, block.line)] };
  }
  const locate: LocatePath = (path) => {
    const node: unknown = doc.getIn(path, true);
    const range = (node as { range?: [number, number, number] } | undefined)?.range;
    return range ? toMarkdownLine(range[0]) : undefined;
  };
  return { ok: true, value, locate };
}

function yamlViolation(e: unknown, line: number): Violation {
  const text = e instanceof Error ? e.message : String(e);
  return { code: 'yaml', message: `line ${line}: ${firstLine(text)}`, line };
}

/** yaml's messages may carry a position suffix and a code excerpt; we give the line ourselves. */
function firstLine(message: string): string {
  const [first = ''] = message.split('\n');
  return first.replace(/ at line \d+, column \d+:?$/, '').trim();
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function describeKind(v: unknown): string {
  if (v === null || v === undefined) return 'an empty block';
  if (Array.isArray(v)) return 'a list';
  return `a ${typeof v}`;
}

/** The story entries of a plan block, or why there are none. */
function storiesOf(value: unknown): { stories?: unknown[]; violations: Violation[] } {
  if (!isMapping(value)) {
    return {
      violations: [
        {
          code: 'schema',
          message: `the plan must be a mapping with a "stories" list, got ${describeKind(value)}`,
        },
      ],
    };
  }
  const violations: Violation[] = [];
  const parsed = PlanDocument.safeParse(value);
  for (const issue of parsed.success ? [] : parsed.error.issues) {
    for (const { field, text } of describeIssue(issue, value, ['stories'])) {
      const message =
        issue.code === 'unrecognized_keys'
          ? text.replace(/^unknown field/, 'unknown top-level field')
          : text;
      violations.push({ code: 'schema', message, ...(field === undefined ? {} : { field }) });
    }
  }
  const stories = value['stories'];
  if (!Array.isArray(stories)) return { violations };
  if (stories.length === 0) {
    violations.push({
      code: 'schema',
      message: 'field "stories" is empty: list at least one story',
      field: 'stories',
    });
  }
  return { stories, violations };
}

/**
 * Parses and validates a plan. Never throws: any input, however broken, yields
 * either a plan or the full list of violations.
 */
export function parsePlan(markdown: string, options: PlanOptions = {}): PlanResult {
  const found = findBlock(markdown);
  if ('violations' in found) return { ok: false, violations: found.violations, storyCount: 0 };
  const loaded = loadYaml(found.block);
  if (!loaded.ok) return { ok: false, violations: loaded.violations, storyCount: 0 };

  const top = storiesOf(loaded.value);
  const storyLocate: Locate = (index, field) =>
    (field === undefined ? undefined : loaded.locate(['stories', index, field])) ??
    loaded.locate(['stories', index]);
  const result = validateStories(top.stories ?? [], { ...options, locate: storyLocate });
  if (top.violations.length === 0 && top.stories !== undefined) return result;
  return {
    ok: false,
    violations: [...top.violations, ...result.violations],
    storyCount: top.stories?.length ?? 0,
  };
}

/**
 * Reads a sub-issue's story (docs/plan-format.md, plans from sub-issues): one epicflow
 * block holding a single story mapping; `id` defaults to `defaultId`
 * (e.g. `issue-12`). Checks the entry on its own; `assemblePlan` checks the
 * stories together.
 */
export function parseStoryBlock(
  markdown: string,
  defaultId: string,
  options: PlanOptions = {},
): StoryResult {
  const found = findBlock(markdown);
  if ('violations' in found) return { ok: false, violations: found.violations };
  const loaded = loadYaml(found.block);
  if (!loaded.ok) return loaded;
  const value = loaded.value;
  if (!isMapping(value)) {
    return {
      ok: false,
      violations: [
        {
          code: 'schema',
          message: `the story block must be a mapping of story fields, got ${describeKind(value)}`,
        },
      ],
    };
  }
  const entry = Object.hasOwn(value, 'id') ? value : { id: defaultId, ...value };
  return validateStory(entry, {
    ...options,
    locate: (_, field) =>
      (field === undefined ? undefined : loaded.locate([field])) ?? found.block.line,
  });
}

/**
 * Validates a plan made of separately read stories (sub-issues), in plan order,
 * with extra dependencies (GitHub "blocked by" relations) keyed by story id and
 * added to each story's `dependsOn`. Runs the same checks as `parsePlan`.
 */
export function assemblePlan(
  entries: readonly (Story | Readonly<Record<string, unknown>>)[],
  extraDependsOn: Readonly<Record<string, readonly string[]>> = {},
  options: PlanOptions = {},
): PlanResult {
  const merged = entries.map((entry) => {
    const id = entry['id'];
    const extra = typeof id === 'string' ? extraDependsOn[id] : undefined;
    if (extra === undefined || extra.length === 0) return entry;
    const own: unknown = entry['dependsOn'];
    // A malformed `dependsOn` is left as written so that its schema error shows.
    if (own !== undefined && !Array.isArray(own)) return entry;
    const deps = Array.isArray(own) ? [...(own as unknown[]), ...extra] : extra;
    return { ...entry, dependsOn: [...new Set(deps)] };
  });
  if (merged.length === 0) {
    return {
      ok: false,
      violations: [{ code: 'schema', message: 'the plan has no stories' }],
      storyCount: 0,
    };
  }
  return validateStories(merged, options);
}
