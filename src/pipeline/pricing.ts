/**
 * An answer's usage priced onto its exchange, once, whichever way the answer came: the figures
 * the log, the ledger and the governance settle with, and `usage.cost` for the client.
 */
import { costOf, tokenUsageOf } from '../governance/index.ts';
import type { EmbeddingResponse, Usage } from '../openai-types.ts';
import type { RouteTarget } from '../plugin-api.ts';
import type { Exchange } from './exchange.ts';

/** Embeddings usage as chat usage (no output), priced once like chat; `usage.cost` for the client. */
export function priceEmbeddings(x: Exchange, target: RouteTarget, body: EmbeddingResponse): void {
  const prompt = body.usage.prompt_tokens;
  x.usage = { prompt_tokens: prompt, completion_tokens: 0, total_tokens: prompt };
  const cost = costOf(target.price, { input: prompt, cachedInput: 0, cacheWrite: 0, output: 0 });
  x.costUsd = cost;
  if (cost !== null) body.usage.cost = cost;
  x.upstreamModel = body.model;
}

/**
 * The request's usage and its cost, computed once here from the normalised usage whichever way
 * the answer came (a stream costs what the same answer costs unstreamed). The client sees the
 * cost as `usage.cost` (USD; absent when the price is unknown).
 */
export function priceUsage(x: Exchange, target: RouteTarget, usage: Usage): void {
  x.usage = usage;
  const cost = costOf(target.price, tokenUsageOf(usage));
  x.costUsd = cost;
  if (cost !== null) usage.cost = cost;
}
