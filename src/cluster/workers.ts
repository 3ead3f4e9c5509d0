/** `server.workers` as a number of processes: `auto` is one per CPU this process may use. */
import { availableParallelism } from 'node:os';

export function workerCount(setting: number | 'auto' | undefined, cpus: number = availableParallelism()): number {
  if (setting === 'auto') return Math.max(1, cpus);
  return setting ?? 1;
}
