/**
 * `state.backend: memory` in a cluster worker (`server.workers` > 1): every ScopeStore call goes
 * to the primary, which holds the one memory store all workers share (ipc-server.ts), so a key's
 * rpm, concurrency and budget are counted once however many workers serve it.
 *
 * It fails the way redis-store.ts does, so the engine above it degrades the same way: no primary
 * is StateUnavailableError before anything was sent (`maybeApplied: false`); no reply within the
 * timeout, or the primary gone while waiting, is one that may have been applied. Admissions then
 * follow `state.onUnavailable`, settlements are queued and replayed, and the change is logged
 * once each way (availability.ts).
 *
 * A settlement that holds no scope (a key without limits) only records usage, for reports: those
 * go together every USAGE_EVERY_MS, as the memory store writes them together anyway, so that a
 * request without limits costs no message to the primary.
 */
import { Availability } from './availability.ts';
import { isStateReply, type StateCall, type StateOp, type StateReply } from './ipc-protocol.ts';
import type { RawAdmit, RawAdmitResult, RawFigures, RawRenew, RawScope, RawSettle, ScopeStore, UsageRow } from './store.ts';
import { StateUnavailableError, type GovernanceLogger } from './types.ts';

/** The worker's end of the IPC channel to the primary (process in a cluster worker; a fake in tests). */
export interface IpcChannel {
  /** False once the primary is gone: nothing sent then would arrive. */
  isOpen(): boolean;
  send(message: StateCall): void;
  onMessage(listener: (message: unknown) => void): void;
  /** The channel closed: calls waiting for a reply will never get one. */
  onClose(listener: () => void): void;
}

export interface IpcStoreOptions {
  channel: IpcChannel;
  log: GovernanceLogger;
  /** Longest wait for a call on the request path (admit, settle, renew), as Redis's commandTimeout. */
  timeoutMs?: number;
  /** Longest wait for a report (figures, usage rows), which may read the whole SQLite file. */
  reportTimeoutMs?: number;
}

const USAGE_EVERY_MS = 100;
/** Usage records kept while the primary does not answer, as the engine's settle queue keeps settlements. */
const MAX_USAGE_KEPT = 100_000;

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export class IpcStore implements ScopeStore {
  readonly #channel: IpcChannel;
  readonly #log: GovernanceLogger;
  readonly #availability: Availability;
  readonly #timeoutMs: number;
  readonly #reportTimeoutMs: number;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #closed = false;
  readonly #usage: RawSettle[] = [];
  #usageTimer: NodeJS.Timeout | undefined;

  constructor(options: IpcStoreOptions) {
    this.#channel = options.channel;
    this.#log = options.log;
    this.#availability = new Availability(options.log, 'cluster primary');
    this.#timeoutMs = options.timeoutMs ?? 1_000;
    this.#reportTimeoutMs = options.reportTimeoutMs ?? 10_000;
    options.channel.onMessage((message) => {
      if (isStateReply(message)) this.#answer(message);
    });
    options.channel.onClose(() => {
      const gone = new StateUnavailableError('the cluster primary is gone');
      if (this.#pending.size > 0) this.#availability.markDown(gone);
      for (const [id, call] of this.#pending) this.#fail(id, call, gone);
    });
  }

  #call<T>(op: StateOp, args: unknown[], timeoutMs: number): Promise<T> {
    if (this.#closed || !this.#channel.isOpen()) {
      const gone = new StateUnavailableError('the cluster primary is gone', { maybeApplied: false });
      this.#availability.markDown(gone);
      return Promise.reject(gone);
    }
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        const late = new StateUnavailableError(`the cluster primary did not answer ${op} within ${timeoutMs} ms`);
        this.#availability.markDown(late);
        this.#fail(id, this.#pending.get(id), late);
      }, timeoutMs);
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      this.#channel.send({ sy: 'state-call', id, op, args });
    });
  }

  #answer(reply: StateReply): void {
    const call = this.#pending.get(reply.id);
    if (!call) return; // timed out already: the engine has dealt with it
    this.#pending.delete(reply.id);
    clearTimeout(call.timer);
    if (reply.ok) {
      this.#availability.markUp();
      call.resolve(reply.value);
    } else if (reply.unavailable) {
      call.reject(new StateUnavailableError(reply.message, { maybeApplied: reply.maybeApplied }));
    } else {
      call.reject(new Error(reply.message));
    }
  }

  #fail(id: number, call: Pending | undefined, err: Error): void {
    if (!call) return;
    this.#pending.delete(id);
    clearTimeout(call.timer);
    call.reject(err);
  }

  admit(request: RawAdmit): Promise<RawAdmitResult> {
    return this.#call('admit', [request], this.#timeoutMs);
  }

  async settle(settlement: RawSettle): Promise<void> {
    if (!settlement.reserved && settlement.scopes.length === 0) return this.#recordUsage([settlement]);
    await this.#call('settle', [settlement], this.#timeoutMs);
  }

  #recordUsage(settlements: RawSettle[]): void {
    this.#usage.push(...settlements);
    const dropped = this.#usage.length - MAX_USAGE_KEPT;
    if (dropped > 0) {
      this.#usage.splice(0, dropped);
      this.#log.error({ dropped }, 'cluster primary unavailable too long: dropping the oldest usage records');
    }
    this.#usageTimer ??= setTimeout(() => void this.#sendUsage(), USAGE_EVERY_MS);
  }

  /** Sends the usage records gathered so far; kept for the next round while the primary does not answer. */
  async #sendUsage(): Promise<void> {
    clearTimeout(this.#usageTimer);
    this.#usageTimer = undefined;
    const batch = this.#usage.splice(0);
    if (batch.length === 0) return;
    try {
      await this.#call('settleBatch', [batch], this.#timeoutMs);
    } catch (err) {
      // Closed meanwhile: close() sent what was left, and nothing is sent after it.
      if (err instanceof StateUnavailableError && !this.#closed) this.#recordUsage(batch);
      else this.#log.error({ err: String(err), records: batch.length }, 'usage records were not recorded');
    }
  }

  async renew(renewal: RawRenew): Promise<void> {
    await this.#call('renew', [renewal], this.#timeoutMs);
  }

  figures(scopes: RawScope[], now?: number): Promise<{ now: number; figures: RawFigures[] }> {
    return this.#call('figures', now === undefined ? [scopes] : [scopes, now], this.#reportTimeoutMs);
  }

  usageRows(fromDay: string, toDay: string): Promise<UsageRow[]> {
    // This worker's records first (the channel keeps the order); another worker's reach the report within USAGE_EVERY_MS.
    void this.#sendUsage();
    return this.#call('usageRows', [fromDay, toDay], this.#reportTimeoutMs);
  }

  /** Sends the usage records gathered, then stops calling: the primary owns the store and closes it. */
  async close(): Promise<void> {
    clearTimeout(this.#usageTimer);
    this.#usageTimer = undefined;
    const batch = this.#usage.splice(0);
    if (batch.length > 0)
      await this.#call('settleBatch', [batch], this.#timeoutMs).catch((err: unknown) => this.#log.error({ err: String(err), records: batch.length }, 'usage records were not recorded'));
    this.#closed = true;
  }
}
