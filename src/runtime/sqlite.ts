/**
 * What every SQLite user on the serving thread shares (the state file, the ledger, stored
 * responses): node:sqlite is synchronous, so a lock held by another process must never be
 * waited for here. A short busy timeout, then the caller's own retry (a queue, a later flush).
 */
import type { DatabaseSync } from 'node:sqlite';

/** How long one statement may wait for another connection's write lock: the most a lock can stall a request. */
export const BUSY_TIMEOUT_MS = 5;

/** Runs `fn` as one write transaction: all of it is on disk, or none of it. */
export function inTransaction<T>(db: DatabaseSync, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = fn();
    db.exec('COMMIT');
    return result;
  } catch (err) {
    // BEGIN may have failed itself (busy): then there is nothing to roll back.
    if (db.isTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/** SQLITE_BUSY / SQLITE_LOCKED (and their extended codes): another connection holds the lock. */
export function isLocked(err: unknown): boolean {
  const code = (err as { errcode?: number })?.errcode;
  return typeof code === 'number' && ((code & 0xff) === 5 || (code & 0xff) === 6);
}

/** What a LockWatch saw, for metrics: writes that found the file locked, the time they waited, whether it is locked now. */
export interface LockStats {
  busy: number;
  waitedSeconds: number;
  locked: boolean;
}

/**
 * One log line per transition (locked, then unlocked), not one per failed write; counts for
 * metrics. With `waitsOut`, its owner waits a lock out first: a failed write is counted, and
 * logged only when the owner calls it an outage.
 */
export class LockWatch {
  readonly #what: string;
  readonly #log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  readonly #waitsOut: boolean;
  #since: number | undefined;
  #logged = false;
  /** Times a write found the file locked (a metric's source). */
  busy = 0;
  /** Seconds those writes waited for the lock before giving up (at most the busy timeout each). */
  waitedSeconds = 0;

  constructor(what: string, log: LockWatch['log'], waitsOut = false) {
    this.#what = what;
    this.#log = log;
    this.#waitsOut = waitsOut;
  }

  get log(): { warn(obj: object, msg: string): void; info(obj: object, msg: string): void } {
    return this.#log;
  }

  get locked(): boolean {
    return this.#since !== undefined;
  }

  get stats(): LockStats {
    return { busy: this.busy, waitedSeconds: this.waitedSeconds, locked: this.locked };
  }

  /** A write failed after `waitedMs` (from its start): counted when the file was locked. */
  failed(err: unknown, waitedMs = 0): void {
    if (!isLocked(err)) return;
    this.busy++;
    this.waitedSeconds += waitedMs / 1000;
    this.#since ??= Date.now();
    if (!this.#waitsOut) this.outage();
  }

  /** The lock outlasted its owner's wait: logged once, until a write passes. */
  outage(): void {
    if (this.#logged || this.#since === undefined) return;
    this.#logged = true;
    this.#log.warn({ file: this.#what }, `${this.#what} is locked by another process: writes are kept and retried, requests do not wait for it`);
  }

  succeeded(): void {
    if (this.#since === undefined) return;
    const lockedMs = Date.now() - this.#since;
    this.#since = undefined;
    if (!this.#logged) return;
    this.#logged = false;
    this.#log.info({ file: this.#what, lockedMs }, `${this.#what} is writable again after ${lockedMs} ms`);
  }
}
