/**
 * The gateway's instruments, made once from the first config and kept for the gateway's life
 * (across reloads): Prometheus metrics (`metrics:`, on by default) and OpenTelemetry traces
 * (`tracing:` or OTEL_EXPORTER_OTLP_*). Each is a GatewayObserver; the gateway adds them to
 * the observers it was given.
 */
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/types.ts';
import type { StateBackend } from '../governance/index.ts';
import type { Clock } from '../plugin-api.ts';
import type { GatewayObserver } from '../pipeline/observer.ts';
import { GatewayMetrics, type MetricsSource } from './metrics.ts';
import type { GatewayTracing } from './tracing.ts';
import { resolveTracing } from './tracing-settings.ts';

export { GatewayMetrics } from './metrics.ts';
export { addTimingHeaders, overheadMs, roundMs } from './timing.ts';

export interface InstrumentsDeps {
  env: NodeJS.ProcessEnv;
  log: Logger;
  clock: Clock;
  /** The generation serving now; undefined until the gateway has started. */
  runtime: MetricsSource['runtime'];
  /** The limits/budgets/spend backend, for the budget and backend-health gauges. */
  state?(): StateBackend | undefined;
}

export interface Instruments {
  readonly observers: readonly GatewayObserver[];
  /** Undefined when `metrics.enabled: false`. */
  readonly metrics: GatewayMetrics | undefined;
  readonly tracing: GatewayTracing | undefined;
  /** A reload was tried: counted by result. */
  reloaded(ok: boolean): void;
  /** Sends the spans still queued; at shutdown. */
  close(): Promise<void>;
}

export async function createInstruments(config: GatewayConfig | undefined, deps: InstrumentsDeps): Promise<Instruments> {
  const observers: GatewayObserver[] = [];
  const metrics = config?.metrics.enabled ? new GatewayMetrics({ runtime: deps.runtime, state: deps.state, clock: deps.clock }) : undefined;
  if (metrics) observers.push(metrics);
  const settings = config ? resolveTracing(config.tracing, deps.env, (msg) => deps.log.warn(msg)) : undefined;
  // The OpenTelemetry SDK is loaded only when tracing is on.
  const tracing = settings ? (await import('./tracing.ts')).startTracing(settings, deps.log, packageVersion()) : undefined;
  if (tracing) {
    const { TracingObserver } = await import('./trace-observer.ts');
    observers.push(new TracingObserver(tracing.tracer, { captureContent: tracing.settings.captureContent }));
    deps.log.info(
      { collector: settings!.url, protocol: settings!.protocol, sampleRatio: settings!.sampleRatio, captureContent: settings!.captureContent, from: settings!.source },
      `tracing on: spans go to ${settings!.url}`,
    );
  }
  return {
    observers,
    metrics,
    tracing,
    reloaded: (ok) => metrics?.countReload(ok),
    close: async () => {
      await tracing?.shutdown().catch((err: unknown) => deps.log.warn({ err }, 'tracing shutdown failed'));
    },
  };
}

function packageVersion(): string {
  try {
    return JSON.parse(readFileSync(new URL(import.meta.resolve('switchyard-gateway/package.json')), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}
