/**
 * The ledger's Prometheus series, read when scraped: rows waiting to be written, rows written
 * and dropped (the queue was full while the database was down), and whether writes succeed.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RequestLedger } from './book.ts';

export function registerLedgerMetrics(registry: Registry, ledger: RequestLedger): void {
  const engine = ledger.engine.kind;
  new Gauge({
    name: 'switchyard_ledger_queued_rows',
    help: 'Request ledger rows waiting to be written to the database.',
    labelNames: ['engine'],
    registers: [registry],
    collect() {
      this.set({ engine }, ledger.stats.queued);
    },
  });
  new Gauge({
    name: 'switchyard_ledger_up',
    help: 'Whether the last write to the request ledger database succeeded (1) or failed (0).',
    labelNames: ['engine'],
    registers: [registry],
    collect() {
      this.set({ engine }, ledger.stats.up ? 1 : 0);
    },
  });
  monotonic(registry, 'switchyard_ledger_written_rows_total', 'Request ledger rows written to the database.', engine, () => ledger.stats.written);
  monotonic(registry, 'switchyard_ledger_dropped_rows_total', 'Request ledger rows dropped because the queue was full while the database could not be written.', engine, () => ledger.stats.dropped);
}

/** A counter that follows a count kept elsewhere (increased by the difference at each scrape). */
function monotonic(registry: Registry, name: string, help: string, engine: string, read: () => number): void {
  let seen = 0;
  new Counter({
    name,
    help,
    labelNames: ['engine'],
    registers: [registry],
    collect() {
      const now = read();
      this.inc({ engine }, now - seen);
      seen = now;
    },
  });
}
