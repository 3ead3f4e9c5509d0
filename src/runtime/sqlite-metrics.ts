/**
 * The SQLite files' lock series, read when scraped: writes on the serving thread that found a
 * file locked by another process (each waits at most BUSY_TIMEOUT_MS, then is queued and
 * retried), the seconds they waited, and whether the file is locked now. `store` is `state`
 * (budgets and spend) or `responses` (stored Responses): two values, whatever the traffic.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { LockStats } from './sqlite.ts';

export type LockSources = Partial<Record<'state' | 'responses', () => LockStats | undefined>>;

export function registerLockMetrics(registry: Registry, sources: LockSources): void {
  const stores = Object.entries(sources) as Array<[string, () => LockStats | undefined]>;
  following(registry, stores, 'switchyard_state_lock_waits_total', 'Writes to a SQLite file that found it locked by another process (then queued and retried).', (s) => s.busy);
  following(
    registry,
    stores,
    'switchyard_state_lock_wait_seconds_total',
    "Seconds the serving thread waited for a SQLite file's lock held by another process (at most the 5 ms busy timeout per write).",
    (s) => s.waitedSeconds,
  );
  new Gauge({
    name: 'switchyard_state_locked',
    help: 'Whether a SQLite file is locked by another process now (1): its writes are queued until it is released.',
    labelNames: ['store'],
    registers: [registry],
    collect() {
      for (const [store, read] of stores) {
        const stats = read();
        if (stats) this.set({ store }, stats.locked ? 1 : 0);
      }
    },
  });
}

/** A counter per store that follows a count kept elsewhere (increased by the difference at each scrape). */
function following(registry: Registry, stores: Array<[string, () => LockStats | undefined]>, name: string, help: string, read: (s: LockStats) => number): void {
  const seen = new Map<string, number>();
  new Counter({
    name,
    help,
    labelNames: ['store'],
    registers: [registry],
    collect() {
      for (const [store, source] of stores) {
        const stats = source();
        if (!stats) continue;
        const now = read(stats);
        this.inc({ store }, now - (seen.get(store) ?? 0));
        seen.set(store, now);
      }
    },
  });
}
