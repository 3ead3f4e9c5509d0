/**
 * Stored Responses (`store: true`, `previous_response_id`, `item_reference`, GET/DELETE
 * /v1/responses/{id}): kept in the configured state backend. This opens the store `state:` asks
 * for: the memory backend's SQLite file, or Redis with a TTL per response.
 */
import { DEFAULT_RESPONSES_STORE, type ResponsesStoreConfig } from './types.ts';
import { ResponseStore, type StoreLogger } from './store.ts';

export interface ResponseStoreState {
  backend: 'memory' | 'redis';
  redis?: { url: string; prefix?: string };
  /** memory: the SQLite state file (':memory:' keeps nothing across restarts). */
  file?: string;
  responses?: Partial<ResponsesStoreConfig>;
}

/** The store, or undefined when `state.responses.enabled` is false. */
export async function openResponseStore(state: ResponseStoreState, log: StoreLogger): Promise<ResponseStore | undefined> {
  const config: ResponsesStoreConfig = { ...DEFAULT_RESPONSES_STORE, ...state.responses };
  if (!config.enabled) return undefined;
  if (state.backend === 'redis') {
    if (!state.redis?.url) throw new Error('state.redis.url is required with state.backend: redis');
    // ioredis is loaded only for a Redis backend.
    const { RedisResponseBackend } = await import('./redis-backend.ts');
    const backend = await new RedisResponseBackend({ url: state.redis.url, prefix: state.redis.prefix ?? 'switchyard:', maxEntries: config.maxEntries }).open();
    return new ResponseStore(backend, config, log);
  }
  const { SqliteResponseBackend } = await import('./sqlite-backend.ts');
  const lockLog = { warn: (obj: object, msg: string) => log.warn(obj, msg), info: (obj: object, msg: string) => (log.info ?? log.warn).call(log, obj, msg) };
  return new ResponseStore(new SqliteResponseBackend({ path: state.file ?? ':memory:', maxEntries: config.maxEntries, log: lockLog }), config, log);
}

export { ResponseStore, ownerOf, outputOf } from './store.ts';
export type * from './types.ts';
export { DEFAULT_RESPONSES_STORE } from './types.ts';
