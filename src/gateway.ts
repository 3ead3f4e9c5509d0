/**
 * A running gateway: the current config generation plus the HTTP server in front of it.
 * A reload builds the next generation completely beside the current one and swaps one
 * reference; requests keep the generation they started on, and a retired generation releases
 * its providers once its last request has finished. Embeddable: tests and the CLI use it.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './server/app.ts';
import { buildRuntime, type Runtime } from './runtime/build.ts';
import { parseConfigFile, type ParsedConfig } from './config/load.ts';
import { parseConfigFileOffThread } from './config/parse-off-thread.ts';
import { ConfigError, formatIssue } from './config/issues.ts';
import { createLogger } from './logger.ts';
import type { Clock } from './runtime/clock.ts';
import { describeChangesInSteps, summarizeChanges } from './runtime/diff.ts';
import { stepDone, stepsStart } from './runtime/reload-steps.ts';
import { describeFileChanges, watchFiles, type Watcher } from './runtime/watch.ts';
import { SOURCE_FILE } from './plugins/load.ts';
import { GatewayError } from './errors.ts';
import type { Exchange } from './pipeline/exchange.ts';
import type { Protocol } from './ingress/protocol.ts';
import { PROTOCOLS } from './ingress/protocols.ts';
import { combineObservers, type GatewayObserver } from './pipeline/observer.ts';
import { createInstruments, type GatewayMetrics, type Instruments } from './observability/index.ts';
import { startMetricsListener, type MetricsListener } from './server/routes/metrics.ts';
import { systemClock } from './runtime/clock.ts';
import { RecentActivity } from './console/activity.ts';
import type { ConsoleSource } from './console/views.ts';
import { openStateBackend, type SpendSource, type StateBackend } from './governance/index.ts';
import { registerStateMetrics } from './governance/metrics.ts';
import { openLedger, registerLedgerMetrics, type RequestLedger } from './ledger/index.ts';
import { openResponseStore, type ResponseStore } from './responses-store/index.ts';
import { registerLockMetrics } from './runtime/sqlite-metrics.ts';
import type { GatewayConfig } from './config/types.ts';
import path from 'node:path';

export interface GatewayOptions {
  /** Path to gateway.yaml. */
  config: string;
  /** Override server.port / server.host from the file (0 = any free port). */
  port?: number;
  host?: string;
  env?: NodeJS.ProcessEnv;
  /** Defaults to a logger built from the file's `log:` section. */
  logger?: Logger;
  clock?: Clock;
  /** Reload when gateway.yaml, a `${file:...}` file or a plugin file loaded by path changes (the CLI turns it on). */
  watch?: boolean;
  /** Debounce for file changes, in ms (default 100). */
  watchDebounceMs?: number;
  /** Instruments that see every request (metrics, traces). */
  observers?: GatewayObserver[];
  /**
   * Ways in besides the built-in ones (src/ingress/protocols.ts), for tests and embedders. The
   * Protocol interface is the core's own and may change between minor versions.
   */
  protocols?: readonly Protocol[];
  /** Opens the limits/budgets/spend backend from `state:` (default openState; a cluster worker reaches its primary's). */
  openState?: OpenState;
  /** Extra fields for /readyz (a cluster worker says which one it is). */
  readiness?: () => Record<string, unknown>;
}

export interface WatchTarget {
  files: readonly string[];
  folders: readonly string[];
  /** Fingerprints of the config file and `${file:...}` files as last read. */
  known: ReadonlyMap<string, string>;
}

export interface ReloadOutcome {
  ok: boolean;
  /** The generation serving after the attempt. */
  generation: number;
  at: string;
  trigger: string;
  /** What changed (ok) or why it was rejected (file:line:col messages). */
  changes?: string;
  errors?: string[];
}

export class Gateway {
  readonly app: FastifyInstance;
  readonly log: Logger;
  /** http://host:port — clients use `${url}/v1` as their base URL. */
  url = '';
  /** The outcome of the last reload attempt, if any (shown at /readyz). */
  lastReload: ReloadOutcome | undefined;
  /** What the last load or reload attempt read: see `watchList`. */
  #watchList: WatchTarget;
  /** Where Prometheus scrapes (on the main port, or on `metrics.port`); undefined when metrics are off. */
  metricsUrl: string | undefined;
  #runtime: Runtime;
  readonly #options: GatewayOptions;
  readonly #observer: GatewayObserver;
  /** Metrics and traces: made once from the first config, they outlive generations. */
  readonly #instruments: Instruments;
  #metricsListener: MetricsListener | undefined;
  /** Limits, budgets and spend, shared by every generation (and, with Redis, every instance). */
  readonly state: StateBackend | undefined;
  /** The per-request books (`state.ledger`), opened once like the state backend; undefined when none is kept. */
  readonly ledger: RequestLedger | undefined;
  /** Stored Responses, in the state backend (restart-only, like `state:`); undefined when none are kept. */
  readonly responses: ResponseStore | undefined;
  #watcher: Watcher | undefined;
  /** The last reload asked for: reloads run one after another. */
  #reloading: Promise<unknown> = Promise.resolve();
  /** Generations replaced by a reload whose requests have not all finished yet. */
  readonly #retired = new Set<Runtime>();
  /** Chat requests in flight, to end their streams properly when the shutdown grace runs out. */
  readonly #live = new Set<Exchange>();
  /** Connections that have not sent a request yet: Node's close() does not count them idle. */
  readonly #fresh = new Set<Socket>();

  private constructor(
    runtime: Runtime,
    log: Logger,
    options: GatewayOptions,
    observer: GatewayObserver,
    instruments: Instruments,
    state: StateBackend | undefined,
    ledger: RequestLedger | undefined,
    consoleSource: ConsoleSource,
    responses: ResponseStore | undefined,
  ) {
    this.#runtime = runtime;
    this.#observer = observer;
    this.#instruments = instruments;
    this.state = state;
    this.ledger = ledger;
    this.responses = responses;
    this.log = log;
    this.#options = options;
    this.#watchList = { files: runtime.files, folders: runtime.pluginFolders, known: runtime.inputs };
    this.app = buildApp({
      getRuntime: () => this.#runtime,
      protocols: options.protocols && [...PROTOCOLS, ...options.protocols],
      onRequestStart: (ctx) => this.#live.add(ctx),
      onRequestDone: (r, ctx) => this.#requestDone(r, ctx),
      log,
      observer,
      console: consoleSource,
      state,
      ledger,
      responses,
      metricsEndpoint: instruments.metrics && runtime.config.metrics.port === undefined ? { metrics: instruments.metrics, path: runtime.config.metrics.path } : undefined,
      bodyLimit: runtime.bodyLimit,
      inFlightBodyLimit: runtime.inFlightBodyLimit,
      headersTimeoutMs: runtime.config.server.headersTimeoutMs,
      requestTimeoutMs: runtime.config.server.requestTimeoutMs,
      readiness: () => ({ ...options.readiness?.(), ...(this.lastReload ? { lastReload: this.lastReload } : {}) }),
    });
    const fresh = this.#fresh;
    this.app.server.on('connection', (socket: Socket) => {
      fresh.add(socket);
      socket.once('close', () => fresh.delete(socket));
    });
    this.app.server.on('request', (req: IncomingMessage) => fresh.delete(req.socket));
  }

  /** The config generation serving new requests. */
  get runtime(): Runtime {
    return this.#runtime;
  }

  /** The Prometheus metrics; undefined when `metrics.enabled: false`. */
  get metrics(): GatewayMetrics | undefined {
    return this.#instruments.metrics;
  }

  /**
   * The files the last load or reload attempt read (a rejected one's too, so a secret file it
   * names is watched) and their fingerprints as read: what a watcher watches (src/runtime/watch.ts).
   */
  get watchList(): WatchTarget {
    return this.#watchList;
  }

  static async start(options: GatewayOptions): Promise<Gateway> {
    const parsed = await parseConfigFile(options.config, options.env);
    const log = options.logger ?? createLogger(parsed.config?.log ?? { level: 'info', format: 'auto' });
    let gateway: Gateway | undefined;
    const instruments = await createInstruments(parsed.config, {
      env: options.env ?? process.env,
      log,
      clock: options.clock ?? systemClock,
      runtime: () => gateway?.runtime,
      state: () => gateway?.state,
    });
    // The per-request books: an observer of each request's end, opened once from the first config's `state.ledger`.
    const ledger = parsed.config ? await openLedger(parsed.config.state, parsed.configDir, log) : undefined;
    if (ledger && instruments.metrics) registerLedgerMetrics(instruments.metrics.registry, ledger);
    // The console's recent activity (src/console): an observer like the metrics, handed to the console's routes.
    const activity = new RecentActivity();
    const observer = combineObservers([...instruments.observers, activity, ...(ledger ? [ledger] : []), ...(options.observers ?? [])], (err) => log.warn({ err }, 'an observer failed'));
    const consoleSource: ConsoleSource = { activity, env: options.env ?? process.env, now: () => (options.clock ?? systemClock).now() };
    // Live counters outlive config generations: opened once, from the first config's `state:`.
    let state: StateBackend | undefined;
    let runtime: Runtime;
    let responses: ResponseStore | undefined;
    try {
      state = parsed.config ? await (options.openState ?? openState)(parsed.config.state, parsed.configDir, log, options.clock, ledger) : undefined;
      responses = parsed.config ? await openResponses(parsed.config.state, parsed.configDir, log) : undefined;
      if (state && instruments.metrics) registerStateMetrics(instruments.metrics.registry, state);
      if (instruments.metrics) registerLockMetrics(instruments.metrics.registry, { state: () => state?.lockStats?.(), responses: () => responses?.lockStats() });
      runtime = await buildRuntime(parsed, { generation: 1, log, env: options.env, clock: options.clock, observer, state, selfUrl: () => gateway?.url });
    } catch (err) {
      await responses?.close();
      await state?.close();
      await ledger?.close();
      throw err;
    }
    gateway = new Gateway(runtime, log, options, observer, instruments, state, ledger, consoleSource, responses);
    for (const w of runtime.warnings) log.warn({ file: w.file, line: w.line, col: w.col, path: w.path }, `config warning: ${w.message}`);
    const host = options.host ?? runtime.config.server.host;
    const port = options.port ?? runtime.config.server.port;
    await gateway.app.listen({ host, port });
    const address = gateway.app.server.address();
    const actualPort = typeof address === 'object' && address ? address.port : port;
    const shownHost = host.includes(':') ? `[${host}]` : host;
    gateway.url = `http://${shownHost}:${actualPort}`;
    try {
      await gateway.#serveMetrics(host);
    } catch (err) {
      await gateway.close(0);
      throw err;
    }
    if (options.watch) gateway.#watch();
    return gateway;
  }

  /**
   * Builds a new generation from the config file and swaps it in. On any error (file, schema,
   * plugin load or start) nothing changes: the current generation keeps serving and the
   * outcome says why. Reloads run one at a time.
   */
  reload(trigger = 'api'): Promise<ReloadOutcome> {
    const next = this.#reloading.then(
      () => this.#reload(trigger),
      () => this.#reload(trigger),
    );
    this.#reloading = next;
    return next;
  }

  async #reload(trigger: string): Promise<ReloadOutcome> {
    const current = this.#runtime;
    const at = new Date().toISOString();
    let next: Runtime;
    let parsed: ParsedConfig | undefined;
    try {
      // Parsed on a worker thread: a 10,000-key file is seconds of CPU that requests must not wait behind.
      stepsStart();
      parsed = await parseConfigFileOffThread(this.#options.config, this.#options.env);
      stepDone('snapshot to ParsedConfig');
      next = await buildRuntime(parsed, {
        generation: current.generation + 1,
        selfUrl: () => this.url,
        log: this.log,
        env: this.#options.env,
        clock: this.#options.clock,
        previous: current,
        observer: this.#observer,
        state: this.state,
      });
    } catch (err) {
      const errors = err instanceof ConfigError ? err.issues.filter((i) => i.severity === 'error').map(formatIssue) : [String((err as Error)?.message ?? err)];
      this.lastReload = { ok: false, generation: current.generation, at, trigger, errors };
      this.#instruments.reloaded(false);
      this.log.error({ trigger, errors, generation: current.generation }, `reload rejected, still serving generation ${current.generation}:\n  ${errors.join('\n  ')}`);
      if (parsed) this.#watchAlso(parsed);
      return this.lastReload;
    }
    this.#runtime = next;
    stepDone('swap');
    // The diff walks every key: after the swap and the requests that queued meanwhile, then (many
    // keys) a slice at a time between requests.
    await new Promise((resolve) => setImmediate(resolve));
    const changes = await describeChangesInSteps(current.config, next.config, next.changedPluginFiles);
    const summary = summarizeChanges(changes);
    stepDone('diff: the rest');
    this.lastReload = { ok: true, generation: next.generation, at, trigger, changes: summary };
    this.#instruments.reloaded(true);
    this.log.info({ trigger, generation: next.generation, changes }, `reloaded ${next.file} (generation ${next.generation}): ${summary}`);
    if (changes.needsRestart.length) this.log.warn({ settings: changes.needsRestart }, `changed settings that take effect only after a restart: ${changes.needsRestart.join(', ')}`);
    for (const w of next.warnings) this.log.warn({ file: w.file, line: w.line, col: w.col, path: w.path }, `config warning: ${w.message}`);
    this.#retire(current);
    this.#watchList = { files: next.files, folders: next.pluginFolders, known: next.inputs };
    this.#watcher?.update(next.files, next.pluginFolders);
    this.#watcher?.adopt(next.inputs);
    stepDone('log, retire, watch');
    return this.lastReload;
  }

  /** Metrics on the main port, or on a listener of their own (`metrics.port`, same host). */
  async #serveMetrics(host: string): Promise<void> {
    const metrics = this.#instruments.metrics;
    const { path, port } = this.#runtime.config.metrics;
    if (!metrics) return;
    if (port !== undefined) this.#metricsListener = await startMetricsListener({ metrics, path }, { host, port, getRuntime: () => this.#runtime });
    this.metricsUrl = `${this.#metricsListener?.url ?? this.url}${path}`;
  }

  #retire(runtime: Runtime): void {
    if (runtime.lifecycle.inFlight === 0) void runtime.close();
    else this.#retired.add(runtime);
  }

  #requestDone(runtime: Runtime, x: Exchange): void {
    this.#live.delete(x);
    if (runtime.lifecycle.inFlight === 0 && this.#retired.delete(runtime)) void runtime.close();
  }

  /** After a rejected reload: what it read is watched too, a secret file it names may appear next. */
  #watchAlso(parsed: ParsedConfig): void {
    const { files, folders } = this.watchList;
    this.#watchList = { files: [...new Set([...files, ...parsed.inputs.keys()])], folders, known: parsed.inputs };
    this.#watcher?.update(this.watchList.files, folders);
    this.#watcher?.adopt(parsed.inputs);
  }

  #watch(): void {
    const { files, folders, known } = this.watchList;
    this.#watcher = watchFiles(files, {
      known,
      debounceMs: this.#options.watchDebounceMs,
      folders,
      folderFilter: SOURCE_FILE,
      onChange: (changes) => {
        const trigger = describeFileChanges(changes);
        this.log.info({ changes }, `noticed ${trigger}: reloading`);
        void this.reload(trigger);
      },
      onUnchanged: () => this.log.info('a watched folder changed but no watched file did (same content): not reloading'),
    });
  }

  /**
   * Graceful shutdown: stop accepting, let in-flight requests (streams included) finish, close
   * keep-alive connections as they fall idle. Streams still running after `graceMs` (default
   * `server.shutdownGraceMs`) end with an in-stream `shutting_down` error and [DONE]; whatever
   * is left a moment later is cut.
   */
  async close(graceMs = this.#runtime.config.server.shutdownGraceMs): Promise<void> {
    this.#watcher?.close();
    this.#watcher = undefined;
    const server = this.app.server;
    // Node closes idle connections once, when close() starts; one busy then would otherwise
    // linger for the keep-alive timeout after its request ends.
    const reaper = setInterval(() => {
      server.closeIdleConnections();
      for (const socket of this.#fresh) socket.destroy();
    }, 50);
    let cut: NodeJS.Timeout | undefined;
    const deadline = setTimeout(() => {
      const reason = new GatewayError('shutting_down', `The gateway is shutting down; this answer was ended after the ${graceMs} ms grace period.`);
      for (const x of this.#live) x.attempt?.interrupt(reason);
      cut = setTimeout(() => server.closeAllConnections(), 250);
    }, graceMs);
    try {
      await this.app.close();
    } finally {
      clearInterval(reaper);
      clearTimeout(deadline);
      clearTimeout(cut);
    }
    await this.#reloading.catch(() => undefined);
    await Promise.all([...this.#retired].map((r) => r.close()));
    this.#retired.clear();
    await this.#runtime.close();
    await this.#metricsListener?.close();
    await this.#instruments.close();
    // After the last request ended: the queue holds every row, and close writes it.
    await this.ledger?.close();
    await this.responses?.close();
    await this.state?.close();
  }
}

export type OpenState = (config: GatewayConfig['state'], configDir: string, log: Logger, clock: Clock | undefined, ledger?: SpendSource) => Promise<StateBackend>;

/** Stored Responses in the configured state backend: the memory backend's state file, or Redis. */
function openResponses(config: GatewayConfig['state'], configDir: string, log: Logger): Promise<ResponseStore | undefined> {
  const file = config.backend === 'memory' ? path.resolve(configDir, config.file) : undefined;
  return openResponseStore({ backend: config.backend, redis: config.redis, file, responses: config.responses }, log);
}

/** The configured state backend; a memory store keeps spend and usage in a file beside gateway.yaml. */
export function openState(config: GatewayConfig['state'], configDir: string, log: Logger, clock: Clock | undefined, ledger?: SpendSource): Promise<StateBackend> {
  const file = config.backend === 'memory' ? path.resolve(configDir, config.file) : undefined;
  return openStateBackend({ backend: config.backend, redis: config.redis, file, spend: ledger }, { log, now: clock ? () => clock.now() : undefined, leaseTtlMs: config.leaseTtlMs });
}
