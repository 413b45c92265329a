/** Pure renderers of the epic report: markdown, Mermaid, board and report.json. */
export type {
  ReportInput,
  ReportLanding,
  ReportLinks,
  ReportOptions,
  ReportPlanning,
  ReportStory,
} from './types.js';
export { GITHUB_BODY_MAX, renderReport } from './markdown.js';
export {
  escapeMermaidLabel,
  MERMAID_LABEL_MAX,
  MERMAID_MAX_EDGES,
  MERMAID_MAX_TEXT,
  renderMermaid,
} from './mermaid.js';
export { renderBoard } from './board.js';
export type { ReportJson, ReportJsonStory, ReportJsonUsage, ReportStoryStatus } from './json.js';
export { buildReportJson, INTERRUPTED_REASON, NOT_STARTED_REASON } from './json.js';
export type {
  ExecutorSummary,
  FinishedStory,
  StatusCounts,
  UsageFigure,
  UsageSummary,
} from './summary.js';
export { countStatuses, summarizeExecutors, summarizeUsage } from './summary.js';
export { formatDuration, formatTokens, formatUsd } from './format.js';
