/**
 * The epic document (`epics/<n>/epic.json` on the state branch): the epic's owner,
 * the plan a user with write permission approved, and a persisted halt. What one
 * decision changes of it is one patch: `reconcile`'s `approve-plan`, `set-halt` and
 * `clear-halt` actions and the owner the first decision claims; the orchestrator
 * writes the patch in one compare-and-swap write (orchestrator/epic-doc.ts).
 */
import type { Halt } from '../model.js';
import type { ReviewDoc } from './review.js';
import type { Action } from './types.js';

/** The persisted epic document. */
export interface EpicDoc {
  readonly halt?: Halt;
  /** `planDigest` of the plan a user with write permission last approved (docs/security.md). */
  readonly approvedPlan?: string;
  /**
   * Story id → entry hash of that plan, written with `approvedPlan` (documents written
   * before have only `approvedPlan`): what changed since is shown while the plan is held.
   */
  readonly approvedStories?: Readonly<Record<string, string>>;
  /**
   * The login that opened the epic (made its first decision): its sub-issues and sticky
   * comments are the epic's, whoever decides later (story jobs may act as another login).
   */
  readonly owner?: string;
  /** The review rounds on the epic's pull request (core/epic/review.ts). */
  readonly review?: ReviewDoc;
  /**
   * The epic's pull request was merged (docs/landing.md): the epic is delivered, and
   * no decision starts, opens or dispatches anything for it again.
   */
  readonly landed?: { readonly pr: number; readonly mergeCommit: string; readonly at: string };
}

/** What one decision changes of the epic document. */
export interface EpicDocPatch {
  /** This login becomes the owner, unless one is recorded (see `ownerClaim`). */
  readonly claim?: string;
  /** The approved plan's digest and its stories' entry hashes. */
  readonly approval?: {
    readonly plan: string;
    readonly stories?: Readonly<Record<string, string>>;
  };
  /** A halt to persist (`/cancel`), or null to forget the persisted one (`/resume`). */
  readonly halt?: Halt | null;
  /** The review part, replaced whole. */
  readonly review?: ReviewDoc;
}

/**
 * The patch of a decision: its epic-document actions and the owner it claims;
 * undefined when it changes nothing of the document.
 */
export function epicDocPatch(
  actions: readonly Action[],
  input: {
    readonly claim?: string | undefined;
    /** The decided plan's entry hashes, recorded with its approval. */
    readonly planHashes?: Readonly<Record<string, string>> | undefined;
  },
): EpicDocPatch | undefined {
  let patch: EpicDocPatch = input.claim === undefined ? {} : { claim: input.claim };
  for (const a of actions) {
    if (a.kind === 'approve-plan') {
      patch = {
        ...patch,
        approval: {
          plan: a.plan,
          ...(input.planHashes === undefined ? {} : { stories: { ...input.planHashes } }),
        },
      };
    } else if (a.kind === 'set-halt') patch = { ...patch, halt: a.halt };
    else if (a.kind === 'clear-halt') patch = { ...patch, halt: null };
    else if (a.kind === 'set-review') patch = { ...patch, review: a.review };
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}

/** The document with the patch applied (pure). */
export function patchedEpicDoc(doc: EpicDoc, patch: EpicDocPatch): EpicDoc {
  let next: EpicDoc = doc;
  if (patch.claim !== undefined && next.owner === undefined) next = { ...next, owner: patch.claim };
  // An approval of the plan already approved changes nothing.
  if (patch.approval !== undefined && next.approvedPlan !== patch.approval.plan) {
    next = {
      ...next,
      approvedPlan: patch.approval.plan,
      ...(patch.approval.stories === undefined ? {} : { approvedStories: patch.approval.stories }),
    };
  }
  if (patch.halt === null) {
    const { halt: _h, ...rest } = next;
    next = rest;
  } else if (patch.halt !== undefined) next = { ...next, halt: patch.halt };
  if (patch.review !== undefined) next = { ...next, review: patch.review };
  return next;
}
