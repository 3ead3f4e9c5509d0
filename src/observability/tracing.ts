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
import { ExportResultCode, parseKeyPairsIntoRecord, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import type { TracingConfig } from '../config/types.ts';
import { ATTR } from './semconv.ts';

export interface TracingSettings {
  /** The full URL spans are posted to (…/v1/traces). */
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  headers: Record<string, string>;
  serviceName: string;
  sampleRatio: number;
  captureContent: boolean;
  /** One export's time limit, retries included (OTEL_EXPORTER_OTLP_TIMEOUT; the exporter's default 10 s). */
  timeoutMillis?: number;
  /** Batching (OTEL_BSP_*): export delay, queue and batch sizes, export timeout. */
  batch: { scheduledDelayMillis?: number; maxQueueSize?: number; maxExportBatchSize?: number; exportTimeoutMillis?: number };
  /** Why the settings are what they are, for the start-up log line. */
  source: 'gateway.yaml' | 'environment';
}

/** The OTLP/HTTP default when neither gateway.yaml nor the environment names a collector. */
const DEFAULT_ENDPOINT = 'http://localhost:4318';
const TRACES_PATH = 'v1/traces';

/** Tracing settings from the `tracing:` section and the environment; undefined when tracing is off. */
export function resolveTracing(section: TracingConfig | undefined, env: NodeJS.ProcessEnv, warn: (msg: string) => void = () => {}): TracingSettings | undefined {
  const value = (name: string) => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  if (value('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const envEndpoint = value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? value('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (section ? section.enabled === false : envEndpoint === undefined) return undefined;

  let url: string;
  if (section?.endpoint) url = joinPath(section.endpoint, TRACES_PATH);
  else if (value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')) url = value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')!;
  else url = joinPath(value('OTEL_EXPORTER_OTLP_ENDPOINT') ?? DEFAULT_ENDPOINT, TRACES_PATH);

  let protocol = section?.protocol;
  if (!protocol) {
    const asked = value('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? value('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
    if (asked === 'http/json' || asked === 'http/protobuf') protocol = asked;
    else {
      warn(`tracing: OTLP protocol "${asked}" is not supported, using http/protobuf (OTLP over HTTP only)`);
      protocol = 'http/protobuf';
    }
  }
  const headers = {
    ...parseKeyPairsIntoRecord(value('OTEL_EXPORTER_OTLP_HEADERS')),
    ...parseKeyPairsIntoRecord(value('OTEL_EXPORTER_OTLP_TRACES_HEADERS')),
    ...section?.headers,
  };
  // The section's default service name gives way to OTEL_SERVICE_NAME; one set in the file wins.
  const configured = section?.serviceName && section.serviceName !== 'switchyard' ? section.serviceName : undefined;
  return {
    url,
    protocol,
    headers,
    serviceName: configured ?? value('OTEL_SERVICE_NAME') ?? 'switchyard',
    sampleRatio: section?.sampleRatio ?? 1,
    captureContent: section?.captureContent ?? false,
    timeoutMillis: positiveInt(value('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ?? value('OTEL_EXPORTER_OTLP_TIMEOUT')),
    batch: {
      scheduledDelayMillis: positiveInt(value('OTEL_BSP_SCHEDULE_DELAY')),
      maxQueueSize: positiveInt(value('OTEL_BSP_MAX_QUEUE_SIZE')),
      maxExportBatchSize: positiveInt(value('OTEL_BSP_MAX_EXPORT_BATCH_SIZE')),
      exportTimeoutMillis: positiveInt(value('OTEL_BSP_EXPORT_TIMEOUT')),
    },
    source: section ? 'gateway.yaml' : 'environment',
  };
}

function joinPath(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path}`;
}

function positiveInt(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

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
