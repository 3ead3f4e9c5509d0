/**
 * One ledger row as GET /admin/v1/requests/{id} answers it: snake case, unix seconds beside
 * the exact epoch ms, USD instead of nano-USD, like the rest of the admin API.
 */
import type { CacheResult, CostNote, LedgerRow } from './record.ts';

export interface RequestReport {
  object: 'gateway.request';
  id: string;
  /** Unix seconds. */
  created_at: number;
  created_at_ms: number;
  key: string | null;
  team: string | null;
  model: string | null;
  provider: string | null;
  target_model: string | null;
  ingress: string;
  operation: string;
  status: number;
  error_code: string | null;
  usage: { input_tokens: number; input_cached_tokens: number; input_cache_write_tokens: number; output_tokens: number; source: 'reported' | 'estimated' } | null;
  cost_usd: number | null;
  /** Why `cost_usd` is null: unpriced (no price for the target), no_usage, refused. */
  cost_unknown_reason: CostNote | null;
  duration_ms: number;
  ttft_ms: number | null;
  attempts: number;
  /** The exact cache's verdict: hit, miss, bypass; null when no cache applied. */
  cache: CacheResult | null;
  /** A hit: what the answer cost when it was made (USD), spend saved; null otherwise or unpriced. */
  saved_usd: number | null;
}

export function requestReport(r: LedgerRow): RequestReport {
  return {
    object: 'gateway.request',
    id: r.id,
    created_at: Math.floor(r.at / 1000),
    created_at_ms: r.at,
    key: r.key,
    team: r.team,
    model: r.model,
    provider: r.provider,
    target_model: r.targetModel,
    ingress: r.ingress,
    operation: r.operation,
    status: r.status,
    error_code: r.errorCode,
    usage: r.usageSource
      ? { input_tokens: r.inputTokens ?? 0, input_cached_tokens: r.cachedTokens ?? 0, input_cache_write_tokens: r.cacheWriteTokens ?? 0, output_tokens: r.outputTokens ?? 0, source: r.usageSource }
      : null,
    cost_usd: r.costNano === null ? null : r.costNano / 1e9,
    cost_unknown_reason: r.costNote,
    duration_ms: r.durationMs,
    ttft_ms: r.ttftMs,
    attempts: r.attempts,
    cache: r.cache,
    saved_usd: r.savedNano === null ? null : r.savedNano / 1e9,
  };
}
