/**
 * The console with several workers. A console request reaches whichever worker the cluster
 * hands the connection to, and each worker sees only its own traffic, so that worker asks the
 * primary to gather every worker's snapshot (src/console/snapshot.ts) and merges them, as
 * /metrics does with the registries (metrics.ts). A worker still starting answers that it is; one
 * that does not answer within GATHER_TIMEOUT_MS is named as missing rather than waited for.
 */
import cluster, { type Worker } from 'node:cluster';
import type { ConsoleCluster, Gathered } from '../console/cluster-link.ts';
import type { ConsoleQuery, ConsoleSnapshot } from '../console/snapshot.ts';

/** How long the primary waits for the workers' snapshots. */
const GATHER_TIMEOUT_MS = 3_000;
/** How long a worker waits for the primary's answer (the primary's wait and the way back). */
const ASK_TIMEOUT_MS = GATHER_TIMEOUT_MS + 1_500;

type ConsoleMessage =
  /** worker → primary: gather every worker's snapshot. */
  | { sy: 'console-gather'; id: number; query: ConsoleQuery }
  /** primary → each worker: your snapshot. */
  | { sy: 'console-collect'; id: number; query: ConsoleQuery }
  /** worker → primary: mine (null while the gateway is still starting). */
  | { sy: 'console-snapshot'; id: number; snapshot: ConsoleSnapshot | null }
  /** primary → the asking worker. */
  | { sy: 'console-gathered'; id: number; gathered: Gathered };

const KINDS = new Set(['console-gather', 'console-collect', 'console-snapshot', 'console-gathered']);

function isConsoleMessage(m: unknown): m is ConsoleMessage {
  return typeof m === 'object' && m !== null && KINDS.has((m as { sy?: unknown }).sy as string);
}

function send(message: ConsoleMessage): void {
  if (process.connected) process.send?.(message, undefined, {}, () => undefined);
}

/** A worker's side: serves its own snapshot, and gathers everyone's through the primary. */
export class WorkerConsole implements ConsoleCluster {
  readonly #workerId: number;
  #local: ((query: ConsoleQuery) => ConsoleSnapshot) | undefined;
  readonly #pending = new Map<number, (gathered: Gathered) => void>();
  #nextId = 1;

  /** Listens at once: the primary may ask while this worker's gateway is still starting. */
  constructor(workerId: number) {
    this.#workerId = workerId;
    process.on('message', (message) => {
      if (!isConsoleMessage(message)) return;
      if (message.sy === 'console-collect') send({ sy: 'console-snapshot', id: message.id, snapshot: this.#snapshot(message.query) });
      else if (message.sy === 'console-gathered') this.#pending.get(message.id)?.(message.gathered);
    });
  }

  serve(local: (query: ConsoleQuery) => ConsoleSnapshot): void {
    this.#local = local;
  }

  /** Every worker's snapshot; without the primary's answer, this worker's alone, saying so. */
  gather(query: ConsoleQuery): Promise<Gathered> {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const alone = (reason: string) => ({ snapshots: [this.#snapshot(query)].filter((s): s is ConsoleSnapshot => s !== null), missing: [{ worker: 0, reason }] });
      const timer = setTimeout(() => done(alone(`the cluster primary did not answer within ${ASK_TIMEOUT_MS} ms: this worker's (${this.#workerId}) figures only`)), ASK_TIMEOUT_MS);
      const done = (gathered: Gathered) => {
        clearTimeout(timer);
        this.#pending.delete(id);
        resolve(gathered);
      };
      if (!process.connected) return done(alone(`the cluster primary is gone: this worker's (${this.#workerId}) figures only`));
      this.#pending.set(id, done);
      send({ sy: 'console-gather', id, query });
    });
  }

  #snapshot(query: ConsoleQuery): ConsoleSnapshot | null {
    return this.#local ? this.#local(query) : null;
  }
}

/** The primary's side: asks every live worker for its snapshot and answers the one that asked. */
export function gatherConsoles(): void {
  let nextId = 1;
  const waiting = new Map<number, (worker: Worker, snapshot: ConsoleSnapshot | null) => void>();
  cluster.on('message', (from: Worker, message: unknown) => {
    if (!isConsoleMessage(message)) return;
    if (message.sy === 'console-snapshot') waiting.get(message.id)?.(from, message.snapshot);
    if (message.sy !== 'console-gather') return;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w?.isConnected() === true);
    const id = nextId++;
    const answers = new Map<Worker, ConsoleSnapshot | null>();
    const finish = () => {
      clearTimeout(timer);
      waiting.delete(id);
      const snapshots = [...answers.values()].filter((s): s is ConsoleSnapshot => s !== null);
      const missing = workers.filter((w) => answers.get(w) == null).map((w) => ({ worker: w.id, reason: answers.has(w) ? 'starting' : `no answer within ${GATHER_TIMEOUT_MS} ms` }));
      if (from.isConnected()) from.send({ sy: 'console-gathered', id: message.id, gathered: { snapshots, missing } } satisfies ConsoleMessage, () => undefined);
    };
    const timer = setTimeout(finish, GATHER_TIMEOUT_MS);
    waiting.set(id, (worker, snapshot) => {
      answers.set(worker, snapshot);
      if (answers.size === workers.length) finish();
    });
    for (const worker of workers) worker.send({ sy: 'console-collect', id, query: message.query } satisfies ConsoleMessage, () => undefined);
  });
}
