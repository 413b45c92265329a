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
  renderRetro,
  RETRO_MARKER,
  retroProposalSchema,
  tickedFixes,
  type FixOutcome,
  type RenderRetroOptions,
  type RetroProposal,
  type RetroSubjectFacts,
} from './proposal.js';
