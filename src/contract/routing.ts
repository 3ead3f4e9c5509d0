/** Routing as stages and providers see it: keys, target health, targets and model routes. Part of the plugin contract (a leaf: wire types and the error catalogue only). */
import type { Price, RetryPolicy, Strategy, Timeouts } from './policies.ts';
import type { FailureCategory } from './failures.ts';
import type { ProviderCapabilities, ProviderInstance } from './providers.ts';

export interface KeyIdentity {
  name: string;
  /** The key's team in gateway.yaml, if any. */
  team?: string;
  /** Epoch ms after which the key is refused (`expiresAt`). */
  expiresAt?: number;
  /** Set when the secret presented is a previous one (`previous:`, a rotation): epoch ms from which it is refused as rotated. */
  retiresAt?: number;
  /** May this key use the model alias? */
  allows(model: string): boolean;
  /** `strict: true` in gateway.yaml: a field the gateway would drop is refused (400) instead. */
  strict?: boolean;
}

/** Whether a target may take a request now: `probe` is the single trial after a cooldown. */
export type Admission = 'yes' | 'probe' | 'no';

/** Live state of one alias target, shared by the requests of a config generation. */
export interface TargetHealth {
  /** Requests in flight on the target (least-busy). */
  inFlight: number;
  /** Moving average of time to first token, in ms (least-latency); undefined until measured. */
  readonly latencyMs: number | undefined;
  admit(now: number): Admission;
  /** Milliseconds until the target may take traffic again (0 when it may now). */
  coolingFor(now: number): number;
  recordSuccess(latencyMs?: number): void;
  /** A failure that says the target is unhealthy (not a client mistake). */
  recordFailure(now: number, retryAfterMs?: number): void;
  /** The probe was abandoned without a verdict: let another request probe. */
  releaseProbe(): void;
}

export interface RouteTarget {
  /** Provider name in gateway.yaml. */
  provider: string;
  model: string;
  /** Set when the provider cannot serve (e.g. its API key is not configured); for the log and /readyz. */
  unavailable?: string;
  /** Alias setting, else the provider's: drop unsupported parameters rather than reject them. */
  dropUnsupportedParams: boolean;
  readonly instance: ProviderInstance;
  /** The provider plugin's declaration (empty when it declares nothing). */
  readonly capabilities: ProviderCapabilities;
  /** Relative share of traffic under the `weighted` strategy. */
  weight: number;
  /** USD per million tokens, when configured: the log line then carries the cost. */
  price?: Price;
  retry: RetryPolicy;
  timeouts: Timeouts;
  /** Shared live state: in-flight count, latency average, cooldown breaker. */
  readonly state: TargetHealth;
}

export interface ModelRoute {
  name: string;
  strategy: Strategy;
  /** The alias-level retry policy (targets may override it). */
  retry: RetryPolicy;
  targets: readonly RouteTarget[];
  /** Other aliases tried when the upstream refuses for a reason another model may not have. */
  fallbacks: Partial<Record<FailureCategory, readonly string[]>>;
  /** `strict: true` in gateway.yaml: a field the gateway would drop is refused (400) instead. */
  strict?: boolean;
}
