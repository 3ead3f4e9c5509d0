/**
 * Usage rows (day × key × team × model) as a page of daily buckets, shaped like OpenAI's
 * organization usage API (GET /v1/organization/usage/completions): unix seconds, one bucket per
 * UTC day including empty ones, `group_by` choosing the dimensions that stay apart.
 */
import { DAY_MS, dayId, dayRange } from './periods.ts';
import { fromNano, type UsageRow } from './store.ts';
import type { UsagePage, UsageQuery, UsageResult } from './types.ts';

/** The UTC days a query covers: from startTime's day to the day of the last second before endTime. */
export function daysOf(query: UsageQuery, nowMs: number): { from: string; to: string } {
  const endMs = (query.endTime ?? Math.ceil(nowMs / 1000)) * 1000;
  return { from: dayId(query.startTime * 1000), to: dayId(Math.max(query.startTime * 1000, endMs - 1)) };
}

const matches = (wanted: readonly string[] | undefined, value: string): boolean => !wanted || wanted.includes(value);

const label = (r: UsageResult): string => `${r.key ?? ''}\x1f${r.team ?? ''}\x1f${r.model ?? ''}`;
const byLabels = (x: UsageResult, y: UsageResult): number => (label(x) < label(y) ? -1 : label(x) > label(y) ? 1 : 0);

export function usagePage(rows: readonly UsageRow[], query: UsageQuery, nowMs: number): UsagePage {
  const { from, to } = daysOf(query, nowMs);
  const group = new Set(query.groupBy ?? []);
  const byDay = new Map<string, Map<string, UsageResult & { costNano: number; priced: number; hits: number; savedNano: number }>>();
  // Rows from the request ledger carry the cache's hits; then every result says them.
  const withCache = rows.some((row) => row.cacheHits !== undefined);
  for (const row of rows) {
    if (!matches(query.keys, row.key) || !matches(query.teams, row.team) || !matches(query.models, row.model)) continue;
    const key = group.has('key') ? row.key : null;
    const team = group.has('team') ? row.team || null : null;
    const model = group.has('model') ? row.model : null;
    const id = JSON.stringify([key, team, model]);
    let results = byDay.get(row.day);
    if (!results) byDay.set(row.day, (results = new Map()));
    let r = results.get(id);
    if (!r) {
      r = {
        object: 'gateway.usage.result',
        key,
        team,
        model,
        num_model_requests: 0,
        input_tokens: 0,
        input_cached_tokens: 0,
        input_cache_write_tokens: 0,
        output_tokens: 0,
        amount: null,
        unpriced_requests: 0,
        costNano: 0,
        priced: 0,
        hits: 0,
        savedNano: 0,
      };
      results.set(id, r);
    }
    r.num_model_requests += row.requests;
    r.input_tokens += row.input;
    r.input_cached_tokens += row.cachedInput;
    r.input_cache_write_tokens += row.cacheWrite;
    r.output_tokens += row.output;
    r.costNano += row.costNano;
    r.priced += row.priced;
    r.hits += row.cacheHits ?? 0;
    r.savedNano += row.savedNano ?? 0;
  }
  const data = dayRange(from, to).map((day) => {
    const start = Date.parse(`${day}T00:00:00Z`);
    const results = [...(byDay.get(day)?.values() ?? [])]
      .map(
        ({ costNano, priced, hits, savedNano, ...r }): UsageResult => ({
          ...r,
          // Unknown prices are never 0: the amount covers the priced requests and says how many were not.
          amount: priced > 0 ? { value: fromNano(costNano), currency: 'usd' } : null,
          unpriced_requests: r.num_model_requests - priced,
          ...(withCache ? { cache_hits: hits, saved_amount: savedNano > 0 ? { value: fromNano(savedNano), currency: 'usd' as const } : null } : {}),
        }),
      )
      .sort(byLabels);
    return { object: 'bucket' as const, start_time: start / 1000, end_time: (start + DAY_MS) / 1000, results };
  });
  return { object: 'page', data, has_more: false, next_page: null };
}
