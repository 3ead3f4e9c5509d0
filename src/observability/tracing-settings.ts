/**
 * Tracing settings from gateway.yaml's `tracing:` section and the OTEL_* environment. Apart from
 * tracing.ts so that a gateway without tracing never loads the OpenTelemetry SDK and exporters
 * (about 6 MB of heap and code): they are imported only once tracing is on.
 */
import type { TracingConfig } from '../config/types.ts';

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
    ...parseKeyPairs(value('OTEL_EXPORTER_OTLP_HEADERS')),
    ...parseKeyPairs(value('OTEL_EXPORTER_OTLP_TRACES_HEADERS')),
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

/** OTEL_EXPORTER_OTLP_HEADERS' format: `key=value` pairs separated by commas, values percent-encoded. */
function parseKeyPairs(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    let value = pair.slice(at + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // A value that is not valid percent-encoding is taken as written.
    }
    if (key) out[key] = value;
  }
  return out;
}
