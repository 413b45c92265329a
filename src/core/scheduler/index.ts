export { remainingChainLengths } from './graph.js';
export { schedule } from './schedule.js';
export type { Hold, SchedulerDecision, SchedulerInput } from './schedule.js';
export { LaunchSummary, nextSummary } from './summary.js';
