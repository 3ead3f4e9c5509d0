/**
 * A Prometheus histogram without prom-client's per-call work: its Histogram hashes and checks the
 * label object on every observe (a string built from every label, then a property look-up by
 * it), which was most of what metrics cost a request. Here a label set is found by the object
 * itself, made once by the caller and reused; the first time an object is seen it is filed
 * under its label values, so two objects with the same values still share one series. An
 * observation is then a bucket search and three additions.
 *
 * What it reports has the shape of prom-client's Histogram (`get` for a cluster primary's sum,
 * `getForPromString` for the exposition), so a registry renders and aggregates it alike; its
 * test compares the two.
 */
import type { LabelValues, Metric, Registry } from 'prom-client';

export interface SeriesHistogramConfiguration<T extends string> {
  name: string;
  help: string;
  labelNames?: readonly T[];
  /** Upper bounds, ascending (+Inf is implicit). */
  buckets: readonly number[];
  registers: Registry[];
}

interface Series {
  labels: Labels;
  /** Observations per bucket (not cumulative), the last one above every bound. */
  counts: number[];
  sum: number;
  count: number;
}

type Labels = Readonly<Record<string, string | number>>;

/** One sample as prom-client reports it: `le` in `labels` and, for the exposition, the series' labels apart. */
interface Sample {
  labels: Labels;
  sharedLabels?: Labels;
  value: number;
  metricName: string;
  exemplar?: null;
}

interface Report {
  name: string;
  help: string;
  type: 'histogram';
  values: Sample[];
  aggregator: 'sum';
}

/** A label set's values, as the key of its series (done once per label object, not per observation). */
const seriesKey = (labelNames: readonly string[], labels: Readonly<Record<string, unknown>>): string => JSON.stringify(labelNames.map((n) => labels[n]));

/** The label set of a histogram without labels. */
export const NO_LABELS: Readonly<Record<string, never>> = Object.freeze({});

export class SeriesHistogram<T extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  readonly #labelNames: readonly T[];
  readonly #bounds: readonly number[];
  /** Series by label object; objects of an older config generation go with it. */
  #byObject = new WeakMap<object, Series>();
  /** Series by label values, in the order they were first seen (the exposition's order). */
  #byValues = new Map<string, Series>();

  constructor(config: SeriesHistogramConfiguration<T>) {
    this.name = config.name;
    this.help = config.help;
    this.#labelNames = config.labelNames ?? [];
    this.#bounds = [...config.buckets];
    this.reset();
    // The registries only keep it and call get/getForPromString/reset, which it has.
    for (const registry of config.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** Adds `value` to the series of `labels`, an object made once for that series (NO_LABELS when there are none). */
  observe(labels: LabelValues<T>, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`${this.name}: not a finite number: ${value}`);
    const series = this.#byObject.get(labels) ?? this.#file(labels);
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    series.counts[i]++;
    series.sum += value;
    series.count++;
  }

  reset(): void {
    this.#byObject = new WeakMap();
    this.#byValues = new Map();
    // Without labels the one series is reported from the start, at zero, as prom-client does.
    if (this.#labelNames.length === 0) this.#file(NO_LABELS);
  }

  /** For the exposition: each series' labels are shared by its samples (prom-client renders them once per series). */
  async getForPromString(): Promise<Report> {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.#byValues.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.#bounds.length; i++) {
        cumulative += s.counts[i];
        values.push({ labels: { le: this.#bounds[i] }, sharedLabels: s.labels, value: cumulative, metricName: bucket, exemplar: null });
      }
      values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucket, exemplar: null });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** As JSON (what a cluster primary sums): each sample's labels are `le` then the series' own. */
  async get(): Promise<Report> {
    const report = await this.getForPromString();
    report.values = report.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return report;
  }

  /** A label object seen for the first time: checked, and joined to its values' series. */
  #file(labels: Readonly<Record<string, unknown>>): Series {
    for (const name in labels) {
      if (!this.#labelNames.includes(name as T)) throw new Error(`${this.name}: label "${name}" is not one of ${this.#labelNames.join(', ')}`);
    }
    const key = seriesKey(this.#labelNames, labels);
    let series = this.#byValues.get(key);
    if (!series) {
      series = { labels: labels as Labels, counts: new Array(this.#bounds.length + 1).fill(0), sum: 0, count: 0 };
      this.#byValues.set(key, series);
    }
    this.#byObject.set(labels, series);
    return series;
  }
}
