/** Pure renderers of the epic report: markdown, Mermaid, board and report.json. */
export type { ReportInput, ReportLinks, ReportPlanning, ReportStory } from './types.js';
export { GITHUB_BODY_MAX, renderReport } from './markdown.js';
export { escapeMermaidLabel, MERMAID_LABEL_MAX, renderMermaid } from './mermaid.js';
export { buildBoardJson, renderBoard } from './board.js';
export type { ReportJson } from './json.js';
export { buildReportJson } from './json.js';
export { countStatuses, summarizeUsage } from './summary.js';
export { formatDuration, formatTokens, formatUsd } from './format.js';
export type { EpicListEntry } from './epic-list.js';
export { epicListEntry, renderEpicList } from './epic-list.js';
