/**
 * The cluster primary (`server.workers` > 1). It serves no request itself: Node's cluster module
 * hands the port's connections to the workers in turn. What it does once for all of them:
 * watches the config files and has every worker reload (each validates with the same code, so
 * all accept an edit or all reject it); relays SIGHUP the same way; with `state.backend: memory`
 * holds the one store of limits, budgets and spend and answers the workers' calls to it; replaces
 * a worker that dies; and on SIGTERM/SIGINT has every worker shut down gracefully, then exits.
 */
import type { Worker } from 'node:cluster';
import cluster from 'node:cluster';
import path from 'node:path';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/types.ts';
import { isStateCall } from '../governance/ipc-protocol.ts';
import { answerStateCall } from '../governance/ipc-server.ts';
import { openMemoryStore } from '../governance/index.ts';
import { SOURCE_FILE } from '../plugins/load.ts';
import { describeFileChanges, watchFiles, type Watcher } from '../runtime/watch.ts';
import type { StartupBanner } from '../startup-banner.ts';
import { gatherConsoles } from './console.ts';
import { isToPrimary, type WatchList } from './messages.ts';
import { ClusterScrapes } from './metrics.ts';
import { WorkerPool } from './pool.ts';

export interface PrimaryOptions {
  workers: number;
  /** The config the primary starts from (its `state`, `log` and shutdown grace; the workers read the file themselves). */
  config: GatewayConfig;
  configDir: string;
  /** Reload the workers when the files change (`--no-watch` turns it off). */
  watch: boolean;
  log: Logger;
}

/** Past the grace, a worker has this long to end its streams properly before it is killed. */
const KILL_AFTER_GRACE_MS = 5_000;

/** Starts the workers; resolves once all listen (true), or false when they could not start (the workers said why on stderr). */
export async function runPrimary(options: PrimaryOptions): Promise<boolean> {
  const { log, config } = options;
  // With the memory backend every worker's limits and spend go through this one store.
  const store = config.state.backend === 'memory' ? openMemoryStore({ path: path.resolve(options.configDir, config.state.file) }, log) : undefined;
  let banner: StartupBanner | undefined;
  let watched: WatchList | undefined;
  let watcher: Watcher | undefined;
  const pool = new WorkerPool({
    size: options.workers,
    log,
    onReady: (_worker, ready) => {
      banner ??= ready.banner;
      watched ??= ready.watch;
    },
  });

  const scrapes = config.metrics.enabled ? new ClusterScrapes() : undefined;
  gatherConsoles();
  cluster.on('message', (worker: Worker, message: unknown) => {
    if (store && isStateCall(message)) {
      void answerStateCall(store, message).then((reply) => worker.isConnected() && worker.send(reply, () => undefined));
      return;
    }
    if (isToPrimary(message) && message.sy === 'scrape') {
      scrapes?.answer(worker, message.id);
      return;
    }
    // A reload may have added or removed a plugin or secret file: watch what the workers now read.
    // The watcher keeps what it has seen, so a change made while the workers reloaded still counts.
    if (isToPrimary(message) && message.sy === 'reloaded') {
      watched = message.watch;
      watcher?.update(watched.files, watched.folders, new Map(Object.entries(watched.known)));
    }
  });

  const watch = () => {
    if (!watched) return;
    watcher = watchFiles(watched.files, {
      known: new Map(Object.entries(watched.known)),
      folders: watched.folders,
      folderFilter: SOURCE_FILE,
      onChange: (changes) => {
        const trigger = describeFileChanges(changes);
        log.info({ changes }, `noticed ${trigger}: reloading every worker`);
        pool.reload(trigger);
      },
      onUnchanged: () => log.info('a watched folder changed but no watched file did (same content): not reloading'),
    });
  };

  let stopping: Promise<number> | undefined;
  const stop = (reason: string) => {
    stopping ??= (async () => {
      log.info({ reason }, 'shutting down: every worker finishes its in-flight requests');
      watcher?.close();
      const code = await pool.stop(config.server.shutdownGraceMs + KILL_AFTER_GRACE_MS);
      await store?.close();
      return code;
    })();
    return stopping;
  };

  try {
    await pool.start();
  } catch (err) {
    log.error({ err: (err as Error).message }, `the workers could not start: ${(err as Error).message}`);
    await stop('a worker could not start');
    return false;
  }
  if (options.watch) watch();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => void stop(signal).then((code) => log.flush(() => process.exit(code))));
  }
  process.on('SIGHUP', () => pool.reload('SIGHUP'));
  log.info({ ...banner?.fields, workers: pool.pids }, `${banner?.headline} (${options.workers} workers)${banner?.details ?? ''}`);
  return true;
}
