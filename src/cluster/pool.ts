/**
 * The cluster primary's workers: forks them, knows which are ready, replaces one that dies (after
 * a delay that grows while they keep dying, so a worker that cannot start does not spin), and
 * stops them all gracefully. Forked workers run this process's own script (process.argv[1]) with
 * its own Node flags (process.execArgv: the V8 heap flags bin/switchyard.mjs applies) and
 * arguments, so they start exactly as it did.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { Backoff } from './backoff.ts';
import { isToPrimary, type ToPrimary, type ToWorker } from './messages.ts';

type Ready = Extract<ToPrimary, { sy: 'ready' }>;

export interface PoolOptions {
  size: number;
  log: Logger;
  /** A worker is listening (at start and after every replacement). */
  onReady?(worker: Worker, message: Ready): void;
}

/** 100 ms before the first replacement, twice as long for each further death within a minute, at most 10 s. */
const RESTART = { firstMs: 100, maxMs: 10_000, forgetAfterMs: 60_000 };

export class WorkerPool {
  readonly #options: PoolOptions;
  readonly #ready = new Set<Worker>();
  #stopping = false;
  readonly #backoff = new Backoff(RESTART);
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Reloads asked for so far, and the number when each worker was forked: one that started reading the file before the last reload catches up when it is ready. */
  #reloads = 0;
  #lastReload: ToWorker | undefined;
  /** When each live worker was forked (a dead worker's entry goes with it), for the restart back-off. */
  readonly #forkedAt = new WeakMap<Worker, number>();

  constructor(options: PoolOptions) {
    this.#options = options;
  }

  /** Pids of the workers that are listening now. */
  get pids(): number[] {
    return [...this.#ready].map((w) => w.process.pid ?? 0);
  }

  /**
   * Forks every worker and resolves once all listen. A worker that exits before it listens at
   * start (a plugin that fails to load, a port in use) fails the start: the caller stops the rest.
   */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      let started = false;
      cluster.on('message', (worker, message) => {
        if (!isToPrimary(message) || message.sy !== 'ready') return;
        this.#ready.add(worker);
        if ((this.#forkedAt.get(worker) ?? 0) < this.#reloads && this.#lastReload) worker.send(this.#lastReload, () => undefined);
        this.#options.onReady?.(worker, message);
        if (!started && this.#ready.size === this.#options.size) {
          started = true;
          resolve();
        }
      });
      cluster.on('exit', (worker, code, signal) => {
        const wasReady = this.#ready.delete(worker);
        if (this.#stopping) return;
        const how = signal ? `signal ${signal}` : `code ${code}`;
        if (!started) {
          reject(new Error(`worker ${worker.id} (pid ${worker.process.pid}) exited with ${how} before it was listening`));
          return;
        }
        const delay = this.#backoff.next(Date.now());
        this.#options.log.error(
          { worker: worker.id, pid: worker.process.pid, code, signal, restartInMs: delay },
          `worker ${worker.id} (pid ${worker.process.pid}) ${wasReady ? 'died' : 'failed to start'} (${how}); starting a replacement in ${delay} ms`,
        );
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          if (!this.#stopping) this.#fork();
        }, delay);
        this.#timers.add(timer);
      });
      for (let i = 0; i < this.#options.size; i++) this.#fork();
    });
  }

  #fork(): void {
    this.#forkedAt.set(cluster.fork(), this.#reloads);
  }

  /** Every worker listening reloads; one still starting does when it is ready (see #forkedAt). */
  reload(trigger: string): void {
    this.#reloads++;
    this.#lastReload = { sy: 'reload', trigger };
    for (const worker of this.#ready) worker.send(this.#lastReload, () => undefined);
  }

  /**
   * Asks every worker to shut down gracefully and resolves when all have exited: 0 when each
   * that was serving exited 0 (one still starting is stopped by a signal). One still running
   * `deadlineMs` later is killed.
   */
  stop(deadlineMs: number): Promise<number> {
    this.#stopping = true;
    for (const timer of this.#timers) clearTimeout(timer);
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    let code = 0;
    const exits = workers.map(
      (worker) =>
        new Promise<void>((resolve) => {
          const serving = this.#ready.has(worker);
          worker.once('exit', (exitCode, signal) => {
            if (serving && (exitCode !== 0 || signal)) code = 1;
            resolve();
          });
        }),
    );
    // A worker still starting may not listen to messages yet; a signal reaches it either way.
    for (const worker of workers) {
      if (this.#ready.has(worker) && worker.isConnected()) worker.send({ sy: 'shutdown' }, () => undefined);
      else worker.process.kill('SIGTERM');
    }
    const kill = setTimeout(() => {
      for (const worker of workers) if (!worker.isDead()) worker.process.kill('SIGKILL');
    }, deadlineMs);
    return Promise.all(exits).then(() => {
      clearTimeout(kill);
      return code;
    });
  }
}
