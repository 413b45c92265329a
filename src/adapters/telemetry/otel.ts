/**
 * The run's trace exported with OpenTelemetry's own SDK and OTLP/HTTP exporter, when
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set (headers
 * from `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME` for the service). One trace
 * per epic run; spans are batched and flushed when the run ends. On GitHub, where each
 * story is a job of its own, every job's spans go into the epic's one trace
 * (`epicTraceParent`).
 *
 * The SDK (`otel-sdk.ts`) is imported only when an endpoint is set: most runs export no
 * trace, and each Action process would otherwise load and evaluate it at its start. In the
 * Action's single-file bundle, esbuild keeps it inlined but lazily evaluated (the dynamic
 * import becomes a call of its module's initialiser).
 */
import { createHash } from 'node:crypto';
import type { TraceAttributes, TraceSpan } from '../../engine/ports.js';

/** A span of another process this run's root span belongs under. */
interface TraceParent {
  /** 32 hex digits. */
  readonly traceId: string;
  /** 16 hex digits. */
  readonly spanId: string;
}

/**
 * The trace of an epic on GitHub, the same in every job of it: its id and its root's
 * are derived from the repository and the epic number, so the story jobs' spans meet in
 * one trace without any job passing ids to another. (No job exports the root span itself.)
 */
export function epicTraceParent(repository: string, epic: string | number): TraceParent {
  const digest = createHash('sha256').update(`epicflow trace ${repository}#${epic}`).digest('hex');
  return { traceId: digest.slice(0, 32), spanId: digest.slice(32, 48) };
}

export interface RunTracing {
  /** The run's root span (inside `parent`'s trace, when given). */
  root(name: string, attributes?: TraceAttributes, parent?: TraceParent): TraceSpan;
  /** Sends what is left; the run waits for it (bounded by the exporter's timeout). */
  shutdown(): Promise<void>;
}

/** `k1=v1,k2=v2` (values URL-encoded), as the OTLP exporter variables are written. */
function headersOf(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

/** Where spans go, from the standard variables; undefined when none is set. */
function tracesUrl(env: NodeJS.ProcessEnv): string | undefined {
  const traces = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']?.trim();
  if (traces) return traces;
  const base = env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim();
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}

/** The run's tracing, or undefined when no endpoint is configured (the SDK is not loaded then). */
export async function otelTracing(env: NodeJS.ProcessEnv): Promise<RunTracing | undefined> {
  const url = tracesUrl(env);
  if (url === undefined) return undefined;
  const { sdkTracing } = await import('./otel-sdk.js');
  return sdkTracing({
    url,
    headers: headersOf(
      env['OTEL_EXPORTER_OTLP_TRACES_HEADERS'] ?? env['OTEL_EXPORTER_OTLP_HEADERS'],
    ),
    service: env['OTEL_SERVICE_NAME']?.trim() || 'epicflow',
  });
}
