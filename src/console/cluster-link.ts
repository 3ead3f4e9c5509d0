/**
 * Where the console's routes meet the cluster (src/cluster/console.ts). A cluster worker joins
 * before its gateway starts; the routes then serve this process's snapshot to the other workers
 * and gather everyone's for each answer. A lone process never joins and answers from its own
 * snapshot. One link per process: a cluster worker runs exactly one gateway.
 */
import type { ConsoleQuery, ConsoleSnapshot } from './snapshot.ts';

export interface Gathered {
  /** One per process that answered, the asking one included. */
  snapshots: ConsoleSnapshot[];
  /** Workers whose figures are missing from the answer, and why (starting, no answer in time). */
  missing: Array<{ worker: number; reason: string }>;
}

export interface ConsoleCluster {
  /** How this process answers the others' requests for its snapshot. */
  serve(local: (query: ConsoleQuery) => ConsoleSnapshot): void;
  /** Every worker's snapshot for `query`. */
  gather(query: ConsoleQuery): Promise<Gathered>;
}

let joined: ConsoleCluster | undefined;

export function joinConsoleCluster(cluster: ConsoleCluster): void {
  joined = cluster;
}

export function consoleCluster(): ConsoleCluster | undefined {
  return joined;
}
