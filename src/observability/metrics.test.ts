import { expect, it } from 'vitest';
import type { AttemptRecord } from '../plugin-api.ts';
import { attemptOutcome } from './label-sets.ts';

const r = (provider: string, outcome: AttemptRecord['outcome']): AttemptRecord => ({ provider, model: 'm', status: outcome === 'ok' ? 200 : 0, outcome, durationMs: 1 });

it('an attempt failed over when the next one made went to another target, was retried when to the same', () => {
  const records = [r('a', 'error'), r('a', 'error'), r('b', 'skipped'), r('c', 'error'), r('d', 'ok')];
  expect(records.map((_, i) => attemptOutcome(records, i))).toEqual(['retried', 'failed_over', 'skipped', 'failed_over', 'succeeded']);
  const lost = [r('a', 'error'), r('b', 'skipped')];
  expect(lost.map((_, i) => attemptOutcome(lost, i))).toEqual(['failed', 'skipped']);
});
