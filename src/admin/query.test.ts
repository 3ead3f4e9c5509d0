/** The admin API's query string → UsageQuery: OpenAI's parameters, lists in three spellings, every mistake a 400 naming its parameter. */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors.ts';
import { parseUsageQuery } from './query.ts';

const NOW = Date.parse('2026-03-10T12:00:00Z');
const DAY = 86_400;
const start = Date.parse('2026-03-01T00:00:00Z') / 1000;

function refusal(query: Record<string, string | string[]>): { code: string; param: string | null } {
  try {
    parseUsageQuery(query, NOW);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return { code: (err as GatewayError).code, param: (err as GatewayError).param };
  }
  throw new Error('no refusal');
}

describe('parseUsageQuery', () => {
  it('start_time alone: up to now, no grouping, no filters', () => {
    expect(parseUsageQuery({ start_time: String(start) }, NOW)).toEqual({ startTime: start, endTime: undefined, groupBy: undefined });
  });

  it('group_by and filters as a comma list, repeated, or with []', () => {
    const expected = { startTime: start, endTime: start + DAY, groupBy: ['key', 'model'], keys: ['a', 'b'], teams: ['t'], models: ['gpt', 'claude'] };
    expect(parseUsageQuery({ start_time: String(start), end_time: String(start + DAY), group_by: 'key, model', keys: 'a,b', teams: 't', models: 'gpt,claude' }, NOW)).toEqual(expected);
    expect(parseUsageQuery({ start_time: String(start), end_time: String(start + DAY), group_by: ['key', 'model'], keys: ['a', 'b'], teams: 't', 'models[]': ['gpt', 'claude'] }, NOW)).toEqual(
      expected,
    );
    expect(parseUsageQuery({ start_time: String(start), 'group_by[]': ['key', 'model'], bucket_width: '1d', limit: '7' }, NOW).groupBy).toEqual(['key', 'model']);
  });

  it('refuses what it cannot honour, naming the parameter', () => {
    expect(refusal({})).toEqual({ code: 'missing_required_parameter', param: 'start_time' });
    expect(refusal({ start_time: '-5' })).toEqual({ code: 'invalid_request', param: 'start_time' });
    expect(refusal({ start_time: ['1', '2'] })).toEqual({ code: 'invalid_request', param: 'start_time' });
    expect(refusal({ start_time: String(start), end_time: String(start) })).toEqual({ code: 'invalid_request', param: 'end_time' });
    expect(refusal({ start_time: String(NOW / 1000 + 10) })).toEqual({ code: 'invalid_request', param: 'start_time' });
    expect(refusal({ start_time: String(start), end_time: String(start + 367 * DAY) })).toEqual({ code: 'invalid_request', param: 'end_time' });
    expect(refusal({ start_time: String(start), bucket_width: '1h' })).toEqual({ code: 'invalid_request', param: 'bucket_width' });
    expect(refusal({ start_time: String(start), group_by: 'key,project_id' })).toEqual({ code: 'invalid_request', param: 'group_by' });
    expect(refusal({ start_time: String(start), project_ids: 'p' })).toEqual({ code: 'invalid_request', param: 'project_ids' });
  });
});
