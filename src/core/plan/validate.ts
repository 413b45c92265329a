import type { Plan, Story } from '../model.js';
import { isProtectedPath, normalisePath, overlaps, unsafePathReason } from '../paths.js';
import { describeIssue } from './describe.js';
import { storyHash } from './hash.js';
import { STORY_FIELDS, StoryEntry, StoryEntryShape } from './schema.js';
import type { StoryField } from './schema.js';
import {
  ID_PATTERN,
  MAX_ID_LENGTH,
  MAX_STORIES,
  type PlanOptions,
  type PlanResult,
  type StoryResult,
  type Violation,
  type ViolationCode,
} from './types.js';
import { computeWaves } from './waves.js';

/** Finds the markdown line of story `index` (and one of its fields), when known. */
export type Locate = (index: number, field?: string) => number | undefined;

interface ValidateOptions extends PlanOptions {
  readonly locate?: Locate;
}

/**
 * What one entry yields for the checks across stories, even when the entry has
 * schema errors: every field that is individually valid is kept, so an error in
 * one field does not hide an overlap or a cycle that can still be seen.
 */
interface Draft {
  readonly index: number;
  readonly subject: string;
  readonly id?: string;
  /** Normalised and safe paths only. */
  readonly owns: readonly string[];
  readonly dependsOn: readonly string[];
  /** Set when the entry has no violation of its own. */
  readonly story?: Story;
}

type Report = (
  code: ViolationCode,
  message: string,
  at?: { story?: string; field?: string; index?: number },
) => void;

/**
 * Past this many violations of one code, the rest are summed up in one line.
 * Every violation of a real plan is listed; the limit keeps a pathological input
 * (thousands of stories owning `.`) from producing millions of lines.
 */
export const MAX_REPORTS_PER_CODE = 500;

/** Where checks put what they find. */
interface Sink {
  readonly report: Report;
  /** Violations reported so far, listed or not. */
  readonly count: () => number;
  /** True once a code went past the limit: its check may stop looking. */
  readonly full: (code: ViolationCode) => boolean;
  /** The listed violations, plus one "more not listed" line per code past the limit. */
  readonly finish: () => Violation[];
}

function sink(locate: Locate | undefined): Sink {
  const violations: Violation[] = [];
  const perCode = new Map<ViolationCode, number>();
  let total = 0;
  const report: Report = (code, message, at = {}) => {
    total += 1;
    const n = (perCode.get(code) ?? 0) + 1;
    perCode.set(code, n);
    if (n > MAX_REPORTS_PER_CODE) return;
    const line = at.index === undefined ? undefined : locate?.(at.index, at.field);
    violations.push({
      code,
      message,
      ...(at.story === undefined ? {} : { story: at.story }),
      ...(at.field === undefined ? {} : { field: at.field }),
      ...(line === undefined ? {} : { line }),
    });
  };
  const full = (code: ViolationCode): boolean => (perCode.get(code) ?? 0) > MAX_REPORTS_PER_CODE;
  const finish = (): Violation[] => {
    const more = [...perCode.keys()]
      .filter(full)
      .map((code): Violation => ({ code, message: `more ${code} violations not listed` }));
    return [...violations, ...more];
  };
  return { report, count: () => total, full, finish };
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

const quote = (s: string): string => JSON.stringify(s);

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/**
 * The strings of a list field, skipping items of the wrong type (the schema
 * reports those), so one bad item does not hide the paths or ids next to it.
 */
function stringsOf(entry: Record<string, unknown>, field: StoryField): string[] | undefined {
  const value = entry[field];
  if (!Array.isArray(value)) return undefined;
  return value.filter((v): v is string => typeof v === 'string');
}

/** The field's value when it alone passes the schema, else undefined. */
function validField<F extends StoryField>(
  entry: Record<string, unknown>,
  field: F,
): StoryEntry[F] | undefined {
  if (!Object.hasOwn(entry, field)) return undefined;
  const r = StoryEntryShape[field].safeParse(entry[field]);
  return r.success ? (r.data as StoryEntry[F]) : undefined;
}

/** Checks one story entry on its own: schema, id, paths, self-dependency, owns vs reads. */
function checkEntry(raw: unknown, index: number, options: PlanOptions, sink: Sink): Draft {
  const { report } = sink;
  const position = `#${index + 1}`;
  if (!isMapping(raw)) {
    const subject = `story ${position}`;
    report('schema', `${subject}: expected a mapping of story fields, got ${kindOf(raw)}`, {
      story: position,
      index,
    });
    return { index, subject, owns: [], dependsOn: [] };
  }
  const rawId = raw['id'];
  const named = typeof rawId === 'string' && rawId.trim().length > 0;
  const storyRef = named ? rawId : position;
  const subject = named ? `story ${quote(rawId)}` : `story ${position}`;
  const at = (field?: string) => ({ story: storyRef, index, ...(field ? { field } : {}) });
  const before = sink.count();

  const parsed = StoryEntry.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      for (const { field, text } of describeIssue(issue, raw, STORY_FIELDS)) {
        report('schema', `${subject}: ${text}`, at(field));
      }
    }
  }

  const id = validField(raw, 'id');
  if (id !== undefined) {
    if (!ID_PATTERN.test(id)) {
      report(
        'invalid-id',
        `${subject}: id must be kebab-case (lowercase letters, digits and "-", starting with a letter or digit)`,
        at('id'),
      );
    } else if (/^land-[0-9]+$/.test(id)) {
      report(
        'invalid-id',
        `${subject}: id "${id}" is reserved: land-<n> names epicflow's landing jobs`,
        at('id'),
      );
    } else if (id.length > MAX_ID_LENGTH) {
      report(
        'invalid-id',
        `${subject}: id is ${id.length} characters long; at most ${MAX_ID_LENGTH} are allowed`,
        at('id'),
      );
    }
  }

  const owns = checkPaths(stringsOf(raw, 'owns'), 'owns', subject, report, at);
  const reads = checkPaths(stringsOf(raw, 'reads'), 'reads', subject, report, at);
  if (validField(raw, 'owns')?.length === 0) {
    report(
      'empty-owns',
      `${subject}: "owns" is empty; a story must own at least one path`,
      at('owns'),
    );
  }
  if (!options.allowWorkflowChanges) {
    for (const p of owns) {
      if (isProtectedPath(p, options.configPaths)) {
        report(
          'protected-path',
          `${subject}: owns ${quote(p)}, a protected path (files under .github/ and the epicflow config change only with allowWorkflowChanges: true)`,
          at('owns'),
        );
      }
    }
  }
  for (const o of owns) {
    for (const r of reads) {
      if (overlaps(o, r)) {
        report(
          'owns-reads-overlap',
          `${subject}: owns ${quote(o)} and reads ${quote(r)}, which overlap (a path is either owned or read)`,
          at('reads'),
        );
      }
    }
  }
  const dependsOn = unique(stringsOf(raw, 'dependsOn') ?? []);
  if (id !== undefined && dependsOn.includes(id)) {
    report('self-dependency', `${subject}: dependsOn names the story itself`, at('dependsOn'));
  }

  const draft = { index, subject, ...(named ? { id: rawId } : {}), owns, dependsOn };
  if (sink.count() > before || !parsed.success) return draft;
  const e = parsed.data;
  const story: Story = {
    id: e.id,
    title: e.title.trim(),
    description: e.description.trim(),
    owns,
    reads,
    dependsOn,
    provides: e.provides ?? [],
    acceptance: e.acceptance ?? [],
    ...(e.executor === undefined ? {} : { executor: e.executor.trim() }),
    testsChange: e.testsChange ?? false,
    ...(readFirstOf(e.readFirst).length === 0 ? {} : { readFirst: readFirstOf(e.readFirst) }),
    ...(e.tasks === undefined ? {} : { tasks: e.tasks }),
  };
  return { ...draft, story };
}

/** Normalises paths, reports unsafe ones, returns the safe ones without repeats. */
function checkPaths(
  paths: readonly string[] | undefined,
  field: 'owns' | 'reads',
  subject: string,
  report: Report,
  at: (field?: string) => { story: string; index: number; field?: string },
): string[] {
  const safe: string[] = [];
  for (const raw of paths ?? []) {
    const p = normalisePath(raw);
    const reason = unsafePathReason(p);
    if (reason === undefined) safe.push(p);
    else report('unsafe-path', `${subject}: ${field} path ${quote(raw)} ${reason}`, at(field));
  }
  return unique(safe);
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return `a ${typeof v}`;
}

/**
 * Validates story entries (raw values as parsed from YAML, or `Story` values) with
 * every rule of the plan format (docs/plan-format.md) in one pass, and builds the plan when there is no
 * violation. Shared by `parsePlan` and the sub-issue path (`assemblePlan`).
 */
export function validateStories(
  raw: readonly unknown[],
  options: ValidateOptions = {},
): PlanResult {
  const out = sink(options.locate);
  const { report } = out;
  if (raw.length > MAX_STORIES) {
    report(
      'too-many-stories',
      `the plan has ${raw.length} stories; at most ${MAX_STORIES} are allowed (GitHub allows ${MAX_STORIES} sub-issues per epic)`,
    );
  }
  const drafts = raw.map((entry, index) => checkEntry(entry, index, options, out));
  checkDuplicates(drafts, report);
  checkDependencies(drafts, report);
  checkOwnsOverlap(drafts, out);

  if (out.count() > 0) return { ok: false, violations: out.finish(), storyCount: raw.length };
  const stories = drafts.flatMap((d) => (d.story ? [d.story] : []));
  return { ok: true, plan: buildPlan(stories), violations: [] };
}

/** Validates one entry alone (a sub-issue's story): no checks across stories. */
export function validateStory(raw: unknown, options: ValidateOptions = {}): StoryResult {
  const out = sink(options.locate);
  const draft = checkEntry(raw, 0, options, out);
  if (out.count() > 0 || !draft.story) return { ok: false, violations: out.finish() };
  return { ok: true, story: draft.story, violations: [] };
}

export function buildPlan(stories: readonly Story[]): Plan {
  const hashes: Record<string, string> = {};
  for (const s of stories) hashes[s.id] = storyHash(s);
  return { stories, waves: computeWaves(stories), hashes };
}

function checkDuplicates(drafts: readonly Draft[], report: Report): void {
  const byId = new Map<string, Draft[]>();
  for (const d of drafts) {
    if (d.id === undefined) continue;
    pushTo(byId, d.id, d);
  }
  for (const [id, same] of byId) {
    if (same.length < 2) continue;
    const positions = same.map((d) => `#${d.index + 1}`).join(', ');
    report(
      'duplicate-id',
      `story ${quote(id)}: id is used by ${same.length} stories (${positions})`,
      {
        story: id,
        field: 'id',
        index: same[1]?.index ?? 0,
      },
    );
  }
}

function checkDependencies(drafts: readonly Draft[], report: Report): void {
  const graph = new Map<string, string[]>();
  for (const d of drafts) {
    if (d.id !== undefined && !graph.has(d.id)) graph.set(d.id, []);
  }
  for (const d of drafts) {
    for (const dep of d.dependsOn) {
      if (dep === d.id) continue;
      if (!graph.has(dep)) {
        report('unknown-dependency', `${d.subject}: dependsOn ${quote(dep)} names no story`, {
          story: d.id ?? `#${d.index + 1}`,
          field: 'dependsOn',
          index: d.index,
        });
      } else if (d.id !== undefined) {
        graph.get(d.id)?.push(dep);
      }
    }
  }
  for (const cycle of findCycles(graph)) {
    const first = cycle[0] ?? '';
    report('cycle', `${cycle.join(' -> ')} -> ${first}`, {
      story: first,
      field: 'dependsOn',
      index: drafts.find((d) => d.id === first)?.index ?? 0,
    });
  }
}

/**
 * One cycle per back edge of a depth-first walk in plan order, each reported
 * once and started at its member that comes first in the plan. Iterative, so a
 * long dependency chain cannot overflow the stack.
 */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const order = new Map([...graph.keys()].map((id, i) => [id, i]));
  const state = new Map<string, 'open' | 'done'>();
  const seen = new Set<string>();
  const cycles: string[][] = [];
  for (const root of graph.keys()) {
    if (state.has(root)) continue;
    const path: string[] = [root];
    const next: number[] = [0];
    state.set(root, 'open');
    while (path.length > 0) {
      const node = path[path.length - 1] ?? '';
      const edges = graph.get(node) ?? [];
      const i = next[next.length - 1] ?? 0;
      if (i >= edges.length) {
        state.set(node, 'done');
        path.pop();
        next.pop();
        continue;
      }
      next[next.length - 1] = i + 1;
      const dep = edges[i] ?? '';
      if (state.get(dep) === 'open') {
        const cycle = path.slice(path.indexOf(dep));
        const start = cycle.reduce(
          (best, id, k) => ((order.get(id) ?? 0) < (order.get(cycle[best] ?? '') ?? 0) ? k : best),
          0,
        );
        const rotated = [...cycle.slice(start), ...cycle.slice(0, start)];
        const key = rotated.join('\u0000');
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push(rotated);
        }
      } else if (!state.has(dep)) {
        state.set(dep, 'open');
        path.push(dep);
        next.push(0);
      }
    }
  }
  return cycles;
}

/**
 * Reports every pair of stories owning overlapping prefixes. Instead of comparing
 * all pairs, each owned path looks up the owners of its ancestors (and itself),
 * which finds exactly the overlapping pairs: a strict ancestor pair is found once,
 * from the deeper path; an equal pair from both stories, so only one side reports.
 */
function checkOwnsOverlap(drafts: readonly Draft[], sink: Sink): void {
  const owners = new Map<string, Draft[]>();
  for (const d of drafts) {
    for (const p of d.owns) pushTo(owners, p, d);
  }
  const pair = (a: Draft, pa: string, b: Draft, pb: string): void => {
    const what =
      pa === pb ? `both own ${quote(pa)}` : `own overlapping paths ${quote(pa)} and ${quote(pb)}`;
    sink.report('owns-overlap', `stories ${nameOf(a)} and ${nameOf(b)} ${what}`, {
      story: a.id ?? `#${a.index + 1}`,
      field: 'owns',
      index: b.index,
    });
  };
  for (const d of drafts) {
    for (const p of d.owns) {
      for (const ancestor of ancestorsOf(p)) {
        for (const other of owners.get(ancestor) ?? []) {
          if (other.index === d.index || (ancestor === p && other.index < d.index)) continue;
          // Name the pair in plan order, whichever side found it.
          if (other.index < d.index) pair(other, ancestor, d, p);
          else pair(d, p, other, ancestor);
          if (sink.full('owns-overlap')) return;
        }
      }
    }
  }
}

/** `a/b/c` → `a/b/c`, `a/b`, `a`, `.`; and `.` → `.`. */
function ancestorsOf(p: string): string[] {
  if (p === '.') return ['.'];
  const parts = p.split('/');
  const result = parts.map((_, i) => parts.slice(0, parts.length - i).join('/'));
  result.push('.');
  return result;
}

/** `"api"`, or `#3` for an entry without a usable id. */
function nameOf(d: Draft): string {
  return d.id === undefined ? `#${d.index + 1}` : quote(d.id);
}

/** `readFirst` as written, blanks left out: unsafe anchors are pruned when the story runs. */
function readFirstOf(anchors: readonly string[] | undefined): string[] {
  return (anchors ?? []).map((a) => a.trim()).filter((a) => a !== '');
}
