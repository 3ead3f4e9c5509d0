/**
 * Stored Responses (OpenAI's `store: true`): what is kept of a response, and what a backend
 * implements. A leaf: the ingress, the routes and both backends import it.
 *
 * One record per response: the `response` object exactly as the client got it, the request's own
 * input items (item references resolved, every item with an id), and the ids of the responses
 * before it in its `previous_response_id` chain, oldest first. A chain is then two reads however
 * long it is (the record, then all its ancestors at once), and no record repeats another's items.
 */

/** An input or output item as the Responses API spells it (`type`, `id`, and the item's own fields). */
export type Item = Record<string, unknown> & { id: string };

export interface StoredResponse {
  id: string;
  /** The `response` object as the client received it (its final form for a stream). */
  response: Record<string, unknown>;
  /** This request's own input items, references resolved, each with an id. */
  input: Item[];
  /** The responses before this one in its chain, oldest first (previous_response_id, transitively). */
  chain: string[];
  /** Epoch ms the record was written. */
  storedAt: number;
}

/**
 * A backend keeps records per owner (the key or team that created them): whatever is asked of
 * one owner never sees another's. Records expire `ttlMs` after they are written.
 */
export interface ResponseStoreBackend {
  /** Writes the record (its JSON given, already measured) and indexes `itemIds` → its id. */
  put(owner: string, record: StoredResponse, json: string, itemIds: readonly string[], ttlMs: number): Promise<void>;
  /** The records of these ids (undefined where none, expired or another owner's), in order. */
  get(owner: string, ids: readonly string[]): Promise<Array<StoredResponse | undefined>>;
  /** The id of the response that holds item `itemId` (in its input or output). */
  responseOfItem(owner: string, itemId: string): Promise<string | undefined>;
  /** Deletes the record; false when there was none. */
  delete(owner: string, id: string): Promise<boolean>;
  /** A SQLite file's lock waits (runtime/sqlite.ts LockStats), for metrics. */
  readonly lockStats?: { busy: number; waitedSeconds: number; locked: boolean };
  close(): Promise<void>;
}

/** `state.responses` in gateway.yaml. */
export interface ResponsesStoreConfig {
  /** false: nothing is kept, `store: true` is answered as `store: false`, and references are refused. */
  enabled: boolean;
  /** How long a response is kept after it was written. */
  retentionSeconds: number;
  /** A response whose record (input + response, JSON) is larger is answered but not kept. */
  maxBytes: number;
  /** Responses kept at most, over all owners; the oldest go first. */
  maxEntries: number;
  /** Whose responses a caller may read and chain: its key's own, or its team's (keys without a team: their own). */
  scope: 'key' | 'team';
}

export const DEFAULT_RESPONSES_STORE: ResponsesStoreConfig = {
  enabled: true,
  retentionSeconds: 30 * 86_400,
  maxBytes: 4 * 1024 * 1024,
  maxEntries: 100_000,
  scope: 'key',
};
