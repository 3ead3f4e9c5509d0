/**
 * The Conversations API (https://platform.openai.com/docs/api-reference/conversations) over the
 * same store as responses: a conversation is one record of the backend (its object in `response`,
 * its items in `input`, each item indexed by id), kept as long as a response and renewed at each
 * change. Changes are read-modify-write of that record, one at a time per conversation on this
 * instance; two instances changing one conversation at the same instant may lose one change
 * (OpenAI, too, leaves concurrent turns on one conversation to the client).
 */
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../errors.ts';
import type { ResponseStore } from './store.ts';
import type { Item, StoredResponse } from './types.ts';

export interface ConversationObject extends Record<string, unknown> {
  id: string;
  object: 'conversation';
  created_at: number;
  metadata: Record<string, string>;
}

export class Conversations {
  readonly #store: ResponseStore;
  /** The last change queued per conversation on this instance. */
  readonly #queue = new Map<string, Promise<unknown>>();

  constructor(store: ResponseStore) {
    this.#store = store;
  }

  async create(owner: string, items: Item[], metadata: Record<string, string>): Promise<ConversationObject> {
    const id = `conv_${randomBytes(24).toString('hex')}`;
    const conversation: ConversationObject = { id, object: 'conversation', created_at: Math.floor(Date.now() / 1000), metadata };
    await this.#write(owner, { id, response: conversation, input: items, chain: [], storedAt: Date.now() });
    return conversation;
  }

  /** The conversation and its items; undefined when it is not this owner's. */
  async get(owner: string, id: string): Promise<{ conversation: ConversationObject; items: Item[] } | undefined> {
    if (!id.startsWith('conv_')) return undefined;
    const record = await this.#store.load(owner, id);
    if (record?.response.object !== 'conversation') return undefined;
    return { conversation: record.response as ConversationObject, items: record.input };
  }

  /** Applies `change` to the conversation's items and metadata; undefined when it is not there. */
  change(owner: string, id: string, change: (items: Item[], conversation: ConversationObject) => Item[]): Promise<{ conversation: ConversationObject; items: Item[] } | undefined> {
    const key = `${owner}\n${id}`;
    const run = (this.#queue.get(key) ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        const found = await this.get(owner, id);
        if (!found) return undefined;
        const conversation = { ...found.conversation };
        const items = change(found.items, conversation);
        await this.#write(owner, { id, response: conversation, input: items, chain: [], storedAt: Date.now() });
        return { conversation, items };
      });
    this.#queue.set(key, run);
    void run.finally(() => {
      if (this.#queue.get(key) === run) this.#queue.delete(key);
    });
    return run;
  }

  delete(owner: string, id: string): Promise<boolean> {
    return id.startsWith('conv_') ? this.#store.delete(owner, id) : Promise.resolve(false);
  }

  async #write(owner: string, record: StoredResponse): Promise<void> {
    if (!(await this.#store.save(owner, record))) {
      throw new GatewayError('store_unavailable', 'The conversation cannot be stored now (the state backend is unavailable, or it is larger than state.responses.maxBytes).');
    }
  }
}
