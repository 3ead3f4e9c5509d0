/**
 * Tracing setup: whether traces are on, where they go, and the OpenTelemetry SDK pieces that
 * send them (a tracer provider of our own, never the global one, so an embedding application's
 * tracing is untouched). Spans leave in batches from a queue, off the request path; a collector
 * that is down costs a warning at most once a minute, and spans beyond the queue are dropped.
 *
 * On when gateway.yaml has a `tracing:` section (unless `enabled: false`), or when the standard
 * OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT variable is set
 * (OTEL_SDK_DISABLED=true turns it off). Variables follow the OpenTelemetry SDK environment
 * specification; the section's settings win over them.
 */
import type { Tracer } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import { ATTR } from './semconv.ts';
import type { TracingSettings } from './tracing-settings.ts';

export { resolveTracing, type TracingSettings } from './tracing-settings.ts';

export interface GatewayTracing {
  readonly tracer: Tracer;
  readonly settings: TracingSettings;
  /** Sends what is queued and stops (at shutdown). */
  shutdown(): Promise<void>;
}

/** The tracer provider, sampler, batching processor and OTLP/HTTP exporter for these settings. */
export function startTracing(settings: TracingSettings, log: Logger, version: string): GatewayTracing {
  const options = { url: settings.url, headers: settings.headers, timeoutMillis: settings.timeoutMillis };
  const otlp = settings.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufExporter(options);
  const exporter = new WarningExporter(otlp, log, settings.url);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR.serviceName]: settings.serviceName, [ATTR.serviceVersion]: version }),
    // A client's sampled traceparent is always followed; new traces are sampled at the ratio.
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor({ exporter, ...settings.batch })],
  });
  return {
    tracer: provider.getTracer('switchyard', version),
    settings,
    shutdown: () => provider.shutdown(),
  };
}

/** How often a failing collector is reported, at most. */
const WARN_EVERY_MS = 60_000;

/**
 * The OTLP exporter, with failed exports reported to the gateway's log: the first at once, then
 * at most one line a minute counting the failures since the last one. (The SDK would report
 * them to its diagnostic logger, which nobody reads.)
 */
export class WarningExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #log: Logger;
  readonly #url: string;
  #lastWarning = -Infinity;
  #failures = 0;

  constructor(inner: SpanExporter, log: Logger, url: string) {
    this.#inner = inner;
    this.#log = log;
    this.#url = url;
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.#inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.#failed(spans.length, result.error);
      done(result);
    });
  }

  #failed(spans: number, error: Error | undefined): void {
    this.#failures++;
    const now = Date.now();
    if (now - this.#lastWarning < WARN_EVERY_MS) return;
    this.#lastWarning = now;
    this.#log.warn(
      { collector: this.#url, failedExports: this.#failures, droppedSpans: spans, err: error?.message },
      `traces could not be sent to ${this.#url}; spans are dropped until the collector answers`,
    );
    this.#failures = 0;
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}
