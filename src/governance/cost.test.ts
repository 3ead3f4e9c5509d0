import { describe, expect, it } from 'vitest';
import { costOf, reservationCost, tokenUsageOf } from './cost.ts';
import type { Price } from './types.ts';

const gpt4o: Price = { input: 2.5, cachedInput: 1.25, output: 10 };
const sonnet: Price = { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15, longContext: { aboveTokens: 200_000, input: 6, cachedInput: 0.6, cacheWrite: 7.5, output: 22.5 } };

describe('cost', () => {
  it('prices fresh, cached and output tokens, reasoning counted as output', () => {
    const usage = tokenUsageOf({ prompt_tokens: 1_000, completion_tokens: 500, prompt_tokens_details: { cached_tokens: 400 } });
    expect(usage).toEqual({ input: 1_000, cachedInput: 400, cacheWrite: 0, output: 500 });
    // 600 × 2.5 + 400 × 1.25 + 500 × 10, per million
    expect(costOf(gpt4o, usage)).toBe(0.007);
  });

  it('prices cache writes at their own rate, and the whole request at long-context rates past the threshold', () => {
    const usage = tokenUsageOf({ prompt_tokens: 10_000, completion_tokens: 100, prompt_tokens_details: { cached_tokens: 5_000, cache_write_tokens: 2_000 } });
    // 3000 × 3 + 5000 × 0.3 + 2000 × 3.75 + 100 × 15
    expect(costOf(sonnet, usage)).toBe(0.0195);
    expect(costOf(sonnet, { input: 300_000, cachedInput: 0, cacheWrite: 0, output: 1_000 })).toBe(1.8225);
  });

  it('is null, never 0, without a price', () => {
    expect(costOf(undefined, { input: 10, cachedInput: 0, cacheWrite: 0, output: 10 })).toBeNull();
    expect(reservationCost(null, { prompt: 10, maxOutput: 10 })).toBeNull();
    expect(costOf({ input: 0, output: 0 }, { input: 10, cachedInput: 0, cacheWrite: 0, output: 10 })).toBe(0);
  });

  it('reserves the worst case: every prompt token at the dearer of input and cache write, all of max output', () => {
    expect(reservationCost(gpt4o, { prompt: 1_000, maxOutput: 4_096 })).toBe(0.04346);
    expect(reservationCost(sonnet, { prompt: 1_000, maxOutput: 1_000 })).toBe(0.01875);
  });
});
