/**
 * What one gateway process contributes to the console: its recent activity, its targets' breaker
 * state (kept per process), its config generation and its last reload. A lone process shows its
 * own snapshot; a cluster worker's console gathers every worker's (src/cluster/console.ts) and
 * merges them (cluster-view.ts), so every figure covers the whole cluster.
 */
import type { Runtime } from '../runtime/build.ts';
import type { ActivitySnapshot } from './activity.ts';
import { providerViews, type ProviderView } from './providers-view.ts';
import { targets, type ConsoleSource, type TargetView } from './views.ts';

/** What the asking endpoint needs: how many recent requests (0 for none). */
export interface ConsoleQuery {
  recent: number;
}

export interface ReloadSummary {
  ok: boolean;
  generation: number;
  at: string;
  trigger: string;
  changes?: string;
  errors?: string[];
}

export interface ConsoleSnapshot {
  /** The cluster worker this is; null for a lone process. */
  worker: { id: number; pid: number } | null;
  uptime_s: number;
  generation: number;
  activity: ActivitySnapshot;
  /** This process's view of each alias's targets (cooldowns, in-flight and latency are per process). */
  targets: Array<{ alias: string; strategy: string; targets: TargetView[] }>;
  last_reload: ReloadSummary | null;
  /** Each provider's state and identity as this process holds them (each worker fetches its own credentials). */
  providers: ProviderView[];
}

export interface SnapshotDeps {
  runtime: Runtime;
  source: ConsoleSource;
  /** The gateway's readiness details: `worker` in a cluster, `lastReload` after a reload. */
  readiness: Record<string, unknown>;
}

export function localSnapshot({ runtime, source, readiness }: SnapshotDeps, query: ConsoleQuery): ConsoleSnapshot {
  const worker = readiness.worker as ConsoleSnapshot['worker'] | undefined;
  return {
    worker: worker ? { id: worker.id, pid: worker.pid } : null,
    uptime_s: Math.floor(process.uptime()),
    generation: runtime.generation,
    activity: source.activity.snapshot(query.recent),
    targets: targets(runtime, source.activity, source.now()),
    last_reload: (readiness.lastReload as ReloadSummary | undefined) ?? null,
    providers: providerViews(runtime, source.now()),
  };
}
