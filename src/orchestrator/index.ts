/**
 * The GitHub side's use case, as the entries (the App, the Action) call it: an event
 * in (`toEpicEvent` maps a webhook), reconcile actions applied on GitHub. The story
 * job (story-job.ts) is imported from its own module by the Action.
 */
export { handleEpicEvent } from './intake.js';
export { toEpicEvent } from './webhook.js';
export { type EpicEvent } from './types.js';
