/**
 * `state.backend: redis`: counters shared by every gateway instance using the same Redis, one
 * Lua script per operation (redis-lua.ts), run with EVALSHA through ioredis's defineCommand
 * (EVAL once after a restart flushed the script cache).
 *
 * Failing fast matters more than waiting: an admission waits at most `commandTimeoutMs`, no
 * command is queued while disconnected, and none is resent after a reconnect (a resent
 * admission would reserve twice). Failures become StateUnavailableError for the engine;
 * ioredis reconnects on its own, and the change is logged once each way (availability.ts).
 */
import { Redis } from 'ioredis';
import { Availability } from './availability.ts';
import { dayRange } from './periods.ts';
import { ADMIT_LUA, FIGURES_LUA, REBUILD_LUA, RENEW_LUA, SETTLE_LUA } from './redis-lua.ts';
import { persistenceWarning } from './redis-persistence.ts';
import { SentinelWatch, type RecoveryCounts, type SpendSource } from './redis-recovery.ts';
import { WINDOW_MS, type RawAdmit, type RawAdmitResult, type RawFigures, type RawRenew, type RawScope, type RawSettle, type RawViolation, type ScopeStore, type UsageRow } from './store.ts';
import { StateUnavailableError, type GovernanceLogger } from './types.ts';

export interface RedisStoreOptions {
  url: string;
  /** Prepended to every key; `{name}:` (a hash tag) keeps all keys in one Cluster slot. */
  prefix?: string;
  log: GovernanceLogger;
  /** Longest wait for one command before the store counts as unavailable. */
  commandTimeoutMs?: number;
  /** Longest wait for the first connection in open(). */
  connectTimeoutMs?: number;
  /** The request ledger, to rebuild period spend from when Redis loses its data. */
  spend?: SpendSource;
  /** How often the sentinel and the server's run_id are checked (ms). */
  checkEveryMs?: number;
}

type Arg = string | number;

interface Scripts {
  switchyardAdmit(...args: Arg[]): Promise<string[]>;
  switchyardSettle(...args: Arg[]): Promise<number>;
  switchyardRenew(...args: Arg[]): Promise<number>;
  switchyardFigures(...args: Arg[]): Promise<string[]>;
  switchyardRebuild(...args: Arg[]): Promise<number>;
}

/** An admitted request's marker lives this long unsettled (a crashed instance's requests are forgotten after it). */
const OPEN_REQUEST_TTL_MS = 86_400_000;
/** A settlement booked outside its reservation is booked once if replayed within this long. */
const SETTLED_MARKER_TTL_MS = 86_400_000;

/** Reconnect after 100 ms, doubling to at most 2 s, forever: the store comes back by itself. */
const reconnectDelay = (attempt: number): number => Math.min(50 * 2 ** Math.min(attempt, 6), 2_000);

/** Replies that mean "not now" (memory full, a slow script, loading, a replica after failover). */
const TRANSIENT_REPLY = /^(OOM|BUSY|LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|NOREPLICAS)\b/;
const isReplyError = (err: unknown): err is Error => err instanceof Error && err.name === 'ReplyError';

const FIGURES = 7;
const VIOLATION = 6;

export class RedisStore implements ScopeStore {
  readonly #redis: Redis & Scripts;
  readonly #prefix: string;
  readonly #availability: Availability;
  readonly #watch: SentinelWatch;
  /** The counters' epoch each open admission was reserved under (sent back with its settlement). */
  readonly #epochs = new Map<string, string>();
  #closing = false;
  #persistenceChecked = false;

  private constructor(options: RedisStoreOptions) {
    this.#prefix = options.prefix ?? 'switchyard:';
    this.#availability = new Availability(options.log, 'redis');
    const redis = new Redis(options.url, {
      commandTimeout: options.commandTimeoutMs ?? 1_000,
      connectTimeout: options.connectTimeoutMs ?? 2_000,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      retryStrategy: reconnectDelay,
      lazyConnect: true,
    });
    redis.defineCommand('switchyardAdmit', { numberOfKeys: 0, lua: ADMIT_LUA });
    redis.defineCommand('switchyardSettle', { numberOfKeys: 0, lua: SETTLE_LUA });
    redis.defineCommand('switchyardRenew', { numberOfKeys: 0, lua: RENEW_LUA });
    redis.defineCommand('switchyardFigures', { numberOfKeys: 0, lua: FIGURES_LUA });
    redis.defineCommand('switchyardRebuild', { numberOfKeys: 0, lua: REBUILD_LUA });
    // Without an 'error' listener, a refused connection would be an unhandled 'error' event: a crash.
    redis.on('error', (err: Error) => this.#availability.markDown(err));
    redis.on('close', () => {
      if (!this.#closing) this.#availability.markDown(new Error('connection closed'));
    });
    redis.on('ready', () => {
      this.#availability.markUp();
      // A reconnect may follow a restart that emptied Redis: look at once, not at the next tick.
      void this.#watch.check();
      if (!this.#persistenceChecked) {
        this.#persistenceChecked = true;
        void persistenceWarning(redis).then((warning) => warning && options.log.warn({ stateBackend: 'redis' }, warning));
      }
    });
    this.#redis = redis as Redis & Scripts;
    this.#watch = new SentinelWatch(this.#redis, { prefix: this.#prefix, log: options.log, spend: options.spend, checkEveryMs: options.checkEveryMs });
    this.#watch.start();
  }

  /** Data losses seen and rebuilds made by this instance. */
  get recovery(): RecoveryCounts {
    return this.#watch.counts;
  }

  /** Connects, waiting at most the connect timeout; never rejects (a store that is down now reconnects later). */
  static async open(options: RedisStoreOptions): Promise<RedisStore> {
    const store = new RedisStore(options);
    await store.#redis.connect().catch((err: unknown) => store.#availability.markDown(err));
    return store;
  }

  async #run<T>(command: () => Promise<T>): Promise<T> {
    if (this.#redis.status !== 'ready') throw new StateUnavailableError(`redis is ${this.#redis.status}`, { maybeApplied: false });
    try {
      const result = await command();
      this.#availability.markUp();
      return result;
    } catch (err) {
      // Redis answered with an error that is not about its state: a script bug, not an outage.
      if (isReplyError(err) && !TRANSIENT_REPLY.test(err.message)) throw err;
      this.#availability.markDown(err);
      throw new StateUnavailableError(`redis: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }

  async admit(request: RawAdmit): Promise<RawAdmitResult> {
    const args: Arg[] = [this.#prefix, request.id, request.now ?? '', request.tokens, request.costNano, request.leaseTtlMs, WINDOW_MS, OPEN_REQUEST_TTL_MS, request.scopes.length];
    for (const s of request.scopes) args.push(s.name, s.rpm ?? '', s.tpm ?? '', s.concurrency ?? '', s.budgetNano ?? '', s.period);
    const reply = await this.#run(() => this.#redis.switchyardAdmit(...args));
    if (reply[0] === 'lost') throw this.#lost();
    const epoch = reply[reply.length - 1] ?? '';
    this.#watch.saw(epoch);
    if (reply[0] === '1') this.#epochs.set(request.id, epoch);
    const n = Number(reply[2]);
    const figures = Array.from({ length: n }, (_, i) => figuresAt(reply, 3 + i * FIGURES));
    const violations: RawViolation[] = [];
    const m = Number(reply[3 + n * FIGURES]);
    for (let j = 0, o = 4 + n * FIGURES; j < m; j++, o += VIOLATION) {
      violations.push({
        scope: Number(reply[o]),
        kind: reply[o + 1] as RawViolation['kind'],
        used: Number(reply[o + 2]),
        limit: Number(reply[o + 3]),
        retryAt: orNull(reply[o + 4]),
        final: reply[o + 5] === '1',
      });
    }
    return { admitted: reply[0] === '1', now: Number(reply[1]), figures, violations };
  }

  async settle(s: RawSettle): Promise<void> {
    const args: Arg[] = [this.#prefix, s.id, s.at, s.reserved ? 1 : 0, s.final ? 1 : 0, s.tokens, s.costNano ?? '', s.scopes.length, ...s.scopes];
    const u = s.usage;
    if (s.labels) args.push(s.labels.key, s.labels.team ?? '', s.labels.model, u.input, u.cachedInput, u.cacheWrite, u.output);
    else args.push('', '', '', 0, 0, 0, 0);
    const epoch = this.#epochs.get(s.id) ?? this.#watch.epoch;
    args.push(s.mark ? 1 : 0, epoch, s.endedAt ?? Date.now(), SETTLED_MARKER_TTL_MS);
    if ((await this.#run(() => this.#redis.switchyardSettle(...args))) === -1) throw this.#lost();
    if (s.final) this.#epochs.delete(s.id);
  }

  /** The counters are gone: nothing budgeted is admitted or booked until they are rebuilt (started now). */
  #lost(): StateUnavailableError {
    void this.#watch.check();
    return new StateUnavailableError('redis lost its counters; they are being rebuilt', { maybeApplied: false });
  }

  async renew(renewal: RawRenew): Promise<void> {
    if (renewal.leases.length === 0) return;
    const args: Arg[] = [this.#prefix, renewal.now ?? '', renewal.leaseTtlMs, OPEN_REQUEST_TTL_MS, renewal.leases.length];
    for (const lease of renewal.leases) args.push(lease.id, lease.scopes.length, ...lease.scopes);
    await this.#run(() => this.#redis.switchyardRenew(...args));
  }

  async figures(scopes: RawScope[], now?: number): Promise<{ now: number; figures: RawFigures[] }> {
    const args: Arg[] = [this.#prefix, now ?? '', WINDOW_MS, scopes.length];
    for (const s of scopes) args.push(s.name, s.period);
    const reply = await this.#run(() => this.#redis.switchyardFigures(...args));
    return { now: Number(reply[0]), figures: scopes.map((_, i) => figuresAt(reply, 1 + i * FIGURES)) };
  }

  async usageRows(fromDay: string, toDay: string): Promise<UsageRow[]> {
    const days = dayRange(fromDay, toDay);
    const replies = await this.#run(async () => {
      const pipeline = this.#redis.pipeline();
      for (const day of days) pipeline.hgetall(`${this.#prefix}usage:${day}`);
      const results = (await pipeline.exec()) ?? [];
      const failed = results.find(([err]) => err);
      if (failed) throw failed[0];
      return results.map(([, hash]) => hash as Record<string, string>);
    });
    return days.flatMap((day, i) => rowsOf(day, replies[i] ?? {}));
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#watch.stop();
    await this.#redis.quit().catch(() => undefined);
    this.#redis.disconnect();
  }
}

function orNull(value: string | undefined): number | null {
  return value === undefined || value === '' ? null : Number(value);
}

function figuresAt(reply: string[], o: number): RawFigures {
  return {
    requests: Number(reply[o]),
    requestsNewest: orNull(reply[o + 1]),
    tokens: Number(reply[o + 2]),
    tokensNewest: orNull(reply[o + 3]),
    inFlight: Number(reply[o + 4]),
    reservedNano: Number(reply[o + 5]),
    spentNano: Number(reply[o + 6]),
  };
}

const METRICS = ['requests', 'input', 'cachedInput', 'cacheWrite', 'output', 'costNano', 'priced'] as const;
type Metric = (typeof METRICS)[number];
const isMetric = (name: string): name is Metric => (METRICS as readonly string[]).includes(name);

/** One day's hash (`key \x1f team \x1f model \x1f metric` → count) as rows. */
function rowsOf(day: string, hash: Record<string, string>): UsageRow[] {
  const rows = new Map<string, UsageRow>();
  for (const [field, value] of Object.entries(hash)) {
    const [key = '', team = '', model = '', metric = ''] = field.split('\x1f');
    if (!isMetric(metric)) continue;
    const id = `${key}\x1f${team}\x1f${model}`;
    let row = rows.get(id);
    if (!row) rows.set(id, (row = { day, key, team, model, requests: 0, input: 0, cachedInput: 0, cacheWrite: 0, output: 0, costNano: 0, priced: 0 }));
    row[metric] = Number(value);
  }
  return [...rows.values()];
}
