/**
 * What a request cost, from its normalised usage and a price in USD per million tokens. An
 * unknown price gives null, never 0: a budget cannot be kept on a guess.
 */
import type { Price, TokenUsage } from './types.ts';

/** The fields of OpenAI's `usage` object this reads (any object with them will do). */
export interface OpenAIUsageLike {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number; [extra: string]: unknown } | null;
}

/**
 * OpenAI's usage, normalised: prompt_tokens include the cached ones (itemised as cached_tokens)
 * and, for providers that write caches (Anthropic, Bedrock), the written ones
 * (`cache_write_tokens`, a gateway extension); completion_tokens include reasoning tokens.
 */
export function tokenUsageOf(usage: OpenAIUsageLike): TokenUsage {
  const details = usage.prompt_tokens_details ?? {};
  return { input: usage.prompt_tokens, cachedInput: details.cached_tokens ?? 0, cacheWrite: details.cache_write_tokens ?? 0, output: usage.completion_tokens };
}

/** The rates in force: long-context rates apply to the whole request once its prompt passes the threshold. */
function ratesFor(price: Price, promptTokens: number): Required<Omit<Price, 'longContext'>> {
  const tier = price.longContext && promptTokens > price.longContext.aboveTokens ? price.longContext : price;
  return { input: tier.input, output: tier.output, cachedInput: tier.cachedInput ?? tier.input, cacheWrite: tier.cacheWrite ?? tier.input };
}

/** USD, to the nano-dollar; null when the price is unknown. */
export function costOf(price: Price | null | undefined, usage: TokenUsage): number | null {
  if (!price) return null;
  const rates = ratesFor(price, usage.input);
  const fresh = Math.max(0, usage.input - usage.cachedInput - usage.cacheWrite);
  const usd = (fresh * rates.input + usage.cachedInput * rates.cachedInput + usage.cacheWrite * rates.cacheWrite + usage.output * rates.output) / 1e6;
  return Math.round(usd * 1e9) / 1e9;
}

/**
 * The most a request can cost, to reserve against a budget: every prompt token at the dearer of
 * the input and cache-write rates, and all of max output. (The prompt count is an estimate; see
 * tokenEstimate.)
 */
export function reservationCost(price: Price | null | undefined, estimate: { prompt: number; maxOutput: number }): number | null {
  if (!price) return null;
  const rates = ratesFor(price, estimate.prompt);
  const writes = rates.cacheWrite > rates.input;
  return costOf(price, { input: estimate.prompt, cachedInput: 0, cacheWrite: writes ? estimate.prompt : 0, output: estimate.maxOutput });
}
