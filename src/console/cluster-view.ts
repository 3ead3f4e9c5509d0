/**
 * Several processes' snapshots as one console: activity added up, each target's state from
 * every worker (a cooldown is per worker: the view says on which), the newest reload and which
 * workers it reached. With one process every figure is that process's own.
 */
import type { Runtime } from '../runtime/build.ts';
import { RecentActivity, targetKey } from './activity.ts';
import type { Gathered } from './cluster-link.ts';
import type { ConsoleSnapshot, ReloadSummary } from './snapshot.ts';
import { mergeProviderViews, type ClusterProviderView } from './providers-view.ts';
import type { TargetView } from './views.ts';

export interface WorkerInfo {
  /** Cluster worker id; null for a lone process. */
  id: number | null;
  pid: number;
  uptime_s: number;
  generation: number;
  in_flight: number;
  requests_15m: number;
}

/** Which processes the figures cover. */
export interface ConsoleScope {
  workers: WorkerInfo[];
  missing: Gathered['missing'];
}

export interface ClusterTargetView extends TargetView {
  /** Each worker's own state of this target (one entry for a lone process). */
  workers: Array<{ id: number | null; state: TargetView['state']; cooling_until: number | null }>;
}

export interface CoolingTarget {
  alias: string;
  provider: string;
  model: string;
  /** Epoch ms when the last worker's cooldown ends, and how long that is from now. */
  until: number;
  left_ms: number;
  /** The workers where it cools (null for a lone process), out of `of`. */
  workers: Array<number | null>;
  of: number;
}

export interface LastReloadView extends ReloadSummary {
  /** What it said: the changes applied, or the first errors. */
  message: string;
  /** Workers whose own last reload had the same outcome and trigger (null for a lone process), out of `of`. */
  workers: Array<number | null>;
  of: number;
}

const idOf = (s: ConsoleSnapshot): number | null => s.worker?.id ?? null;
/** When workers disagree, the state that needs attention wins. */
const SEVERITY: Record<TargetView['state'], number> = { healthy: 0, probing: 1, cooling: 2, unavailable: 3 };

export class ClusterConsole {
  readonly snapshots: ConsoleSnapshot[];
  readonly missing: Gathered['missing'];
  readonly activity: RecentActivity;
  readonly #now: number;

  constructor(gathered: Gathered, nowMs = Date.now()) {
    this.snapshots = [...gathered.snapshots].sort((a, b) => (idOf(a) ?? 0) - (idOf(b) ?? 0));
    this.missing = gathered.missing;
    this.#now = nowMs;
    this.activity = RecentActivity.merge(
      this.snapshots.map((s) => ({ ...s.activity, recent: s.worker ? s.activity.recent.map((r) => ({ ...r, worker: s.worker?.id })) : s.activity.recent })),
      () => nowMs,
    );
  }

  scope(): ConsoleScope {
    const workers = this.snapshots.map((s) => {
      const one = RecentActivity.merge([s.activity], () => this.#now);
      return { id: idOf(s), pid: s.worker?.pid ?? process.pid, uptime_s: s.uptime_s, generation: s.generation, in_flight: s.activity.inFlight, requests_15m: one.totals().requests };
    });
    return { workers, missing: this.missing };
  }

  /** Uptime of the longest-running process. */
  uptime(): number {
    return Math.max(0, ...this.snapshots.map((s) => s.uptime_s));
  }

  /** Each alias's targets as every worker sees them, errors counted over all of them. */
  targets(runtime: Runtime): Array<{ alias: string; strategy: string; targets: ClusterTargetView[] }> {
    const byKey = new Map<string, Array<{ id: number | null; view: TargetView }>>();
    for (const s of this.snapshots)
      for (const alias of s.targets)
        for (const view of alias.targets) {
          const key = targetKey(alias.alias, view.provider, view.model);
          byKey.set(key, [...(byKey.get(key) ?? []), { id: idOf(s), view }]);
        }
    return [...runtime.models.values()].map((route) => ({
      alias: route.name,
      strategy: route.strategy,
      targets: route.targets.map((t) => {
        const key = targetKey(route.name, t.provider, t.model);
        const seen = byKey.get(key) ?? [];
        const worst = seen.reduce<TargetView['state']>((w, { view }) => (SEVERITY[view.state] > SEVERITY[w] ? view.state : w), 'healthy');
        const latencies = seen.map(({ view }) => view.latency_ms).filter((l): l is number => l !== null);
        const cooling = seen.map(({ view }) => view.cooling_until).filter((u): u is number => u !== null);
        return {
          provider: t.provider,
          model: t.model,
          state: worst,
          cooling_until: cooling.length > 0 ? Math.max(...cooling) : null,
          unavailable: seen.find(({ view }) => view.unavailable)?.view.unavailable ?? null,
          in_flight: seen.reduce((sum, { view }) => sum + view.in_flight, 0),
          latency_ms: latencies.length > 0 ? Math.round(latencies.reduce((a, b) => a + b, 0) / latencies.length) : null,
          ...this.activity.target(key, this.#now),
          workers: seen.map(({ id, view }) => ({ id, state: view.state, cooling_until: view.cooling_until })),
        };
      }),
    }));
  }

  /** Targets cooling on at least one worker, the longest cooldown first. */
  cooling(runtime: Runtime): CoolingTarget[] {
    const of = this.snapshots.length;
    return this.targets(runtime)
      .flatMap((alias) =>
        alias.targets
          .filter((t) => t.cooling_until !== null)
          .map((t) => ({
            alias: alias.alias,
            provider: t.provider,
            model: t.model,
            until: t.cooling_until ?? this.#now,
            left_ms: Math.max(0, (t.cooling_until ?? this.#now) - this.#now),
            workers: t.workers.filter((w) => w.state === 'cooling').map((w) => w.id),
            of,
          })),
      )
      .sort((a, b) => b.left_ms - a.left_ms);
  }

  /** Each provider as every worker holds it, merged, with each worker's own line. */
  providers(): ClusterProviderView[] {
    return mergeProviderViews(this.snapshots.map((s) => ({ id: idOf(s), providers: s.providers })));
  }

  /** The newest reload any worker made, and which workers' last reload ended the same way. */
  lastReload(): LastReloadView | null {
    const reloads = this.snapshots.filter((s) => s.last_reload !== null);
    if (reloads.length === 0) return null;
    const newest = reloads.reduce((a, b) => ((b.last_reload?.at ?? '') > (a.last_reload?.at ?? '') ? b : a)).last_reload as ReloadSummary;
    const same = reloads.filter((s) => s.last_reload?.ok === newest.ok && s.last_reload?.trigger === newest.trigger);
    const message = newest.ok ? (newest.changes ?? 'no change') : (newest.errors ?? []).join('\n') || 'rejected';
    return { ...newest, message, workers: same.map(idOf), of: this.snapshots.length };
  }
}
