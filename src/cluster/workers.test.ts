import { describe, expect, it } from 'vitest';
import { workerCount } from './workers.ts';

describe('workerCount', () => {
  it('auto is one per available CPU, at least one; a number is itself; absent is one process', () => {
    expect(workerCount('auto', 8)).toBe(8);
    expect(workerCount('auto', 0)).toBe(1);
    expect(workerCount(3, 8)).toBe(3);
    expect(workerCount(undefined, 8)).toBe(1);
  });
});
