/**
 * A credential that expires (a cloud access token, temporary AWS keys) kept fresh for a
 * provider: fetched once, served from memory, refreshed ahead of expiry in the background while
 * the current one still serves, one refresh in flight at a time. A failed refresh keeps the old
 * credential until it expires; only then do requests fail (503, the target cools down and a
 * fallback serves). The library that knows the cloud (google-auth-library, the AWS SDK's
 * credential providers, @azure/identity) does the fetching; this decides when.
 */
import type { IdentityStatus } from '../contract/identity.ts';
import { UpstreamError } from './upstream-error.ts';

/** One fetched credential. `source` names where it came from when only the fetch knows (a chain). */
export interface IssuedCredential<T> {
  value: T;
  /** Ms since the epoch; absent for a credential that does not expire. */
  expiresAt?: number;
  source?: string;
}

export interface RefreshingCredentialOptions<T> {
  /** The provider's name in gateway.yaml, for the error a request gets. */
  provider: string;
  /** Where the credential comes from, until a fetch says otherwise. */
  source: string;
  fetch(signal: AbortSignal): Promise<IssuedCredential<T>>;
  /** Refresh this long before expiry (default 5 min, at most half the credential's lifetime). */
  refreshAheadMs?: number;
  /** After a failed background refresh, try again no sooner than this (default 10 s). */
  retryAfterFailureMs?: number;
  /** One fetch gives up after this long (default 30 s). */
  timeoutMs?: number;
  now?: () => number;
}

export interface RefreshingCredential<T> {
  /** The current credential; waits only when there is none that is still valid. */
  get(): Promise<T>;
  status(): IdentityStatus;
}

interface Held<T> {
  value: T;
  obtainedAt: number;
  expiresAt?: number;
  refreshAt: number;
}

/** Keeps a credential fresh (see the module comment). */
export function refreshingCredential<T>(options: RefreshingCredentialOptions<T>): RefreshingCredential<T> {
  const now = options.now ?? Date.now;
  const ahead = options.refreshAheadMs ?? 5 * 60_000;
  const retryAfterFailure = options.retryAfterFailureMs ?? 10_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  let held: Held<T> | undefined;
  let inFlight: Promise<Held<T>> | undefined;
  let source = options.source;
  let lastError: string | undefined;
  let nextTryAt = 0;
  let refreshes = 0;
  let failures = 0;

  const refresh = (): Promise<Held<T>> => {
    inFlight ??= (async () => {
      try {
        const issued = await options.fetch(AbortSignal.timeout(timeoutMs));
        const obtainedAt = now();
        const lifetime = issued.expiresAt === undefined ? Number.POSITIVE_INFINITY : issued.expiresAt - obtainedAt;
        held = { value: issued.value, obtainedAt, expiresAt: issued.expiresAt, refreshAt: obtainedAt + lifetime - Math.min(ahead, lifetime / 2) };
        if (issued.source) source = issued.source;
        refreshes++;
        lastError = undefined;
        return held;
      } catch (err) {
        failures++;
        lastError = describeFailure(err);
        nextTryAt = now() + retryAfterFailure;
        throw err;
      } finally {
        inFlight = undefined;
      }
    })();
    return inFlight;
  };

  return {
    async get() {
      const at = now();
      if (held && (held.expiresAt === undefined || at < held.expiresAt)) {
        // Still valid: serve it, and refresh behind the request when it is due.
        if (at >= held.refreshAt && !inFlight && at >= nextTryAt) refresh().catch(() => {});
        return held.value;
      }
      try {
        return (await refresh()).value;
      } catch {
        throw UpstreamError.http(options.provider, 503, { message: `the gateway has no valid credentials for this provider (${source}): ${lastError}`, retryable: false });
      }
    },
    status: () => ({ source, expiresAt: held?.expiresAt, obtainedAt: held?.obtainedAt, lastError, refreshes, failures }),
  };
}

/**
 * A failure in words safe to show: the first line, bounded, with anything that looks like a
 * token (a long run of base64/hex/JWT characters) masked, since some token endpoints echo what
 * they were sent.
 */
export function describeFailure(err: unknown): string {
  const text = err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err);
  const line = text.split('\n', 1)[0].replace(/[A-Za-z0-9+/_.=-]{32,}/g, '[redacted]');
  return line.length > 240 ? `${line.slice(0, 239)}…` : line;
}
