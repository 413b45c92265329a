/**
 * The run's trace exported with OpenTelemetry's own SDK and OTLP/HTTP exporter, when
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set (headers
 * from `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME` for the service). One trace
 * per epic run; spans are batched and flushed when the run ends. On GitHub, where each
 * story is a job of its own, every job's spans go into the epic's one trace
 * (`epicTraceParent`).
 */
import { createHash } from 'node:crypto';
import {
  context,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
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

interface RunTracing {
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

function spanOf(tracer: Tracer, span: Span): TraceSpan {
  let ended = false;
  return {
    child: (name, attributes) =>
      spanOf(
        tracer,
        tracer.startSpan(
          name,
          attributes === undefined ? {} : { attributes },
          trace.setSpan(context.active(), span),
        ),
      ),
    set: (attributes) => {
      if (!ended) span.setAttributes(attributes);
    },
    end: (failure) => {
      if (ended) return;
      ended = true;
      if (failure !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: failure });
      span.end();
    },
  };
}

/** The run's tracing, or undefined when no endpoint is configured. */
export function otelTracing(env: NodeJS.ProcessEnv): RunTracing | undefined {
  const url = tracesUrl(env);
  if (url === undefined) return undefined;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': env['OTEL_SERVICE_NAME']?.trim() || 'epicflow',
    }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({
          url,
          headers: headersOf(
            env['OTEL_EXPORTER_OTLP_TRACES_HEADERS'] ?? env['OTEL_EXPORTER_OTLP_HEADERS'],
          ),
        }),
        // A run's spans are few: an export (with the exporter's retries) waits at most this
        // long, so a collector that is down delays the run's end by that much, never more.
        exportTimeoutMillis: 5000,
      }),
    ],
  });
  const tracer = provider.getTracer('epicflow');
  return {
    root: (name, attributes, parent) =>
      spanOf(
        tracer,
        tracer.startSpan(
          name,
          attributes === undefined ? {} : { attributes },
          parent === undefined
            ? context.active()
            : trace.setSpanContext(context.active(), {
                ...parent,
                traceFlags: TraceFlags.SAMPLED,
                isRemote: true,
              }),
        ),
      ),
    shutdown: () => provider.shutdown(),
  };
}
