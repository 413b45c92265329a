/**
 * One retro attempt in one Actions job (docs/commands.md, `/retro`): the story workflow
 * dispatched with the reserved story `_retro`. As a planning job does, it reads
 * everything from GitHub by id and checks the attempt is the one the retro record names,
 * still active; then one executor with the judge role reads the evidence of the failed
 * and held stories on a read-only worktree of the job checkout, as the job's untrusted
 * user, with no credential in reach. The proposal goes to the retro record
 * (compare-and-swap: a newer attempt wins) and to one comment on the epic issue, a
 * checkbox per fix; the next `/resume` applies the ticked ones (retro.ts).
 */
import { join } from 'node:path';

import { resolveExecutorEnvs } from '../composition/epic.js';
import { RETRO_MARKER } from '../core/epic/markers.js';
import { inlineText } from '../core/report/escape.js';
import {
  renderRetro,
  RETRO_APPLY_WITH_RESUME,
  RETRO_DOC,
  RETRO_TEXTS,
  type RetroDoc,
  type RetroProposal,
} from '../core/retro/index.js';
import { proposeRetro, type RetroOutcome } from '../engine/retro.js';
import { openCheckout, type CheckoutJobInput } from './job-shell.js';
import { prepareRetroJob, type PreparedRetro } from './retro-prepare.js';

/** The job checkout is the default branch; the executor runs as `untrusted`. */
export type RetroJobInput = CheckoutJobInput;

export interface RetroJobResult {
  readonly outcome: RetroOutcome;
  readonly doc: RetroDoc;
  /** A newer attempt took over while this one ran: nothing was written. */
  readonly superseded?: boolean;
}

export async function runRetroJob(
  input: RetroJobInput,
  /** What `prepareRetroJob` read (read now when not given). */
  given?: PreparedRetro,
): Promise<RetroJobResult> {
  const prepared = given ?? (await prepareRetroJob(input));
  const { repo, epic } = input;
  const { config, store, doc, sha, plan, subjects, executor } = prepared;
  const emit = input.onEvent ?? (() => undefined);
  const now = input.now?.() ?? new Date();

  const { git, base, folder, executors } = await openCheckout(input, config, 'retro', emit);
  const outcome = await proposeRetro(
    {
      epic: String(epic),
      plan,
      subjects,
      base,
      executor,
      config,
      env: resolveExecutorEnvs([executor], input.env)[executor.id] ?? {},
      home: join(folder, 'homes', executor.id),
    },
    {
      git,
      executors,
      emit,
    },
  );
  let ended: RetroDoc;
  let proposal: RetroProposal | undefined;
  if (outcome.kind === 'proposed') {
    proposal = {
      version: 1,
      epic: String(epic),
      at: now.toISOString(),
      executor: executor.id,
      subjects: subjects.map((s) => ({
        story: s.story.id,
        state: s.state,
        ...(s.record.reason === undefined ? {} : { reason: s.record.reason }),
        planHash: plan.hashes[s.story.id] ?? '',
      })),
      fixes: outcome.fixes,
      leftOut: outcome.leftOut,
      notes: outcome.notes,
      outcomes: {},
    };
    ended = { ...doc, status: 'proposed', proposal };
  } else {
    ended = { ...doc, status: 'failed', reason: outcome.reason };
  }
  const written = await store.writeJson(RETRO_DOC, ended, sha);
  if (!written.ok) return { outcome, doc, superseded: true };
  if (proposal !== undefined) {
    await repo.ensureComment({
      issueNumber: epic,
      marker: RETRO_MARKER,
      body: renderRetro(proposal, { ticked: new Set(), applyWith: RETRO_APPLY_WITH_RESUME }),
    });
  } else if (outcome.kind === 'failed') {
    await repo.reply(epic, RETRO_TEXTS.failed(doc.attempt, inlineText(outcome.reason)));
  }
  return { outcome, doc: ended };
}
