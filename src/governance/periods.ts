/**
 * Calendar periods in UTC, as ids that key the spend counters (`d2026-01-31`, `w2026-01-26`
 * for the ISO week starting that Monday, `m2026-01`, `total`) and as their end times.
 * redis-lua.ts computes the same ids inside the admission script; the shared backend suite
 * checks both at the boundaries.
 */
import type { BudgetPeriod } from './types.ts';

export const DAY_MS = 86_400_000;

export const PERIODS: readonly BudgetPeriod[] = ['daily', 'weekly', 'monthly', 'total'];

/** The last day named, [start, start + DAY_MS): every request of a day names the same one. */
let lastDayStart = Number.NaN;
let lastDay = '';

/** `YYYY-MM-DD` of the UTC day containing `ms`. */
export function dayId(ms: number): string {
  // Formatting a date costs thousands of instructions; the ledger and the usage records ask once a request.
  const start = Math.floor(ms / DAY_MS) * DAY_MS;
  if (start !== lastDayStart) {
    lastDay = new Date(start).toISOString().slice(0, 10);
    lastDayStart = start;
  }
  return lastDay;
}

/** Days since the epoch of the Monday starting the ISO week of `ms` (1970-01-01 was a Thursday). */
function mondayOf(ms: number): number {
  const days = Math.floor(ms / DAY_MS);
  return days - ((((days + 3) % 7) + 7) % 7);
}

export function periodId(period: BudgetPeriod, ms: number): string {
  switch (period) {
    case 'daily':
      return `d${dayId(ms)}`;
    case 'weekly':
      return `w${dayId(mondayOf(ms) * DAY_MS)}`;
    case 'monthly':
      return `m${dayId(ms).slice(0, 7)}`;
    case 'total':
      return 'total';
  }
}

/** Epoch ms at which the period containing `ms` ends; null for total. */
export function periodEnd(period: BudgetPeriod, ms: number): number | null {
  switch (period) {
    case 'daily':
      return (Math.floor(ms / DAY_MS) + 1) * DAY_MS;
    case 'weekly':
      return (mondayOf(ms) + 7) * DAY_MS;
    case 'monthly': {
      const d = new Date(ms);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    }
    case 'total':
      return null;
  }
}

/** The `YYYY-MM-DD` ids from `fromDay` to `toDay`, inclusive. */
export function dayRange(fromDay: string, toDay: string): string[] {
  const days: string[] = [];
  const end = Date.parse(`${toDay}T00:00:00Z`);
  for (let t = Date.parse(`${fromDay}T00:00:00Z`); t <= end; t += DAY_MS) days.push(dayId(t));
  return days;
}
