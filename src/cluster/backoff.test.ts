import { describe, expect, it } from 'vitest';
import { Backoff } from './backoff.ts';

describe('Backoff', () => {
  it('doubles while deaths follow each other, caps, and starts over after a quiet spell', () => {
    const backoff = new Backoff({ firstMs: 100, maxMs: 1_000, forgetAfterMs: 60_000 });
    const delays = [0, 1_000, 2_000, 3_000, 4_000, 5_000].map((t) => backoff.next(t));
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(backoff.next(5_000 + 60_001)).toBe(100);
    expect(backoff.next(5_000 + 60_002)).toBe(200);
  });
});
