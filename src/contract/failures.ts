/** How a provider describes its own failure, and the refusal categories `fallbacks:` use. Part of the plugin contract (a leaf: wire types and the error catalogue only). */

/** Refusals another model may not have, for `fallbacks:`. */
export type FailureCategory = 'context_window' | 'content_policy';

/** What a provider's native error body says, in its own words. */
export interface UpstreamFailure {
  message: string;
  /** The provider's own error code or type, if it has one (kept in the client message). */
  code?: string | null;
  /** The request field the provider blames, when it says. */
  param?: string | null;
  /** Override the status-based retry decision (e.g. a 400 that is really "overloaded"). */
  retryable?: boolean;
  /** Client-visible status override for odd providers (e.g. auth failure reported as 400). */
  status?: number;
  /** What kind of refusal this is, for `fallbacks:` (guessed from the message when unset). */
  category?: FailureCategory;
  /** A wait the provider asked for in its body (used when no Retry-After header came). */
  retryAfterMs?: number;
}
