/**
 * `switchyard usage`: the admin API of a running gateway as plain-text tables (usage per UTC
 * day grouped by key, team or model; then each key's or team's limits, what is left now and its
 * budget). It reads the API rather than the state store, so it shows what every instance shares,
 * whichever backend (memory file or Redis) keeps it.
 */
import type { UsagePage, UsageResult } from '../governance/index.ts';
import type { KeyReport, QuotaReport, TeamReport } from './report.ts';

export type UsageGrouping = 'key' | 'team' | 'model';

export interface UsageCommandOptions {
  /** The gateway's base URL (http://host:port). */
  url: string;
  adminKey: string;
  /** Today and the days before it, UTC. */
  days: number;
  by: UsageGrouping;
  /** Epoch ms; default Date.now(). */
  now?: number;
  /** One request's ledger row instead of the daily report. */
  request?: string;
}

/** Columns of text: the first left-aligned, the others right-aligned unless `left` says so. */
export function table(rows: string[][], left: ReadonlySet<number> = new Set([0])): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => (left.has(i) ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** USD to the micro-dollar, trailing zeros dropped; an unknown amount is never shown as 0. */
export function usd(value: number | null): string {
  if (value === null) return 'unknown';
  return String(Number(value.toFixed(6)));
}

const day = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString().slice(0, 10);

function costCell(amount: UsageResult['amount'], unpriced: number): string {
  const value = usd(amount?.value ?? null);
  if (unpriced === 0) return value;
  return amount === null ? `unknown (${unpriced} unpriced)` : `${value} + ${unpriced} unpriced`;
}

/** Days with requests, one row per day and group; a total row when there is more than one. Cache hits and their saving when there were any. */
export function formatUsage(page: UsagePage, by: UsageGrouping): string {
  const hits = page.data.some((b) => b.results.some((r) => (r.cache_hits ?? 0) > 0));
  const rows = [['day', by, 'requests', 'input', 'cached', 'cache write', 'output', 'cost (USD)', ...(hits ? ['cache hits', 'saved (USD)'] : [])]];
  const total = { requests: 0, input: 0, cached: 0, write: 0, output: 0, usd: 0, priced: false, unpriced: 0, hits: 0, saved: 0 };
  for (const bucket of page.data) {
    for (const r of bucket.results) {
      rows.push([
        day(bucket.start_time),
        r[by] ?? '-',
        String(r.num_model_requests),
        String(r.input_tokens),
        String(r.input_cached_tokens),
        String(r.input_cache_write_tokens),
        String(r.output_tokens),
        // Only cache hits: nothing was paid.
        r.num_model_requests === 0 ? '0' : costCell(r.amount, r.unpriced_requests),
        ...(hits ? [String(r.cache_hits ?? 0), usd(r.saved_amount?.value ?? 0)] : []),
      ]);
      total.hits += r.cache_hits ?? 0;
      total.saved += r.saved_amount?.value ?? 0;
      total.requests += r.num_model_requests;
      total.input += r.input_tokens;
      total.cached += r.input_cached_tokens;
      total.write += r.input_cache_write_tokens;
      total.output += r.output_tokens;
      total.unpriced += r.unpriced_requests;
      if (r.amount) {
        total.usd += r.amount.value;
        total.priced = true;
      }
    }
  }
  if (rows.length === 1) return 'no requests in this period';
  if (rows.length > 2)
    rows.push([
      'total',
      '',
      String(total.requests),
      String(total.input),
      String(total.cached),
      String(total.write),
      String(total.output),
      costCell(total.priced ? { value: total.usd, currency: 'usd' } : null, total.unpriced),
      ...(hits ? [String(total.hits), usd(total.saved)] : []),
    ]);
  return table(rows, new Set([0, 1]));
}

const windowCell = (w: QuotaReport['requests']): string => (w ? `${w.remaining}/${w.limit}` : '-');

function quotaCells(q: QuotaReport): string[] {
  const b = q.budget;
  return [
    windowCell(q.requests),
    windowCell(q.tokens),
    q.concurrency ? `${q.concurrency.in_flight}/${q.concurrency.limit}` : '-',
    b ? `${usd(b.usd)} ${b.period}` : '-',
    q.spent_usd === null ? '-' : usd(q.spent_usd),
    b ? usd(b.remaining_usd) : '-',
    b?.resets_at ? new Date(b.resets_at * 1000).toISOString().replace(':00.000Z', 'Z') : '-',
  ];
}

const QUOTA_HEADERS = ['requests left', 'tokens left', 'in flight', 'budget (USD)', 'spent', 'left', 'resets'];

export function formatKeys(keys: readonly KeyReport[]): string {
  const rows = [['key', 'team', ...QUOTA_HEADERS, 'expires']];
  for (const k of keys) rows.push([k.name, k.team ?? '-', ...quotaCells(k), k.expires_at === null ? '-' : `${day(k.expires_at)}${k.expired ? ' (expired)' : ''}`]);
  return table(rows, new Set([0, 1, 5, 9]));
}

export function formatTeams(teams: readonly TeamReport[]): string {
  const rows = [['team', 'keys', ...QUOTA_HEADERS]];
  for (const t of teams) rows.push([t.name, t.keys.join(',') || '-', ...quotaCells(t)]);
  return table(rows, new Set([0, 1, 5]));
}

/** A failure to report to the operator (exit 1): the gateway unreachable or refusing. */
export class UsageCommandError extends Error {}

/** The gateway's root: the clients' base URL (…/v1) works too. */
const baseOf = (url: string): string => url.replace(/\/+$/, '').replace(/\/v1$/, '');

async function get<T>(options: UsageCommandOptions, pathAndQuery: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${baseOf(options.url)}${pathAndQuery}`, { headers: { authorization: `Bearer ${options.adminKey}` } });
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
    throw new UsageCommandError(`cannot reach the gateway at ${options.url}: ${cause}`);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new UsageCommandError(`${options.url}${pathAndQuery.split('?')[0]} answered ${res.status} without JSON (is ${options.url} a Switchyard gateway?)`);
  }
  if (!res.ok) {
    const message = (body as { error?: { message?: string } }).error?.message ?? text;
    throw new UsageCommandError(`${options.url} answered ${res.status}: ${message}`);
  }
  return body as T;
}

/** `switchyard usage --request ID`: the request as the ledger booked it, one field a line. */
async function requestLines(options: UsageCommandOptions, id: string): Promise<string> {
  const r = await get<Record<string, unknown>>(options, `/admin/v1/requests/${encodeURIComponent(id)}`);
  const rows = Object.entries(r)
    .filter(([name]) => name !== 'object' && name !== 'created_at_ms')
    .map(([name, value]) => [name, name === 'created_at' ? new Date(Number(value) * 1000).toISOString() : value === null ? '-' : typeof value === 'object' ? JSON.stringify(value) : String(value)]);
  return `${table(rows, new Set([0, 1]))}\n`;
}

/** The report `switchyard usage` prints. */
export async function usageReport(options: UsageCommandOptions): Promise<string> {
  if (options.request !== undefined) return requestLines(options, options.request);
  const now = options.now ?? Date.now();
  const start = (Math.floor(now / 86_400_000) - (options.days - 1)) * 86_400;
  const end = Math.ceil(now / 1000);
  const page = await get<UsagePage>(options, `/admin/v1/usage?start_time=${start}&end_time=${end}&group_by=${options.by}`);
  const parts = [`Usage by ${options.by}, ${day(start)} to ${day(end - 1)} (UTC days), from ${options.url}`, formatUsage(page, options.by)];
  if (options.by === 'key') parts.push('Keys now', formatKeys((await get<{ data: KeyReport[] }>(options, '/admin/v1/keys')).data));
  if (options.by === 'team') parts.push('Teams now', formatTeams((await get<{ data: TeamReport[] }>(options, '/admin/v1/teams')).data));
  return `${parts.join('\n\n')}\n`;
}
