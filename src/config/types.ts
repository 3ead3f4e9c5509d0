/** gateway.yaml after schema validation and defaults (see schemas/gateway.schema.json). */
import type { Price, RetryOn } from '../plugin-api.ts';

export type { Price };

export interface RetryConfig {
  attempts?: number;
  backoff?: { initialMs?: number; maxMs?: number; multiplier?: number };
  retryOn?: RetryOn[];
  maxRetryAfterMs?: number;
  budgetMs?: number;
}

export interface TimeoutConfig {
  connectMs?: number;
  firstByteMs?: number;
  idleMs?: number;
  totalMs?: number;
}

export interface TargetConfig {
  provider: string;
  model: string;
  weight: number;
  price?: Price;
  retry?: RetryConfig;
  timeout?: TimeoutConfig;
}

export interface ModelConfig {
  description?: string;
  dropUnsupportedParams?: boolean;
  strategy: 'fallback' | 'weighted' | 'least-latency' | 'least-busy';
  retry?: RetryConfig;
  timeout?: TimeoutConfig;
  cooldown?: { failures: number; windowMs: number; durationMs: number };
  fallbacks?: { contextWindow?: string[]; contentPolicy?: string[] };
  targets: TargetConfig[];
}

export interface KeyConfig {
  name: string;
  key?: string;
  keyHash?: string;
  models: string[];
}

export interface ProviderConfig {
  plugin: string;
  dropUnsupportedParams?: boolean;
  [option: string]: unknown;
}

export type StageRef = string | { stage: string; options?: Record<string, unknown> };

export interface GatewayConfig {
  server: {
    host: string;
    port: number;
    bodyLimit: string | number;
    upstreamBodyLimit: string | number;
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    shutdownGraceMs: number;
  };
  log: { level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'; format: 'auto' | 'json' | 'pretty' };
  keys: KeyConfig[];
  providers: Record<string, ProviderConfig>;
  models: Record<string, ModelConfig>;
  pipeline: StageRef[];
}
