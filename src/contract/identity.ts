/**
 * What a provider says about the identity it calls its upstream with (an API key, a cloud token
 * it refreshes): for /readyz, the console, metrics and `switchyard validate --strict`. Never a
 * secret: the source names where the credential came from, not what it is.
 */
export interface IdentityStatus {
  /**
   * Where the credential came from, as a short stable name: `api-key`, `service-account`,
   * `metadata-server`, `external-account`, `aws:environment`, `aws:web-identity`, `aws:assume-role`,
   * `azure:client-secret`, `azure:managed-identity`...
   */
  readonly source: string;
  /** When the credential in use expires (ms since the epoch); absent for credentials that do not. */
  readonly expiresAt?: number;
  /** When the credential in use was obtained (ms since the epoch). */
  readonly obtainedAt?: number;
  /** Why the last refresh failed, in words without a secret; cleared by the next success. */
  readonly lastError?: string;
  /** Successful refreshes since the provider was created (the first fetch counts). */
  readonly refreshes: number;
  /** Failed refreshes since the provider was created. */
  readonly failures: number;
}
