/** The tables of `switchyard usage`: aligned columns, unknown costs never shown as 0, a total when there is more than one row. */
import { describe, expect, it } from 'vitest';
import type { UsagePage, UsageResult } from '../governance/index.ts';
import { formatUsage, table, usd } from './usage-table.ts';

const result = (over: Partial<UsageResult>): UsageResult => ({
  object: 'gateway.usage.result',
  key: null,
  team: null,
  model: null,
  num_model_requests: 1,
  input_tokens: 10,
  input_cached_tokens: 0,
  input_cache_write_tokens: 0,
  output_tokens: 5,
  amount: { value: 0.001, currency: 'usd' },
  unpriced_requests: 0,
  ...over,
});
const DAY1 = Date.parse('2026-03-01T00:00:00Z') / 1000;
const page = (...days: UsageResult[][]): UsagePage => ({
  object: 'page',
  has_more: false,
  next_page: null,
  data: days.map((results, i) => ({ object: 'bucket', start_time: DAY1 + i * 86_400, end_time: DAY1 + (i + 1) * 86_400, results })),
});

describe('switchyard usage tables', () => {
  it('aligns the first columns left and the others right', () => {
    expect(
      table(
        [
          ['a', 'bb', 'c'],
          ['ccc', 'd', 'eeee'],
        ],
        new Set([0, 1]),
      ),
    ).toBe('a    bb     c\nccc  d   eeee');
  });

  it('USD to the micro-dollar; unknown is "unknown", not 0', () => {
    expect([usd(0.0021750004), usd(1), usd(0), usd(null)]).toEqual(['0.002175', '1', '0', 'unknown']);
  });

  it('a row per day and group, empty days left out, then a total with the unpriced requests', () => {
    const text = formatUsage(
      page(
        [result({ model: 'gpt' }), result({ model: 'mystery', amount: null, unpriced_requests: 1 })],
        [],
        [result({ model: 'gpt', num_model_requests: 2, amount: { value: 0.002, currency: 'usd' }, unpriced_requests: 1 })],
      ),
      'model',
    );
    expect(text.split('\n').map((l) => l.split(/\s{2,}/))).toEqual([
      ['day', 'model', 'requests', 'input', 'cached', 'cache write', 'output', 'cost (USD)'],
      ['2026-03-01', 'gpt', '1', '10', '0', '0', '5', '0.001'],
      ['2026-03-01', 'mystery', '1', '10', '0', '0', '5', 'unknown (1 unpriced)'],
      ['2026-03-03', 'gpt', '2', '10', '0', '0', '5', '0.002 + 1 unpriced'],
      ['total', '4', '30', '0', '0', '15', '0.003 + 2 unpriced'],
    ]);
  });

  it('with cache hits in the period, two columns say them and what they saved', () => {
    const text = formatUsage(
      page(
        [result({ key: 'ci', cache_hits: 3, saved_amount: { value: 0.003, currency: 'usd' } }), result({ key: 'dev', cache_hits: 0, saved_amount: null })],
        [result({ key: 'ci', num_model_requests: 0, input_tokens: 0, output_tokens: 0, amount: null, cache_hits: 2, saved_amount: { value: 0.002, currency: 'usd' } })],
      ),
      'key',
    );
    expect(text.split('\n').map((l) => l.split(/\s{2,}/))).toEqual([
      ['day', 'key', 'requests', 'input', 'cached', 'cache write', 'output', 'cost (USD)', 'cache hits', 'saved (USD)'],
      ['2026-03-01', 'ci', '1', '10', '0', '0', '5', '0.001', '3', '0.003'],
      ['2026-03-01', 'dev', '1', '10', '0', '0', '5', '0.001', '0', '0'],
      ['2026-03-02', 'ci', '0', '0', '0', '0', '0', '0', '2', '0.002'],
      ['total', '2', '20', '0', '0', '10', '0.002', '5', '0.005'],
    ]);
  });

  it('says so when nothing was requested', () => {
    expect(formatUsage(page([], []), 'key')).toBe('no requests in this period');
  });
});
