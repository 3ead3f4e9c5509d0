/**
 * One cluster worker (`server.workers` > 1): a whole Gateway on the port the workers share,
 * minus what the primary does once for all of them: it watches the files and says when to
 * reload, and with `state.backend: memory` it holds the limits and spend (reached over IPC; with
 * Redis the worker connects itself). The worker shuts down gracefully (in-flight requests and
 * streams finish, the ledger is flushed) when the primary asks, on SIGTERM/SIGINT (a signal to
 * the process group reaches it too), or when the primary is gone (killed, crashed).
 */
import cluster from 'node:cluster';
import type { Gateway, GatewayOptions } from '../gateway.ts';
import { openState } from '../gateway.ts';
import { parseConfigFile } from '../config/load.ts';
import { createEngine } from '../governance/index.ts';
import { IpcStore, type IpcChannel } from '../governance/ipc-store.ts';
import { createLogger } from '../logger.ts';
import { startupBanner } from '../startup-banner.ts';
import { joinConsoleCluster } from '../console/cluster-link.ts';
import { WorkerConsole } from './console.ts';
import { isToWorker, type ToPrimary, type WatchList } from './messages.ts';
import { WorkerScrapes } from './metrics.ts';

/** Sends to the primary; a closed channel is reported by 'disconnect', not by a throw here. */
function toPrimary(message: unknown): void {
  if (process.connected) process.send?.(message, undefined, {}, () => undefined);
}

const primaryChannel: IpcChannel = {
  isOpen: () => process.connected,
  send: toPrimary,
  onMessage: (listener) => void process.on('message', listener),
  onClose: (listener) => void process.on('disconnect', listener),
};

const watchListOf = ({ watchList }: Gateway): WatchList => ({ files: [...watchList.files], folders: [...watchList.folders], known: Object.fromEntries(watchList.known) });

export class ClusterWorker {
  readonly id = cluster.worker?.id ?? 0;
  #gateway: Gateway | undefined;
  /** Asked for before the gateway was up: done as soon as it is. */
  #reloadWhenStarted: string | undefined;
  #stopWhenStarted: string | undefined;
  #stopping = false;
  readonly #scrapes = new WorkerScrapes();

  /** Listens at once: a reload or shutdown may be asked for while the gateway is still starting. */
  constructor() {
    joinConsoleCluster(new WorkerConsole(this.id));
    process.on('message', (message) => {
      if (!isToWorker(message)) return;
      if (message.sy === 'reload') this.#reload(message.trigger);
      else if (message.sy === 'shutdown') this.#stop('asked by the cluster primary');
    });
    // Node's cluster child exits at once when the channel to the primary closes, unless the worker
    // is marked as leaving on purpose (lib/internal/cluster/child.js, Node 20 and 24): its own
    // process 'disconnect' listener runs first and emits the worker's 'disconnect' just before
    // that check. Marking it there keeps the process alive for the drain below.
    cluster.worker?.once('disconnect', () => {
      if (cluster.worker) cluster.worker.exitedAfterDisconnect = true;
    });
    process.once('disconnect', () => this.#primaryGone());
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => this.#stop(signal));
    // The primary relays SIGHUP as a reload to every worker; a second one from here would double it.
    process.on('SIGHUP', () => undefined);
  }

  /** How this worker's Gateway differs from a lone process's. */
  async gatewayOptions(file: string): Promise<Partial<GatewayOptions>> {
    const parsed = await parseConfigFile(file).catch(() => undefined);
    // Read at start, as `workers` is: a reload keeps the deadline the worker started with.
    const timeoutMs = parsed?.config?.server.primaryTimeoutMs;
    return {
      watch: false,
      // Every log line says which worker wrote it (bound once, not per line).
      logger: parsed?.config ? createLogger(parsed.config.log).child({ worker: this.id }) : undefined,
      readiness: () => ({ worker: { id: this.id, pid: process.pid } }),
      openState: async (config, configDir, log, clock, ledger) => {
        if (config.backend !== 'memory') return openState(config, configDir, log, clock, ledger);
        // With a request ledger its rows answer the usage report: no usage records go to the primary.
        return createEngine(new IpcStore({ channel: primaryChannel, log, timeoutMs }), { log, now: clock ? () => clock.now() : undefined, leaseTtlMs: config.leaseTtlMs, usageRecords: !ledger });
      },
    };
  }

  started(gateway: Gateway): void {
    this.#gateway = gateway;
    if (gateway.metrics) this.#scrapes.serve(gateway.metrics);
    this.#send({ sy: 'ready', banner: startupBanner(gateway), watch: watchListOf(gateway) });
    if (this.#stopWhenStarted) this.#stop(this.#stopWhenStarted);
    else if (this.#reloadWhenStarted) this.#reload(this.#reloadWhenStarted);
  }

  #send(message: ToPrimary): void {
    toPrimary(message);
  }

  #reload(trigger: string): void {
    const gateway = this.#gateway;
    if (!gateway) {
      this.#reloadWhenStarted = trigger;
      return;
    }
    void gateway.reload(trigger).then((outcome) => this.#send({ sy: 'reloaded', ok: outcome.ok, generation: outcome.generation, watch: watchListOf(gateway) }));
  }

  /** Logged once: the requests it was answering are finished, not cut. */
  #primaryGone(): void {
    const log = this.#gateway?.log;
    if (!this.#stopping) log?.warn('the cluster primary is gone (killed or crashed): this worker finishes its in-flight requests, then exits');
    this.#stop('the cluster primary is gone');
  }

  #stop(reason: string): void {
    const gateway = this.#gateway;
    if (!gateway) {
      this.#stopWhenStarted = reason;
      return;
    }
    if (this.#stopping) return;
    this.#stopping = true;
    gateway.log.info({ reason }, 'shutting down: finishing in-flight requests');
    const exit = (code: number) => gateway.log.flush(() => process.exit(code));
    gateway.close().then(
      () => exit(0),
      () => exit(1),
    );
  }
}
