/**
 * /metrics with several workers. A scrape reaches whichever worker the cluster hands the
 * connection to, so each must answer for all of them, or counters would jump between workers'
 * values from one scrape to the next. The scraped worker asks the primary, which collects every
 * worker's registries and sums them with prom-client's AggregatorRegistry (gauges for which a sum
 * means nothing say how to combine them: see observability/metrics.ts). A scrape while a worker
 * is starting waits for it up to prom-client's 5 s, then fails (the scrape, not the worker).
 */
import type { Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { isToWorker, type ToPrimary } from './messages.ts';

/** prom-client gives up on a silent worker after 5 s; a little more covers the way back. */
const SCRAPE_TIMEOUT_MS = 6_000;

interface Pending {
  resolve(text: string): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** A worker's side: answers the primary's requests for its registries, and asks it for the sum when scraped. */
export class WorkerScrapes {
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;

  /** Listens at once: another worker may be scraped while this one starts (it answers with nothing yet). */
  constructor() {
    new AggregatorRegistry();
    process.on('message', (message) => {
      if (!isToWorker(message) || message.sy !== 'scraped') return;
      const call = this.#pending.get(message.id);
      if (!call) return;
      this.#pending.delete(message.id);
      clearTimeout(call.timer);
      if (message.text !== undefined) call.resolve(message.text);
      else call.reject(new Error(`metrics of the cluster: ${message.error}`));
    });
  }

  serve(metrics: GatewayMetrics): void {
    AggregatorRegistry.setRegistries(metrics.registries);
    metrics.renderWith(() => this.#scrapeCluster());
  }

  #scrapeCluster(): Promise<string> {
    if (!process.connected) return Promise.reject(new Error('metrics of the cluster: the cluster primary is gone'));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`metrics of the cluster: no answer within ${SCRAPE_TIMEOUT_MS} ms`));
      }, SCRAPE_TIMEOUT_MS);
      this.#pending.set(id, { resolve, reject, timer });
      const message: ToPrimary = { sy: 'scrape', id };
      process.send?.(message, undefined, {}, () => undefined);
    });
  }
}

/** The primary's side: every worker's registries, summed, for the worker that was scraped. */
export class ClusterScrapes {
  readonly #aggregator = new AggregatorRegistry();

  answer(worker: Worker, id: number): void {
    this.#aggregator.clusterMetrics().then(
      (text) => worker.isConnected() && worker.send({ sy: 'scraped', id, text }, () => undefined),
      (err: Error) => worker.isConnected() && worker.send({ sy: 'scraped', id, error: err.message }, () => undefined),
    );
  }
}
