/**
 * The state backend's fault counters, read when scraped: times Redis lost its counters, rebuilds
 * from the request ledger this instance made, and settlements dropped because the queue kept
 * while the backend was down was full.
 */
import { Counter, type Registry } from 'prom-client';
import type { StateBackend, StateCounts } from './types.ts';

const SERIES: Array<{ name: string; help: string; read: (c: StateCounts) => number }> = [
  { name: 'switchyard_state_data_losses_total', help: 'Times the state backend (Redis) was found to have lost its counters (its sentinel key was gone).', read: (c) => c.dataLosses },
  { name: 'switchyard_state_rebuilds_total', help: 'Times this instance rebuilt period spend in the state backend from the request ledger.', read: (c) => c.rebuilds },
  {
    name: 'switchyard_state_dropped_settlements_total',
    help: 'Settlements dropped because the queue kept while the state backend was unavailable was full (their spend is not in the shared counters).',
    read: (c) => c.droppedSettlements,
  },
];

export function registerStateMetrics(registry: Registry, state: StateBackend): void {
  const counts = state.counts;
  if (!counts) return;
  for (const { name, help, read } of SERIES) {
    let seen = 0;
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const now = read(counts.call(state));
        this.inc(now - seen);
        seen = now;
      },
    });
  }
}
