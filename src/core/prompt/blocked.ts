/**
 * BLOCKED_ON (docs/executors.md): a coder may stop only for work another story owns.
 * epicflow answers the claim from the plan first; the coder gets one pushback,
 * and a repeated claim fails the story as a missing dependency with the plan
 * edit that would fix it.
 */
import type { Plan, Story } from '../model.js';
import { isWithin, normalisePath } from '../paths.js';
import { relationOf } from './relations.js';

type ClaimOwner =
  | { readonly kind: 'self'; readonly path: string }
  | {
      readonly kind: 'dependency' | 'dependent' | 'parallel';
      readonly path: string;
      readonly story: Story;
    }
  | { readonly kind: 'unowned'; readonly path: string };

interface BlockedAnswer {
  /** Each path named in the claim and who owns it in the plan. */
  readonly owners: readonly ClaimOwner[];
  /** The pushback text for the coder. */
  readonly answer: string;
  /** The plan edit that would resolve a real claim, for the report. */
  readonly suggestedEdit: string;
  /**
   * True when the plan alone settles the claim: it names paths and each one is
   * the story's own, a dependency's (merged) or a dependent's (built later).
   * Other claims may go to a verifier.
   */
  readonly decided: boolean;
}

/** Path-like tokens in a claim: they contain a slash or a file extension. */
export function claimPaths(claim: string): string[] {
  const tokens = claim.match(/[\w.@/\\-]+/g) ?? [];
  const paths = tokens
    .map((t) => t.replace(/[.,;:]+$/, ''))
    .filter((t) => t.includes('/') || /\.[A-Za-z0-9]{1,8}$/.test(t))
    .filter((t) => !t.startsWith('/') && !t.startsWith('../'))
    .map((t) => normalisePath(t))
    .filter((t) => t.length > 0);
  return [...new Set(paths)];
}

function ownerOf(plan: Plan, self: Story, path: string): ClaimOwner {
  if (self.owns.some((o) => isWithin(path, o) || isWithin(o, path))) return { kind: 'self', path };
  for (const other of plan.stories) {
    if (other.id === self.id) continue;
    if (other.owns.some((o) => isWithin(path, o) || isWithin(o, path))) {
      return { kind: relationOf(plan, self.id, other.id), path, story: other };
    }
  }
  return { kind: 'unowned', path };
}

function line(owner: ClaimOwner): string {
  switch (owner.kind) {
    case 'self':
      return `${owner.path} is within your own owned paths: building it is your job.`;
    case 'dependency':
      return (
        `${owner.path} belongs to story ${owner.story.id}, already merged before you started: ` +
        `it is in your working tree, read it` +
        (owner.story.provides.length > 0
          ? ` (it provides: ${owner.story.provides.join('; ')}).`
          : '.')
      );
    case 'dependent':
      return `${owner.path} belongs to story ${owner.story.id}, which is built after you: leave it alone.`;
    case 'parallel':
      return `${owner.path} belongs to story ${owner.story.id}, built at the same time by another coder: leave it alone and work within your owned paths.`;
    case 'unowned':
      return `${owner.path} is owned by no story of the plan.`;
  }
}

export function answerBlocked(plan: Plan, story: Story, claim: string): BlockedAnswer {
  const owners = claimPaths(claim).map((p) => ownerOf(plan, story, p));
  const lines = owners.map(line);
  if (lines.length === 0)
    lines.push('The claim names no path that another story of the plan owns.');
  const answer = [
    ...lines,
    'BLOCKED_ON is only for work another story owns and has not built. ' +
      'Continue within your owned paths; tooling, dependencies and missing context are never a reason to stop.',
  ].join('\n');
  const decided =
    owners.length > 0 &&
    owners.every((o) => o.kind === 'self' || o.kind === 'dependency' || o.kind === 'dependent');
  return { owners, answer, suggestedEdit: suggestEdit(story, owners), decided };
}

function suggestEdit(story: Story, owners: readonly ClaimOwner[]): string {
  const parallel = owners.find((o) => o.kind === 'parallel' || o.kind === 'dependent');
  if (parallel !== undefined && 'story' in parallel) {
    return `add "${parallel.story.id}" to dependsOn of "${story.id}" (or move ${parallel.path} into its owns)`;
  }
  const unowned = owners.find((o) => o.kind === 'unowned');
  if (unowned !== undefined) {
    return `add ${unowned.path} to the owns of "${story.id}" or of a story it depends on`;
  }
  return `split the missing work into a story that "${story.id}" depends on`;
}
