/**
 * The gateway's stored Responses: a backend (SQLite file or Redis) behind what the Responses
 * ingress and its routes need: save a finished response, read one, expand a
 * `previous_response_id` chain, find an item by id, delete. Everything is per owner (ownerOf):
 * another owner's id reads exactly as an id that never existed.
 *
 * Writes are made after the answer exists and before its last byte goes out, so a client that
 * sends its next turn the moment it has the answer finds it on any instance. A write that is still
 * running (one that was not awaited: a failed stream's) is waited for by the reads of its owner
 * on this instance. A failed write is logged and the answer still goes out: storing is a service
 * to the next request, never a reason to fail this one.
 */
import { GatewayError } from '../errors.ts';
import type { KeyIdentity } from '../plugin-api.ts';
import { Conversations } from './conversations.ts';
import type { LockStats } from '../runtime/sqlite.ts';
import type { Item, ResponsesStoreConfig, ResponseStoreBackend, StoredResponse } from './types.ts';

export interface StoreLogger {
  warn(obj: object, msg: string): void;
  /** A locked state file's release is logged here (warn when absent). */
  info?(obj: object, msg: string): void;
}

/** Who owns a caller's responses: its key, or its team under `scope: team`; everyone alike without keys. */
export function ownerOf(key: KeyIdentity | undefined, scope: ResponsesStoreConfig['scope']): string {
  if (!key) return 'anonymous';
  return scope === 'team' && key.team ? `team:${key.team}` : `key:${key.name}`;
}

export class ResponseStore {
  readonly config: ResponsesStoreConfig;
  readonly #backend: ResponseStoreBackend;
  readonly #log: StoreLogger;
  /** Writes in flight on this instance, per owner. */
  readonly #writing = new Map<string, Set<Promise<boolean>>>();
  /** The Conversations API, in the same backend. */
  readonly conversations: Conversations = new Conversations(this);

  constructor(backend: ResponseStoreBackend, config: ResponsesStoreConfig, log: StoreLogger) {
    this.#backend = backend;
    this.config = config;
    this.#log = log;
  }

  ownerOf(key: KeyIdentity | undefined): string {
    return ownerOf(key, this.config.scope);
  }

  /** Keeps the record: whether it was kept (never rejects: a failure is logged). Too large a record is not kept. */
  save(owner: string, record: StoredResponse): Promise<boolean> {
    const json = JSON.stringify(record);
    const bytes = Buffer.byteLength(json);
    if (bytes > this.config.maxBytes) {
      this.#log.warn({ responseId: record.id, bytes, maxBytes: this.config.maxBytes }, 'response not stored: larger than state.responses.maxBytes');
      return Promise.resolve(false);
    }
    const items = [...record.input.map((i) => i.id), ...outputOf(record.response).map((i) => i.id)];
    const write = this.#backend.put(owner, record, json, items, this.config.retentionSeconds * 1000).then(
      () => true,
      (err: unknown) => {
        this.#log.warn({ err, responseId: record.id }, 'response not stored: the state backend failed');
        return false;
      },
    );
    let set = this.#writing.get(owner);
    if (!set) this.#writing.set(owner, (set = new Set()));
    const pending = set;
    pending.add(write);
    void write.finally(() => {
      pending.delete(write);
      if (pending.size === 0 && this.#writing.get(owner) === pending) this.#writing.delete(owner);
    });
    return write;
  }

  /** The record, or undefined (unknown, expired, deleted, or another owner's); conversations are records too. */
  async load(owner: string, id: string): Promise<StoredResponse | undefined> {
    const [record] = await this.#read(owner, () => this.#backend.get(owner, [id]));
    return record;
  }

  /** A stored response's record (not a conversation's). */
  async response(owner: string, id: string): Promise<StoredResponse | undefined> {
    const record = await this.load(owner, id);
    return record?.response.object === 'conversation' ? undefined : record;
  }

  /**
   * The conversation up to and including `previousId`: its chain's ids and every input and output
   * item in order. Undefined when it, or a response before it in its chain, is not there.
   */
  async history(owner: string, previousId: string): Promise<{ chain: string[]; items: Item[] } | undefined> {
    const previous = await this.response(owner, previousId);
    if (!previous) return undefined;
    const ancestors = await this.#read(owner, () => this.#backend.get(owner, previous.chain));
    if (ancestors.some((r) => r === undefined)) return undefined;
    const records = [...(ancestors as StoredResponse[]), previous];
    return { chain: [...previous.chain, previous.id], items: records.flatMap((r) => [...r.input, ...outputOf(r.response)]) };
  }

  /** A stored item by id (an output item of a stored response, or a stored input item). */
  async item(owner: string, itemId: string): Promise<Item | undefined> {
    const responseId = await this.#read(owner, () => this.#backend.responseOfItem(owner, itemId));
    if (!responseId) return undefined;
    const record = await this.load(owner, responseId);
    if (!record) return undefined;
    return [...record.input, ...outputOf(record.response)].find((i) => i.id === itemId);
  }

  async delete(owner: string, id: string): Promise<boolean> {
    return this.#read(owner, () => this.#backend.delete(owner, id));
  }

  /** The SQLite file's lock waits (memory backend), for metrics. */
  lockStats(): LockStats | undefined {
    return this.#backend.lockStats;
  }

  close(): Promise<void> {
    return this.#backend.close();
  }

  /** Waits for this owner's writes in flight here, then reads; a backend that fails is a 503. */
  async #read<T>(owner: string, read: () => Promise<T>): Promise<T> {
    const pending = this.#writing.get(owner);
    if (pending) await Promise.all(pending);
    try {
      return await read();
    } catch (err) {
      throw new GatewayError('store_unavailable', 'Stored responses cannot be read now (the state backend is unavailable); try again, or send the whole conversation in `input`.', { cause: err });
    }
  }
}

/** The output items of a stored response object. */
export function outputOf(response: Record<string, unknown>): Item[] {
  const output = response.output;
  if (!Array.isArray(output)) return [];
  return output.filter((i): i is Item => typeof i === 'object' && i !== null && typeof (i as { id?: unknown }).id === 'string');
}
