/**
 * The query string of GET /admin/v1/usage and /admin/v1/costs, read like OpenAI's organization
 * usage and costs APIs (platform.openai.com/docs/api-reference/usage): `start_time` (unix
 * seconds, required), `end_time` (exclusive, default now), `bucket_width` (`1d` only), `group_by`
 * and the filters as comma-separated lists or repeated parameters (`group_by=key&group_by=model`,
 * `group_by[]=key` too). Anything else is a 400 naming the parameter: a filter the gateway does
 * not know must not be ignored silently, or the totals would look filtered when they are not.
 */
import { GatewayError } from '../errors.ts';
import type { UsageQuery } from '../governance/index.ts';

export type QueryString = Record<string, string | string[] | undefined>;

const GROUPS = ['key', 'team', 'model'] as const;
type Group = (typeof GROUPS)[number];
const LISTS = ['group_by', 'keys', 'teams', 'models'] as const;
/** `limit` and `page` are OpenAI's paging; one page holds every bucket here, so they change nothing. */
const KNOWN = new Set<string>(['start_time', 'end_time', 'bucket_width', 'limit', 'page', ...LISTS]);
/** Longest range: a year of daily buckets. */
export const MAX_DAYS = 366;

const invalid = (param: string, message: string) => new GatewayError('invalid_request', message, { param });

/** Every value of a list parameter, from `a,b`, repeated `p=a&p=b` and `p[]=a`. */
function listOf(query: QueryString, name: string): string[] | undefined {
  const raw = [query[name], query[`${name}[]`]].flat().filter((v): v is string => typeof v === 'string');
  if (raw.length === 0) return undefined;
  return raw
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

function single(query: QueryString, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) throw invalid(name, `Invalid '${name}': give it once.`);
  return v;
}

function unixSeconds(query: QueryString, name: string): number | undefined {
  const v = single(query, name);
  if (v === undefined) return undefined;
  if (!/^\d{1,12}$/.test(v)) throw invalid(name, `Invalid '${name}': expected unix seconds (a whole number), got '${v}'.`);
  return Number(v);
}

/** The query → the engine's UsageQuery; throws 400 `invalid_request` naming the parameter. */
export function parseUsageQuery(query: QueryString, nowMs: number): UsageQuery {
  for (const name of Object.keys(query)) {
    if (!KNOWN.has(name.replace(/\[\]$/, ''))) throw invalid(name, `Unknown parameter '${name}'. Known: start_time, end_time, bucket_width, group_by, keys, teams, models, limit, page.`);
  }
  const startTime = unixSeconds(query, 'start_time');
  if (startTime === undefined) throw new GatewayError('missing_required_parameter', "Missing required parameter: 'start_time' (unix seconds).", { param: 'start_time' });
  const endTime = unixSeconds(query, 'end_time');
  const end = endTime ?? Math.ceil(nowMs / 1000);
  if (end <= startTime) throw invalid(endTime === undefined ? 'start_time' : 'end_time', `Invalid range: end_time (${end}) must be after start_time (${startTime}).`);
  if (end - startTime > MAX_DAYS * 86_400) throw invalid('end_time', `Invalid range: at most ${MAX_DAYS} days of daily buckets per request.`);
  const width = single(query, 'bucket_width');
  if (width !== undefined && width !== '1d') throw invalid('bucket_width', `Invalid 'bucket_width': only '1d' (UTC days) is kept, got '${width}'.`);
  const groupBy = listOf(query, 'group_by');
  const unknownGroup = groupBy?.find((g) => !GROUPS.includes(g as Group));
  if (unknownGroup !== undefined) throw invalid('group_by', `Invalid 'group_by': '${unknownGroup}' is not one of key, team, model.`);
  const parsed: UsageQuery = { startTime, endTime, groupBy: groupBy as Group[] | undefined };
  const keys = listOf(query, 'keys');
  const teams = listOf(query, 'teams');
  const models = listOf(query, 'models');
  return { ...parsed, ...(keys && { keys }), ...(teams && { teams }), ...(models && { models }) };
}
