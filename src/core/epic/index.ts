/** The App's and the orchestrating Action's pure core: commands, senders, markers, texts and the reconcile decision. */
export type { BoardValues } from './board-values.js';
export { BOARD_STATUSES, boardValues } from './board-values.js';
export type { Command } from './commands.js';
export { helpText, parseCommand, validateCommand } from './commands.js';
export { fitInert, renderReportComment, renderStatusComment, sameButForTime } from './comments.js';
export {
  failureMarker,
  hasMarker,
  markerComment,
  REPORT_MARKER,
  STATUS_MARKER,
  storyMarker,
  withMarker,
} from './markers.js';
export type { Action, BodyPlanEdit, ReconcileInput, SubIssueRef, Trigger } from './types.js';
export { reconcile } from './reconcile.js';
export { parseRunTitle, RUN_NAME_TEMPLATE, runTitle } from './run-title.js';
export type { JobFacts, JobRef, LandJobRef, PlanJobRef, StoryJobRef } from './job-ref.js';
export {
  failIfOwned,
  freshRecord,
  jobId,
  jobInputs,
  jobRef,
  jobStaleness,
  jobTitle,
  ownsRecord,
  parseJobTitle,
} from './job-ref.js';
export { neutralizeMentions, oneLineText, quoteForPrompt, sanitizeIssueText } from './sanitize.js';
export type { Permission, SenderDecision } from './sender.js';
export { decideSender, isBot } from './sender.js';
export {
  echoBlock,
  renderFailureComment,
  renderPullRequest,
  renderSubIssue,
  renderViolationsComment,
} from './texts.js';
export {
  approvesPlan,
  PLAN_APPROVAL_MISSING_MESSAGE,
  PLAN_UNAPPROVED_MESSAGE,
  planApproval,
  planDigest,
} from './approval.js';
export type { DispatchedRun, OverdueDispatch } from './dispatch-check.js';
export { DISPATCH_GRACE_MINUTES, overdueDispatches, strandedReason } from './dispatch-check.js';
export type { RunOrigin, StoryRunSource } from './run-origin.js';
export { checkStoryRun } from './run-origin.js';
export * from './report-rows.js';
export * from './rules.js';
export * from './local.js';
export * from './push.js';
export type { CheckContext, PullChecks } from './pr-checks.js';
export { checksText, rollUpChecks } from './pr-checks.js';
