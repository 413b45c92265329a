/** The App's and the orchestrating Action's pure core: commands, senders, markers, texts and the reconcile decision. */
export type { BoardStatus, BoardStoryInput, BoardValues } from './board-values.js';
export { BOARD_STATUSES, boardStatusOf, boardValues, storyStatusOf } from './board-values.js';
export type { Command, CommandCheck, CommandKind } from './commands.js';
export { COMMANDS, helpText, parseCommand, validateCommand } from './commands.js';
export type { ReportCommentInput, StatusCommentInput } from './comments.js';
export {
  fitInert,
  PLAN_CHANGED_NOTE,
  renderReportComment,
  renderStatusComment,
  sameButForTime,
} from './comments.js';
export type { MarkerName } from './markers.js';
export {
  failureMarker,
  hasMarker,
  markerComment,
  REPORT_MARKER,
  STATUS_MARKER,
  storyMarker,
  VIOLATIONS_MARKER,
  withMarker,
} from './markers.js';
export type { Action, BodyPlanEdit, ReconcileInput, SubIssueRef, Trigger } from './types.js';
export { decideStories, reconcile, type StoryDecision } from './reconcile.js';
export { epicIdOf, sameRecord } from './story-state.js';
export type { RunRef } from './run-title.js';
export { parseRunTitle, RUN_NAME_TEMPLATE, runTitle } from './run-title.js';
export type {
  JobFacts,
  JobIds,
  JobRecord,
  JobRef,
  LandJobRef,
  PlanJobRef,
  StoryJobRef,
} from './job-ref.js';
export {
  isLandJob,
  jobId,
  jobInputs,
  jobRef,
  jobStaleness,
  jobTitle,
  ownsRecord,
  parseJobTitle,
  PLANNING_RUN_STORY,
} from './job-ref.js';
export {
  fenceBlock,
  neutralizeMentions,
  oneLineText,
  quoteForPrompt,
  sanitizeIssueText,
} from './sanitize.js';
export type { Permission, SenderDecision, SenderInput } from './sender.js';
export { decideSender, isBot } from './sender.js';
export type { FailureCommentInput, IssueText } from './texts.js';
export {
  echoBlock,
  echoInline,
  renderFailureComment,
  renderPullRequest,
  renderSubIssue,
  renderViolationsComment,
} from './texts.js';
export type { PlanApproval, PlanChanges } from './approval.js';
export {
  approvesPlan,
  describeUnapproved,
  PLAN_APPROVAL_MISSING_MESSAGE,
  PLAN_UNAPPROVED_MESSAGE,
  planApproval,
  planChanges,
  planDigest,
} from './approval.js';
export type { DispatchedRun, OverdueDispatch } from './dispatch-check.js';
export {
  DISPATCH_GRACE_MINUTES,
  endedWithoutOutcome,
  overdueDispatches,
  strandedReason,
} from './dispatch-check.js';
export type { RunCheck, RunOrigin, RunRepository, StoryRunSource } from './run-origin.js';
export { checkStoryRun } from './run-origin.js';
export * from './report-rows.js';
export * from './rules.js';
export * from './local.js';
export * from './push.js';
