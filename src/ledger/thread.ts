/**
 * A ledger engine whose database lives on a writer thread (writer-thread.ts): this side only
 * posts each call and its arguments (a batch of plain rows, a structured clone of ~1 µs a row)
 * and resolves the answer. The serving thread then pays for queueing a row and copying it
 * across, never for an INSERT: the SQL, the parameters, SQLite's write and pg's encoding run
 * on the writer. RequestLedger (book.ts) keeps the queue, the retries and the bounds as before:
 * a call the thread could not run is a failed write, whose rows stay queued.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { LedgerEngine, PeriodSpendRow, PeriodStarts } from './engine.ts';
import type { EngineSpec } from './engines.ts';
import type { LedgerRow } from './record.ts';
import type { UsageRow } from '../governance/store.ts';

type Method = Exclude<keyof LedgerEngine, 'kind'>;
export interface EngineCall {
  id: number;
  method: Method;
  args: unknown[];
}
export type EngineReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string } | { log: 'warn'; msg: string };

// Beside this module, with its extension: writer-thread.ts from the sources, .js once built.
const WRITER = new URL(`./writer-thread${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

export class ThreadedEngine implements LedgerEngine {
  readonly kind: string;
  readonly #spec: EngineSpec;
  readonly #warn: (msg: string) => void;
  #worker: Worker | undefined;
  readonly #pending = new Map<number, Pending>();
  #next = 0;
  #closed = false;

  constructor(spec: EngineSpec, warn: (msg: string) => void) {
    this.kind = spec.kind;
    this.#spec = spec;
    this.#warn = warn;
  }

  migrate(): Promise<void> {
    return this.#call('migrate', []) as Promise<void>;
  }
  insert(rows: readonly LedgerRow[]): Promise<void> {
    return this.#call('insert', [rows]) as Promise<void>;
  }
  request(id: string): Promise<LedgerRow | undefined> {
    return this.#call('request', [id]) as Promise<LedgerRow | undefined>;
  }
  usageRows(fromDay: string, toDay: string): Promise<UsageRow[]> {
    return this.#call('usageRows', [fromDay, toDay]) as Promise<UsageRow[]>;
  }
  spendByKey(): Promise<Map<string, number>> {
    return this.#call('spendByKey', []) as Promise<Map<string, number>>;
  }
  spendSince(starts: PeriodStarts): Promise<PeriodSpendRow[]> {
    return this.#call('spendSince', [starts]) as Promise<PeriodSpendRow[]>;
  }
  deleteBefore(day: string, limit: number): Promise<number> {
    return this.#call('deleteBefore', [day, limit]) as Promise<number>;
  }

  /** Closes the database on its thread, then ends the thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      if (this.#worker) await this.#call('close', []);
    } finally {
      this.#closed = true;
      await this.#worker?.terminate();
      this.#worker = undefined;
    }
  }

  /** Ends the writer thread as a crash of it would (tests): its calls fail, the next call starts another. */
  async killThread(): Promise<void> {
    await this.#worker?.terminate();
  }

  #call(method: Method, args: unknown[]): Promise<unknown> {
    if (this.#closed) return Promise.reject(new Error('the request ledger is closed'));
    const worker = this.#started();
    const id = ++this.#next;
    return new Promise((resolve, reject) => {
      // Throws for arguments that cannot be copied: then nothing waits on the thread.
      worker.postMessage({ id, method, args } satisfies EngineCall);
      // The thread keeps the process alive only while a call waits on it (a shutdown's last write).
      if (this.#pending.size === 0) worker.ref();
      this.#pending.set(id, { resolve, reject });
    });
  }

  /** The writer thread, started on first use and again after it died (its calls failed: their rows stay queued). */
  #started(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(WRITER, { workerData: this.#spec, name: 'switchyard-ledger-writer' });
    worker.unref();
    worker.on('message', (reply: EngineReply) => {
      if ('log' in reply) return this.#warn(reply.msg);
      const pending = this.#pending.get(reply.id);
      if (!pending) return;
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) worker.unref();
      if (reply.ok) pending.resolve(reply.value);
      else pending.reject(new Error(reply.message));
    });
    const died = (why: string): void => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      const failed = [...this.#pending.values()];
      this.#pending.clear();
      for (const p of failed) p.reject(new Error(`the ledger writer thread stopped: ${why}`));
    };
    worker.on('error', (err: unknown) => died(err instanceof Error ? err.message : String(err)));
    worker.on('exit', (code) => died(`exit code ${code}`));
    this.#worker = worker;
    return worker;
  }
}
