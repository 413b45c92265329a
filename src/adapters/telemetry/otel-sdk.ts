/**
 * OpenTelemetry's SDK behind the run's tracing (otel.ts), which imports this module only
 * when a trace endpoint is configured.
 */
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
import type { TraceSpan } from '../../engine/ports.js';
import type { RunTracing } from './otel.js';

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

/** Spans batched and exported over OTLP/HTTP to `url`, as the service `service`. */
export function sdkTracing(where: {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly service: string;
}): RunTracing {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': where.service }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: where.url, headers: where.headers }),
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
