/**
 * What applying a retro's approved fixes does, decided without I/O: a plan edit or an
 * added acceptance line becomes a new plan document (the story's entry changed in the
 * ` ```epicflow ` block, the rest kept as written, the whole plan validated again); a
 * retry with a note becomes the story's record with the note, which reaches its next
 * coder prompt; `nothing` has no box. Each approved fix gets an outcome once, applied
 * or not (and why), so no fix is ever applied twice.
 */
import { isMap, isSeq, parseDocument, type YAMLMap } from 'yaml';
import type { Plan, StoryRecord } from '../model.js';
import { extractPlanBlocks, parsePlan, type PlanOptions } from '../plan/index.js';
import type { RetroFix } from './answer.js';
import { approvable, type FixOutcome, type RetroProposal } from './proposal.js';

/** The approved fixes not applied yet (ticked, without an outcome), in the proposal's order. */
export function pendingFixes(proposal: RetroProposal, ticked: ReadonlySet<string>): RetroFix[] {
  return approvable(proposal).filter(
    (f) => ticked.has(f.story) && proposal.outcomes[f.story] === undefined,
  );
}

type Edited = { ok: true; markdown: string } | { ok: false; reason: string };

/** The plan block's YAML with one story entry changed by `fix`; the rest as written. */
function editBlock(markdown: string, fix: RetroFix): Edited {
  const blocks = extractPlanBlocks(markdown);
  const block = blocks[0];
  if (block === undefined || blocks.length !== 1) {
    return { ok: false, reason: 'the plan file does not hold exactly one ```epicflow block' };
  }
  const doc = parseDocument(block.content, { logLevel: 'error', uniqueKeys: true });
  if (doc.errors.length > 0) return { ok: false, reason: 'the plan block is not valid YAML' };
  const stories = doc.get('stories');
  if (!isSeq(stories)) return { ok: false, reason: 'the plan block has no `stories` list' };
  const entry = stories.items.find(
    (item): item is YAMLMap => isMap(item) && item.get('id') === fix.story,
  );
  if (entry === undefined) return { ok: false, reason: `story ${fix.story} is not in the plan` };
  if (fix.kind === 'plan-edit') {
    for (const [field, value] of Object.entries(fix.edit)) {
      if (value !== undefined) entry.set(field, doc.createNode(value));
    }
  } else if (fix.kind === 'acceptance') {
    const acceptance = entry.get('acceptance');
    if (isSeq(acceptance)) acceptance.add(doc.createNode(fix.line));
    else entry.set('acceptance', doc.createNode([fix.line]));
  } else {
    return { ok: false, reason: `a ${fix.kind} fix does not edit the plan` };
  }
  const lines = markdown.split(/\r\n|\r|\n/);
  const eol = markdown.includes('\r\n') ? '\r\n' : '\n';
  const start = block.line - 1;
  const count = block.content === '' ? 0 : block.content.split('\n').length;
  const indent = /^( {0,3})/.exec(lines[start - 1] ?? '')?.[1] ?? '';
  const yaml = doc
    .toString({ lineWidth: 0 })
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => (l === '' ? l : `${indent}${l}`));
  lines.splice(start, count, ...yaml);
  return { ok: true, markdown: lines.join(eol) };
}

interface PlanFixResult {
  /** The plan document after the applied edits (unchanged when none applied). */
  readonly markdown: string;
  /** The plan it parses to. */
  readonly plan: Plan;
  /** Story id → outcome, for each plan-editing fix tried. */
  readonly outcomes: ReadonlyMap<string, FixOutcome>;
}

/**
 * Applies the approved plan edits and acceptance lines to the plan document, one by
 * one, each only while the story's entry is still the one the retro read and the
 * story is not done, and only when the whole plan stays valid.
 */
export function applyPlanFixes(input: {
  readonly markdown: string;
  readonly plan: Plan;
  readonly proposal: RetroProposal;
  readonly fixes: readonly RetroFix[];
  readonly records: ReadonlyMap<string, StoryRecord>;
  readonly options: PlanOptions;
  readonly now: string;
}): PlanFixResult {
  let { markdown, plan } = input;
  const outcomes = new Map<string, FixOutcome>();
  const skip = (story: string, reason: string): void => {
    outcomes.set(story, { applied: false, at: input.now, reason });
  };
  for (const fix of input.fixes) {
    if (fix.kind !== 'plan-edit' && fix.kind !== 'acceptance') continue;
    const read = input.proposal.subjects.find((s) => s.story === fix.story)?.planHash;
    if (plan.hashes[fix.story] === undefined) {
      skip(fix.story, `story ${fix.story} is no longer in the plan`);
      continue;
    }
    if (plan.hashes[fix.story] !== read) {
      skip(fix.story, 'its plan entry changed since the retro; run the retro again');
      continue;
    }
    if (input.records.get(fix.story)?.status === 'done') {
      skip(fix.story, `story ${fix.story} is done now`);
      continue;
    }
    const edited = editBlock(markdown, fix);
    if (!edited.ok) {
      skip(fix.story, edited.reason);
      continue;
    }
    const parsed = parsePlan(edited.markdown, input.options);
    if (!parsed.ok) {
      const why = parsed.violations.map((v) => `${v.code}: ${v.message}`).join('; ');
      skip(fix.story, `the edited plan would be invalid (${why})`);
      continue;
    }
    markdown = edited.markdown;
    plan = parsed.plan;
    outcomes.set(fix.story, { applied: true, at: input.now });
  }
  return { markdown, plan, outcomes };
}

/** The note a retro adds to a story's notes when its retry is applied. */
const RETRO_RETRY_NOTE = 'retro: retried with a note for its coder';

/**
 * A story's record after its approved retry: the note kept for its next coder prompts,
 * the story to run again (a failed story reruns; the reason is dropped). Null with a
 * reason when the story is done, or has no record yet.
 */
export function retriedRecord(
  record: StoryRecord | undefined,
  note: string,
): { ok: true; record: StoryRecord } | { ok: false; reason: string } {
  if (record === undefined) return { ok: false, reason: 'the story has no record yet' };
  if (record.status === 'done') return { ok: false, reason: `story ${record.story} is done now` };
  return {
    ok: true,
    record: { ...record, retroNote: note, notes: [...record.notes, RETRO_RETRY_NOTE] },
  };
}
