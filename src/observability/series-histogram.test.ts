import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { NO_LABELS, SeriesHistogram } from './series-histogram.ts';

const BUCKETS = [0.01, 0.1, 1, 10];
const VALUES = [0, 0.01, 0.05, 0.1, 0.5, 3, 10, 11, 1e6];

/** The same observations through prom-client's Histogram and ours, each in a registry of its own. */
function pair(labelNames: string[]) {
  const theirs = new Registry();
  const ours = new Registry();
  const reference = new Histogram({ name: 'h_seconds', help: 'h', labelNames, buckets: BUCKETS, registers: [theirs] });
  const histogram = new SeriesHistogram({ name: 'h_seconds', help: 'h', labelNames, buckets: BUCKETS, registers: [ours] });
  return { theirs, ours, reference, histogram };
}

describe('SeriesHistogram', () => {
  it('renders and reports as JSON exactly what prom-client does for the same observations', async () => {
    const { theirs, ours, reference, histogram } = pair(['op', 'model']);
    const a = Object.freeze({ op: 'chat', model: 'x' });
    const b = Object.freeze({ op: 'chat', model: 'y"\\\n' });
    for (const [i, v] of VALUES.entries()) {
      const labels = i % 3 === 0 ? b : a;
      reference.observe(labels, v);
      histogram.observe(labels, v);
    }
    // Another object with a's values: the same series, not a second one.
    reference.observe({ model: 'x', op: 'chat' }, 2);
    histogram.observe({ model: 'x', op: 'chat' }, 2);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
    expect(await ours.metrics()).toContain('h_seconds_bucket{le="1",op="chat",model="x"} 3\n');
  });

  it('without labels reports its one series from the start, as prom-client does', async () => {
    const { theirs, ours, reference, histogram } = pair([]);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    reference.observe(0.5);
    histogram.observe(NO_LABELS, 0.5);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain('h_seconds_count 1\n');
  });

  it('sums across registries (a cluster primary) as prom-client sums its own', async () => {
    const one = pair(['op']);
    const two = pair(['op']);
    one.reference.observe({ op: 'a' }, 0.05);
    one.histogram.observe({ op: 'a' }, 0.05);
    two.reference.observe({ op: 'a' }, 5);
    two.histogram.observe({ op: 'a' }, 5);
    two.reference.observe({ op: 'b' }, 50);
    two.histogram.observe({ op: 'b' }, 50);
    const sum = async (registries: Registry[]) => AggregatorRegistry.aggregate(await Promise.all(registries.map((r) => r.getMetricsAsJSON()))).metrics();
    const summed = await sum([one.ours, two.ours]);
    expect(summed).toBe(await sum([one.theirs, two.theirs]));
    expect(summed).toContain('h_seconds_count{op="a"} 2\n');
  });

  it('refuses what prom-client refuses: a label it was not given, a value that is not a number', () => {
    const { histogram } = pair(['op']);
    expect(() => histogram.observe({ other: 'x' } as never, 1)).toThrow(/label "other"/);
    expect(() => histogram.observe({ op: 'a' }, Number.NaN)).toThrow(TypeError);
  });

  it('forgets every series on reset', async () => {
    const { ours, histogram } = pair(['op']);
    const a = { op: 'a' };
    histogram.observe(a, 1);
    ours.resetMetrics();
    expect(await ours.metrics()).not.toContain('op="a"');
    histogram.observe(a, 1);
    expect(await ours.metrics()).toContain('h_seconds_count{op="a"} 1');
  });
});
