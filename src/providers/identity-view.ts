/**
 * A provider's IdentityStatus as the operator surfaces show it (/readyz, the console): times as
 * ISO strings, the seconds left, the last failure scrubbed of configured secrets. Never the
 * credential itself: IdentityStatus holds none.
 */
import type { IdentityStatus, ProviderInstance } from '../plugin-api.ts';

export interface IdentityView {
  source: string;
  /** ISO time the credential in use expires; absent when it does not (an API key) or none is held yet. */
  expiresAt?: string;
  /** Whole seconds until then (negative once expired). */
  expiresInS?: number;
  obtainedAt?: string;
  lastError?: string;
  refreshes: number;
  failures: number;
}

/** The instance's identity, or undefined when it reports none (or reading it throws: a surface must not fail for it). */
export function identityOf(instance: ProviderInstance | undefined): IdentityStatus | undefined {
  try {
    return instance?.identity?.();
  } catch {
    return undefined;
  }
}

export function identityView(status: IdentityStatus, redact: (text: string) => string, now = Date.now()): IdentityView {
  return {
    source: status.source,
    ...(status.expiresAt !== undefined && { expiresAt: new Date(status.expiresAt).toISOString(), expiresInS: Math.floor((status.expiresAt - now) / 1000) }),
    ...(status.obtainedAt !== undefined && { obtainedAt: new Date(status.obtainedAt).toISOString() }),
    ...(status.lastError !== undefined && { lastError: redact(status.lastError) }),
    refreshes: status.refreshes,
    failures: status.failures,
  };
}
