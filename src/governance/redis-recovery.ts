/**
 * Redis as a counter that can be rebuilt. A sentinel key, written once the counters are known
 * whole, tells this fleet's instances that Redis still holds what they booked: when it is gone
 * (FLUSHALL, a restart without persistence, eviction), the admission script refuses budgeted
 * requests (the caller applies `onUnavailable`) and the settle script refuses to book, until
 * one instance, holding a lock key (SET NX PX), has rebuilt period spend from the request
 * ledger and written a new sentinel. Checked at start, every `checkEveryMs` (with the server's
 * run_id, to name a restart), on every reconnect, and whenever a script finds the sentinel gone.
 *
 * The sentinel is `writer|epoch|cut`: leases admitted under another epoch lost their
 * reservation and are booked in full when settled, and settlements that ended before `cut`
 * (epoch ms) are in the ledger's rows the rebuild summed, so they are not booked again.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { GovernanceLogger } from './types.ts';

/** Where the spend to rebuild comes from: the request ledger (src/ledger), when one is kept. */
export interface SpendSource {
  /**
   * Nano-USD booked per scope (`key:…`, `team:…`) and period id, for the periods containing
   * `at`, from every row written by then (after writing this instance's queued rows).
   */
  periodSpend(at: number): Promise<Array<{ scope: string; period: string; nano: number }>>;
  /** How long a row may wait in another instance's queue before it is written (ms). */
  readonly flushMs: number;
}

/** The Redis commands the watch needs (the store's client). */
export interface SentinelClient {
  get(key: string): Promise<string | null>;
  info(section: 'server'): Promise<string>;
  set(key: string, value: string, px: 'PX', ms: number, nx: 'NX'): Promise<'OK' | null>;
  del(key: string): Promise<number>;
  switchyardRebuild(...args: Array<string | number>): Promise<number>;
}

export interface SentinelWatchOptions {
  prefix: string;
  log: GovernanceLogger;
  spend?: SpendSource;
  checkEveryMs?: number;
  /** A rebuilding instance that dies frees the lock after this long. */
  lockTtlMs?: number;
}

export interface RecoveryCounts {
  /** Times this instance found the sentinel gone after having seen it (Redis lost its data). */
  dataLosses: number;
  /** Rebuilds this instance made (the one holding the lock). */
  rebuilds: number;
}

/** Names shown in the rebuild's log line; the rest are counted. */
const SHOWN = 20;

export class SentinelWatch {
  readonly #redis: SentinelClient;
  readonly #options: SentinelWatchOptions;
  readonly #writer = `${hostname()}:${process.pid}`;
  #epoch: string | undefined;
  #runId: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #checking: Promise<void> | undefined;
  readonly counts: RecoveryCounts = { dataLosses: 0, rebuilds: 0 };

  constructor(redis: SentinelClient, options: SentinelWatchOptions) {
    this.#redis = redis;
    this.#options = options;
  }

  /** The epoch of the counters as last seen ('' before the first check): what an admission is reserved under. */
  get epoch(): string {
    return this.#epoch ?? '';
  }

  /** Updates the epoch an admission reported (the script read the sentinel). */
  saw(epoch: string): void {
    if (epoch) this.#epoch = epoch;
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.check(), this.#options.checkEveryMs ?? 2_000).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One check at a time; never rejects (Redis down is the availability's business). */
  check(): Promise<void> {
    this.#checking ??= this.#check()
      .catch(() => undefined)
      .finally(() => (this.#checking = undefined));
    return this.#checking;
  }

  async #check(): Promise<void> {
    const [value, info] = await Promise.all([this.#redis.get(this.#key('sentinel')), this.#redis.info('server')]);
    const runId = /run_id:(\w+)/.exec(info)?.[1];
    const restarted = this.#runId !== undefined && runId !== this.#runId;
    this.#runId = runId;
    if (value !== null) {
      if (restarted) this.#options.log.info({ stateBackend: 'redis' }, 'redis restarted and kept its data (the sentinel is there)');
      this.#epoch = value.split('|')[1] ?? '';
      return;
    }
    await this.#recover(restarted);
  }

  async #recover(restarted: boolean): Promise<void> {
    const seen = this.#epoch !== undefined;
    const lock = this.#key('rebuild-lock');
    if ((await this.#redis.set(lock, this.#writer, 'PX', this.#options.lockTtlMs ?? 30_000, 'NX')) !== 'OK') return; // another instance rebuilds
    const { log, spend } = this.#options;
    const cause = !seen ? 'no sentinel at start' : restarted ? 'redis restarted without its data' : 'the sentinel key disappeared (FLUSHALL, eviction or a restart without persistence)';
    if (seen) this.counts.dataLosses++;
    try {
      const cut = Date.now();
      let spent: Awaited<ReturnType<SpendSource['periodSpend']>> = [];
      if (spend) {
        // Rows of requests that ended before `cut` are written by every instance within flushMs.
        await sleep(spend.flushMs + 100);
        spent = await spend.periodSpend(cut);
      }
      const epoch = randomUUID().slice(0, 8);
      const args: Array<string | number> = [this.#options.prefix, `${this.#writer}|${epoch}|${spend ? cut : 0}`, spent.length];
      for (const s of spent) args.push(`${s.scope}:${s.period}`, s.nano);
      if ((await this.#redis.switchyardRebuild(...args)) === 0) return;
      this.#epoch = epoch;
      if (!spend) {
        if (seen) log.error({ stateBackend: 'redis', cause }, `redis lost its counters (${cause}) and no request ledger is kept (state.ledger): period spend of every key and team restarts from 0`);
        else
          log.warn(
            { stateBackend: 'redis' },
            'redis holds no switchyard sentinel at start (first use, or its data was lost while no gateway ran); without a request ledger (state.ledger) spend cannot be rebuilt',
          );
        return;
      }
      const totals = summarize(spent);
      if (seen || totals.keys.length + totals.teams.length > 0) {
        this.counts.rebuilds++;
        log.warn(
          {
            stateBackend: 'redis',
            cause,
            keys: totals.keys.slice(0, SHOWN),
            teams: totals.teams.slice(0, SHOWN),
            keyCount: totals.keys.length,
            teamCount: totals.teams.length,
            totalUsd: totals.totalUsd,
          },
          `redis counters rebuilt from the request ledger (${cause}): period spend of ${totals.keys.length} keys and ${totals.teams.length} teams, $${totals.totalUsd} in total`,
        );
      }
    } catch (err) {
      log.error(
        { stateBackend: 'redis', err: err instanceof Error ? err.message : String(err) },
        'redis counters could not be rebuilt yet (tried again at the next check); budgeted keys follow onUnavailable until they are',
      );
    } finally {
      await this.#redis.del(lock).catch(() => undefined);
    }
  }

  #key(name: string): string {
    return `${this.#options.prefix}${name}`;
  }
}

/** Key and team names with spend, and the all-time total of keys (each request once). */
function summarize(spent: Array<{ scope: string; period: string; nano: number }>): { keys: string[]; teams: string[]; totalUsd: number } {
  const keys = new Set<string>();
  const teams = new Set<string>();
  let nano = 0;
  for (const s of spent) {
    if (s.scope.startsWith('key:')) {
      keys.add(s.scope.slice(4));
      if (s.period === 'total') nano += s.nano;
    } else if (s.scope.startsWith('team:')) teams.add(s.scope.slice(5));
  }
  return { keys: [...keys], teams: [...teams], totalUsd: nano / 1e9 };
}
