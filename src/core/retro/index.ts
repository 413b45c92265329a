/** Retro with approval: the prompt and answer, the proposal and its checkboxes, applying approved fixes. */
export {
  buildRetroPrompt,
  readRetroAnswer,
  retroSubjects,
  type RetroFix,
  type RetroSubject,
} from './answer.js';
export { applyPlanFixes, pendingFixes, retriedRecord } from './apply.js';
export {
  approvable,
  newRetroProposal,
  renderRetro,
  retroProposalSchema,
  tickedFixes,
  type FixOutcome,
  type RetroProposal,
} from './proposal.js';
export {
  RETRO_APPLY_WITH_RESUME,
  RETRO_DOC,
  retroDocSchema,
  retroRunning,
  RETRO_RUN_STORY,
  RETRO_TEXTS,
  type RetroDoc,
} from './run.js';
