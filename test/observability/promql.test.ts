import { expect, it } from 'vitest';
import { dashboardQueries, metricNames } from './promql.ts';

it('finds the metric names of a query, not its functions, labels, ranges or numbers', () => {
  expect(metricNames('histogram_quantile(0.95, sum by (le, model) (rate(a_seconds_bucket{status=~"5..", x="rate(y)"}[5m])))')).toEqual(['a_seconds_bucket']);
  expect(metricNames('(sum(rate(b_total[$__rate_interval])) or vector(0)) / on (team) group_left (name) c:rule:ratio offset 1h > 1e-3')).toEqual(['b_total', 'c:rule:ratio']);
  expect(metricNames('sum(x) by (le) and bool ignoring (job) y')).toEqual(['x', 'y']);
  expect(metricNames('vector(1)')).toEqual([]);
});

it('collects every panel query, inside rows too', () => {
  const dashboard = {
    panels: [
      { title: 'a', targets: [{ expr: 'x' }, { expr: 'y' }] },
      { title: 'row', panels: [{ title: 'b', targets: [{ expr: 'z' }] }] },
    ],
  };
  expect(dashboardQueries(dashboard)).toEqual([
    { panel: 'a', expr: 'x' },
    { panel: 'a', expr: 'y' },
    { panel: 'b', expr: 'z' },
  ]);
});
