/**
 * The split proposals of an epic run on this machine, as epicflow keeps them
 * (`splits.json` in the epic's state folder) and shows them (`splits.md`). A proposal
 * holds the new stories as the planner's YAML; approving it (`epicflow plan approve`)
 * puts them into the plan file. One entry per failed attempt of a story, so the same
 * failure is never proposed twice.
 */
import { z } from 'zod';
import { fenceBlock } from '../epic/sanitize.js';
import { OUTGROWN, type Outgrown } from '../model.js';
import { outgrownText, type SplitRequest } from './split.js';

export const SPLITS_FILE = 'splits.json';
export const SPLITS_TEXT = 'splits.md';

const proposalSchema = z.object({
  story: z.string(),
  attempt: z.number().int().positive(),
  outgrown: z.enum(OUTGROWN as [Outgrown, ...Outgrown[]]),
  /** proposed → approved; `not-proposed`: no split could be drafted (`why` says why). */
  status: z.enum(['proposed', 'approved', 'not-proposed']),
  /** The story's plan entry hash the split was drafted for. */
  storyHash: z.string(),
  at: z.string(),
  /** The new stories (`stories:` YAML, ids as they will be). */
  yaml: z.string().optional(),
  added: z.array(z.string()).optional(),
  why: z.string().optional(),
  approvedAt: z.string().optional(),
});

export type SplitProposal = z.infer<typeof proposalSchema>;

export const splitsDocSchema = z.object({
  version: z.literal(1),
  proposals: z.array(proposalSchema),
});

export type SplitsDoc = z.infer<typeof splitsDocSchema>;

export const EMPTY_SPLITS: SplitsDoc = { version: 1, proposals: [] };

/** A new proposal (or a note that none could be drafted) for `request`. */
export function splitProposal(
  request: SplitRequest,
  storyHash: string,
  at: string,
  drafted:
    | { readonly kind: 'proposed'; readonly yaml: string; readonly added: readonly string[] }
    | { readonly kind: 'not-proposed'; readonly why: string },
): SplitProposal {
  const base = {
    story: request.story,
    attempt: request.attempt,
    outgrown: request.outgrown,
    storyHash,
    at,
  };
  return drafted.kind === 'proposed'
    ? { ...base, status: 'proposed', yaml: drafted.yaml, added: [...drafted.added] }
    : { ...base, status: 'not-proposed', why: drafted.why };
}

/** The proposals waiting for approval, in the order they were made. */
export function pendingSplits(doc: SplitsDoc): SplitProposal[] {
  return doc.proposals.filter((p) => p.status === 'proposed');
}

/** `splits.md`: every proposal, newest first, with what approving it does. */
export function renderSplits(doc: SplitsDoc, approveWith: string): string {
  const lines = ['# Split proposals', ''];
  if (doc.proposals.length === 0) lines.push('None.');
  for (const p of [...doc.proposals].reverse()) {
    const head = `## \`${p.story}\` (attempt ${p.attempt}) · ${p.status}`;
    lines.push(head, '', `It proved too big: ${outgrownText(p.outgrown)}.`, '');
    if (p.status === 'not-proposed') {
      lines.push(`No split was drafted: ${p.why ?? 'no reason recorded'}.`, '');
      continue;
    }
    const added = (p.added ?? []).map((id) => `\`${id}\``).join(', ');
    lines.push(
      p.status === 'approved'
        ? `Approved${p.approvedAt === undefined ? '' : ` at ${p.approvedAt}`}: ${added} replaced it in the plan.`
        : `Proposed: ${added} in its place; the stories that depended on it depend on all of them. Nothing changes until you approve it: ${approveWith}.`,
      '',
      fenceBlock(p.yaml ?? '', 'yaml'),
      '',
    );
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
