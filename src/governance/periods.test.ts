import { describe, expect, it } from 'vitest';
import { DAY_MS, dayId, dayRange, periodEnd, periodId } from './periods.ts';

describe('calendar periods (UTC)', () => {
  const lastMsOfJanuary = Date.UTC(2026, 0, 31, 23, 59, 59, 999);
  const february = Date.UTC(2026, 1, 1);

  it('names days, ISO weeks (from Monday), months and total', () => {
    expect(periodId('daily', lastMsOfJanuary)).toBe('d2026-01-31');
    expect(periodId('daily', february)).toBe('d2026-02-01');
    // Saturday 31 Jan and Sunday 1 Feb are in the week of Monday 26 Jan; Monday 2 Feb starts the next.
    expect(periodId('weekly', lastMsOfJanuary)).toBe('w2026-01-26');
    expect(periodId('weekly', february)).toBe('w2026-01-26');
    expect(periodId('weekly', Date.UTC(2026, 1, 2))).toBe('w2026-02-02');
    expect(periodId('weekly', Date.UTC(2025, 11, 31))).toBe('w2025-12-29');
    expect(periodId('monthly', lastMsOfJanuary)).toBe('m2026-01');
    expect(periodId('monthly', february)).toBe('m2026-02');
    expect(periodId('total', february)).toBe('total');
    expect(periodId('weekly', 0)).toBe('w1969-12-29');
  });

  it('ends each period at the next UTC boundary', () => {
    expect(periodEnd('daily', lastMsOfJanuary)).toBe(february);
    expect(periodEnd('weekly', lastMsOfJanuary)).toBe(Date.UTC(2026, 1, 2));
    expect(periodEnd('monthly', Date.UTC(2024, 1, 10))).toBe(Date.UTC(2024, 2, 1));
    expect(periodEnd('monthly', Date.UTC(2025, 11, 31))).toBe(Date.UTC(2026, 0, 1));
    expect(periodEnd('total', february)).toBeNull();
  });

  it('names each day the same whether asked again or after another day (the last one is remembered)', () => {
    const day = Date.UTC(2026, 2, 14);
    expect(dayId(day + 5)).toBe('2026-03-14');
    expect(dayId(day + DAY_MS - 1)).toBe('2026-03-14');
    expect(dayId(day + DAY_MS)).toBe('2026-03-15');
    expect(dayId(day - 1)).toBe('2026-03-13');
    expect(dayId(day)).toBe('2026-03-14');
    expect(dayId(-1)).toBe('1969-12-31');
    expect(dayId(0)).toBe('1970-01-01');
  });

  it('lists days across a leap day', () => {
    expect(dayId(Date.UTC(2024, 1, 29, 13))).toBe('2024-02-29');
    expect(dayRange('2024-02-28', '2024-03-01')).toEqual(['2024-02-28', '2024-02-29', '2024-03-01']);
    expect(dayRange('2024-03-02', '2024-03-01')).toEqual([]);
  });
});
