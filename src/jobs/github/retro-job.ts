/**
 * One retro attempt in two Actions jobs of one run (docs/commands.md, `/retro`): the story
 * workflow dispatched with the reserved story `_retro`. As a planning job does, each reads
 * everything from GitHub by id and checks the attempt is the one the retro record names,
 * still active (retro-prepare.ts). In the work job, whose token can only read, one executor
 * with the judge role reads the evidence of the failed and held stories on a read-only
 * worktree of the job checkout, as the job's untrusted user, with no credential in reach;
 * its proposal is handed over. The publish job writes it to the retro record
 * (compare-and-swap: a newer attempt wins) and to one comment on the epic issue, a
 * checkbox per fix; the next `/resume` applies the ticked ones (retro.ts).
 */
import { join } from 'node:path';

import { resolveExecutorEnvs } from '../../composition/epic.js';
import { RETRO_MARKER } from '../../core/epic/markers.js';
import { inlineText } from '../../core/report/escape.js';
import {
  renderRetro,
  RETRO_APPLY_WITH_RESUME,
  RETRO_DOC,
  RETRO_TEXTS,
  type RetroDoc,
  type RetroProposal,
} from '../../core/retro/index.js';
import { HANDOVER_VERSION, type RetroHandover } from '../../core/publish/handover.js';
import { proposeRetro } from '../../engine/retro.js';
import { docFile, saving, type Saving } from './job-record.js';
import { openCheckout, type CheckoutJobInput } from './job-shell.js';
import type { PreparedRetro } from './retro-prepare.js';

/** The job checkout is the default branch; the executor runs as `untrusted`. */
export type RetroJobInput = CheckoutJobInput;

export interface RetroJobResult {
  readonly handover: RetroHandover;
  readonly doc: RetroDoc;
}

/**
 * The work job's part (a token that can only read): the executor reads the evidence on a
 * read-only worktree of the checkout; what it proposes is handed over for the publish job.
 */
export async function proposeRetroJob(
  input: RetroJobInput,
  prepared: PreparedRetro,
): Promise<RetroHandover> {
  const { epic } = input;
  const { config, plan, subjects, executor } = prepared;
  const emit = input.onEvent ?? (() => undefined);
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
    { git, executors, emit, signal: input.interrupt },
  );
  const costs = {
    version: HANDOVER_VERSION,
    job: 'retro',
    epic: String(epic),
    attempt: input.attempt,
    usage: outcome.usage,
    notes: outcome.notes,
  } as const;
  return outcome.kind === 'proposed'
    ? {
        ...costs,
        outcome: {
          kind: 'proposed',
          rounds: outcome.rounds,
          fixes: outcome.fixes,
          leftOut: outcome.leftOut,
        },
      }
    : { ...costs, outcome: { kind: 'failed', reason: outcome.reason } };
}

/**
 * The publish job's part (the write credential, nothing of the repository's run): the
 * hand-over's fixes, checked against their schema when it was read (handover.ts), become
 * the proposal on the retro record, for the shell to save (only the attempt the record still
 * names writes it), and once it is, its one comment, rendered here.
 */
export function publishRetroJob(
  input: Pick<RetroJobInput, 'repo' | 'epic' | 'now'>,
  prepared: PreparedRetro,
  handover: RetroHandover,
): Saving<RetroJobResult> {
  const { repo, epic } = input;
  const { store, doc, sha, plan, subjects, executor } = prepared;
  const now = input.now?.() ?? new Date();
  const { outcome } = handover;
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
      fixes: [...outcome.fixes],
      leftOut: [...outcome.leftOut],
      notes: [...handover.notes],
      outcomes: {},
    };
    ended = { ...doc, status: 'proposed', proposal };
  } else {
    ended = { ...doc, status: 'failed', reason: outcome.reason };
  }
  return saving(
    { file: docFile<RetroDoc>(store, RETRO_DOC), sha, value: ended, change: () => ended },
    async () => {
      if (proposal !== undefined) {
        await repo.ensureComment({
          issueNumber: epic,
          marker: RETRO_MARKER,
          body: renderRetro(proposal, { ticked: new Set(), applyWith: RETRO_APPLY_WITH_RESUME }),
        });
      } else if (outcome.kind === 'failed') {
        await repo.reply(epic, RETRO_TEXTS.failed(doc.attempt, inlineText(outcome.reason)));
      }
      return { handover, doc: ended };
    },
    { handover, doc },
  );
}
