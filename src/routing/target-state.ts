/**
 * Live state of one alias target, shared by the requests of a config generation: in-flight
 * count (least-busy), a moving average of time to first token (least-latency), and a circuit
 * breaker that takes a failing target out of rotation for a cooldown, then lets one probe
 * request through (half-open) before it gets full traffic again.
 */
import type { Admission, TargetHealth } from '../plugin-api.ts';

export interface CooldownPolicy {
  /** Failures within `windowMs` that open the breaker. */
  failures: number;
  windowMs: number;
  /** How long an open breaker keeps the target out of rotation. */
  durationMs: number;
}

export type { Admission };

/** Weight of the newest sample in the latency moving average. */
const LATENCY_ALPHA = 0.3;

export class TargetState implements TargetHealth {
  inFlight = 0;
  /** Exponential moving average of time to first token, in ms; undefined until measured. */
  latencyMs: number | undefined;
  readonly #cooldown: CooldownPolicy | undefined;
  #failures: number[] = [];
  #openUntil = 0;
  #probing = false;

  constructor(cooldown: CooldownPolicy | undefined) {
    this.#cooldown = cooldown;
  }

  /** May a request use this target now? 'probe' is the single trial request after a cooldown. */
  admit(now: number): Admission {
    if (this.#openUntil === 0) return 'yes';
    if (now < this.#openUntil || this.#probing) return 'no';
    this.#probing = true;
    return 'probe';
  }

  /** Milliseconds until the target may take traffic again (0 when it may now). */
  coolingFor(now: number): number {
    if (this.#openUntil === 0) return 0;
    return Math.max(0, this.#openUntil - now);
  }

  get open(): boolean {
    return this.#openUntil !== 0;
  }

  /** The single trial request after a cooldown is under way. */
  get probing(): boolean {
    return this.#probing;
  }

  recordSuccess(latencyMs?: number): void {
    if (latencyMs !== undefined) this.latencyMs = this.latencyMs === undefined ? latencyMs : this.latencyMs + LATENCY_ALPHA * (latencyMs - this.latencyMs);
    this.#failures = [];
    this.#openUntil = 0;
    this.#probing = false;
  }

  /** A failure that says the target is unhealthy (not a client mistake). */
  recordFailure(now: number, retryAfterMs?: number): void {
    const policy = this.#cooldown;
    if (!policy) return;
    if (this.#probing) {
      this.#probing = false;
      this.#openUntil = now + Math.max(policy.durationMs, retryAfterMs ?? 0);
      return;
    }
    // A rate limit that names its wait is honoured at once for everyone.
    if (retryAfterMs !== undefined && retryAfterMs > 0) {
      this.#openUntil = Math.max(this.#openUntil, now + retryAfterMs);
      return;
    }
    this.#failures = this.#failures.filter((t) => now - t < policy.windowMs);
    this.#failures.push(now);
    if (this.#failures.length >= policy.failures) {
      this.#openUntil = now + policy.durationMs;
      this.#failures = [];
    }
  }

  /** The probe was abandoned without a verdict (e.g. the client left): let another request probe. */
  releaseProbe(): void {
    this.#probing = false;
  }
}
