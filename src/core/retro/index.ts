/** Retro with approval: the prompt and answer, the proposal and its checkboxes, applying approved fixes. */
export {
  buildRetroPrompt,
  FIX_KINDS,
  readRetroAnswer,
  retroSubjects,
  type FixKind,
  type PlanEdit,
  type RetroAnswer,
  type RetroFix,
  type RetroPromptInput,
  type RetroSubject,
} from './answer.js';
export {
  applyPlanFixes,
  pendingFixes,
  retriedRecord,
  RETRO_RETRY_NOTE,
  type PlanFixResult,
} from './apply.js';
export {
  approvable,
  fencedText,
  newRetroProposal,
  renderRetro,
  retroProposalSchema,
  tickedFixes,
  type FixOutcome,
  type RenderRetroOptions,
  type RetroProposal,
  type RetroSubjectFacts,
} from './proposal.js';
export {
  RETRO_APPLY_WITH_RESUME,
  RETRO_DOC,
  retroDocSchema,
  retroRunning,
  retroRunOf,
  RETRO_RUN_STALE_MS,
  RETRO_RUN_STORY,
  RETRO_TEXTS,
  type RetroDoc,
} from './run.js';
