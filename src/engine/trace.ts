/**
 * The run's trace, as the engine sees it: spans for the epic, each story and each of
 * its steps (setup, coder turns, gates, judge and verifier calls, the merge), with
 * what people ask of them as attributes. The composition backs it with OpenTelemetry
 * when an exporter endpoint is configured; otherwise nothing is recorded.
 */
import type { TraceSpan } from './ports.js';

export type { TraceAttributes, TraceSpan } from './ports.js';

/** No trace: every span is this one. */
export const NO_TRACE: TraceSpan = {
  child: () => NO_TRACE,
  set: () => undefined,
  end: () => undefined,
};
