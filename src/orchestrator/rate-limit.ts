/**
 * A decision GitHub refused for a rate limit: the epic's status comment says until when
 * epicflow waits (the App decides again by itself then; see src/app/retry.ts). Best
 * effort: the note is a courtesy, a refusal of it is only logged.
 */
import { rateLimitedUntil } from '../adapters/github/index.js';
import { STATUS_MARKER, withoutMarker } from '../core/epic/markers.js';
import { withRateLimitNote } from '../core/epic/rate-limit-note.js';
import { describeError } from '../core/errors.js';
import type { SettledDeps } from './settings.js';

export async function noteRateLimit(deps: SettledDeps, epic: number, e: unknown): Promise<void> {
  const now = deps.now();
  const until = rateLimitedUntil(e, now.getTime());
  if (until === undefined) return;
  try {
    // Only an existing comment is edited: creating one would spend the content-creation
    // limit that may be the one refusing (the label's decision writes it last).
    const existing = await deps.repo.findComment(epic, STATUS_MARKER);
    if (existing === null) return;
    const body = withoutMarker(existing.body, STATUS_MARKER);
    await deps.repo.ensureComment({
      issueNumber: epic,
      marker: STATUS_MARKER,
      body: withRateLimitNote(body, new Date(until), now),
    });
  } catch (failure) {
    deps.log?.warn(
      `epic #${epic}: cannot note the rate limit on the status comment: ${describeError(failure)}`,
    );
  }
}
