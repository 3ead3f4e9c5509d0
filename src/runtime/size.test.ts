import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { inFlightBodyLimitOf } from './size.ts';

describe('inFlightBodyLimitOf', () => {
  it('reads sizes, and sizes auto from the heap limit but never below one whole body', () => {
    expect(inFlightBodyLimitOf('64mb', 10 * 1024 ** 2)).toBe(64 * 1024 ** 2);
    expect(inFlightBodyLimitOf(5000, 1024)).toBe(5000);
    expect(inFlightBodyLimitOf('auto', 1024)).toBe(Math.floor(getHeapStatistics().heap_size_limit / 16));
    const huge = getHeapStatistics().heap_size_limit;
    expect(inFlightBodyLimitOf(' auto ', huge)).toBe(huge);
  });
});
