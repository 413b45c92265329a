/**
 * A retro on GitHub (`/retro` on the epic issue): its record on the state branch and the
 * texts of its replies. The App records an attempt (compare-and-swap) and dispatches the
 * story workflow with the reserved story id `_retro`; that job runs the model call and
 * records the proposal, shown in one comment on the epic issue with a checkbox per fix.
 * The next `/resume` applies the ticked fixes and marks them in the comment.
 */
import { z } from 'zod';
import { retroProposalSchema, type RetroProposal } from './proposal.js';

/** The story id a retro job is dispatched with (story ids cannot start with `_`). */
export { RETRO_RUN_STORY } from '../epic/job-ref.js';

/** The retro's record: `epics/<n>/retro.json` on the state branch. */
export const RETRO_DOC = 'retro';

/** An active attempt older than this is taken for dead: `/retro` starts another. */
const RETRO_RUN_STALE_MS = 60 * 60 * 1000;

/** How the retro comment says its fixes get applied. */
export const RETRO_APPLY_WITH_RESUME = 'the next `/resume` on this issue';

export interface RetroDoc {
  readonly attempt: number;
  readonly status: 'active' | 'proposed' | 'failed';
  /** Who commented `/retro` (a writer: intake checked). */
  readonly requestedBy: string;
  readonly requestedAt: string;
  /** Why no proposal came (status `failed`). */
  readonly reason?: string | undefined;
  /** The proposal and what became of its approved fixes (status `proposed`). */
  readonly proposal?: RetroProposal | undefined;
}

export const retroDocSchema = z.object({
  attempt: z.number().int().positive(),
  status: z.enum(['active', 'proposed', 'failed']),
  requestedBy: z.string(),
  requestedAt: z.string(),
  reason: z.string().optional(),
  proposal: retroProposalSchema.optional(),
});

/** Whether a recorded attempt still runs (so `/retro` starts no second one). */
export function retroRunning(doc: RetroDoc | undefined, now: string): boolean {
  return (
    doc?.status === 'active' && Date.parse(now) - Date.parse(doc.requestedAt) < RETRO_RUN_STALE_MS
  );
}

export const RETRO_TEXTS = {
  nothing: '`/retro`: no story of this epic failed or is held; there is nothing to look back on.',
  noJudge:
    '`/retro` needs an executor with the `judge` role in the configuration (`roles: [coder, judge]`): the retro runs it read-only.',
  running: (attempt: number): string =>
    `\`/retro\`: a retro is already running for this epic (attempt ${attempt}); its proposal comes as a comment here.`,
  pending: (stories: readonly string[]): string =>
    `\`/retro\`: the retro comment has approved fixes not applied yet (${stories.map((s) => `\`${s}\``).join(', ')}): comment \`/resume\` to apply them, or untick them, before a new retro.`,
  started: (attempt: number, subjects: number): string =>
    `Looking back at ${subjects} failed or held ${subjects === 1 ? 'story' : 'stories'} (retro attempt ${attempt}): one model call reads their evidence and proposes a fix each, as a comment here with a checkbox per fix. Tick the fixes you approve; the next \`/resume\` applies them.`,
  failed: (attempt: number, reason: string): string =>
    `The retro (attempt ${attempt}) found no proposal: ${reason}\n\nComment \`/retro\` to try again.`,
} as const;
