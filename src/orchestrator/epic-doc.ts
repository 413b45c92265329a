/**
 * Writing the epic document (`epics/<n>/epic.json` on the state branch): a decision's
 * patch (core/epic/epic-doc.ts) in one compare-and-swap write against the document
 * the decision read.
 */
import type { GitHubStateStore } from '../adapters/github/index.js';
import { patchedEpicDoc, type EpicDoc, type EpicDocPatch } from '../core/epic/epic-doc.js';

export const EPIC_DOC = 'epic';

/**
 * Writes the patch in one compare-and-swap write against the document as the decision
 * read it (`known`; sha null: none yet), writing nothing when nothing changes. When
 * another decision wrote it meanwhile, the patch is applied again to what it wrote
 * (read, patch, write, retried) — all but the owner claim: a document written meanwhile
 * leaves the claim to the next decision, which sees who wrote it.
 */
export async function updateEpicDoc(
  store: GitHubStateStore,
  known: { readonly value: EpicDoc; readonly sha: string | null },
  patch: EpicDocPatch,
): Promise<void> {
  const value = patchedEpicDoc(known.value, patch);
  if (JSON.stringify(value) === JSON.stringify(known.value)) return;
  const written = await store.writeJson(EPIC_DOC, value, known.sha);
  if (written.ok) return;
  const { claim: _c, ...rest } = patch;
  if (Object.keys(rest).length === 0) return;
  await store.updateJson<EpicDoc>(EPIC_DOC, (current) => patchedEpicDoc(current ?? {}, rest));
}
