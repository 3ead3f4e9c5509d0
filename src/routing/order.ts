/**
 * The order in which an alias's targets are tried for one request, by strategy:
 * - fallback: as written;
 * - weighted: sampled by `weight` without replacement (the rest become the fallbacks);
 * - least-latency: lowest moving average of time to first token first (unmeasured targets first, to learn them);
 * - least-busy: fewest requests in flight first.
 * Ties keep the written order.
 */
import type { RouteTarget, Strategy } from '../plugin-api.ts';

export type { Strategy };

/** What ordering reads of a target. */
export type Orderable = Pick<RouteTarget, 'weight'> & { readonly state: Pick<RouteTarget['state'], 'latencyMs' | 'inFlight'> };

export function orderTargets<T extends Orderable>(strategy: Strategy, targets: readonly T[], random: () => number): T[] {
  switch (strategy) {
    case 'fallback':
      return [...targets];
    case 'weighted':
      return weightedOrder(targets, random);
    case 'least-latency':
      return stableSort(targets, (t) => t.state.latencyMs ?? -1);
    case 'least-busy':
      return stableSort(targets, (t) => t.state.inFlight);
  }
}

function weightedOrder<T extends Orderable>(targets: readonly T[], random: () => number): T[] {
  const pool = [...targets];
  const out: T[] = [];
  while (pool.length) {
    const total = pool.reduce((sum, t) => sum + t.weight, 0);
    let pick = random() * total;
    let index = pool.findIndex((t) => (pick -= t.weight) < 0);
    if (index === -1) index = pool.length - 1;
    out.push(pool.splice(index, 1)[0]);
  }
  return out;
}

function stableSort<T extends Orderable>(targets: readonly T[], key: (t: T) => number): T[] {
  return targets
    .map((t, i) => ({ t, i, k: key(t) }))
    .sort((a, b) => a.k - b.k || a.i - b.i)
    .map((e) => e.t);
}
