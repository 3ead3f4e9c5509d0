/**
 * Whether a Redis server keeps its data across a restart. Without AOF or RDB snapshots a restart
 * empties it: every budget, window and lease is gone (rebuilt from the request ledger when one is
 * kept, lost otherwise). Checked at startup and by `switchyard validate --strict`.
 */

/** The one command used: CONFIG GET (a managed Redis may refuse it; then nothing is known). */
export interface ConfigReader {
  config(op: 'GET', name: string): Promise<unknown>;
}

export const PERSISTENCE_ADVICE =
  'redis does not persist its data (appendonly no, save ""): a restart empties every budget, window and lease. Run it with appendonly yes and appendfsync everysec (see README, Running in production)';

/** The warning to give, or undefined when Redis persists or cannot tell (CONFIG refused). */
export async function persistenceWarning(redis: ConfigReader): Promise<string | undefined> {
  try {
    const [aof, save] = await Promise.all([redis.config('GET', 'appendonly'), redis.config('GET', 'save')]);
    const value = (reply: unknown): string | undefined => (Array.isArray(reply) ? String(reply[1] ?? '') : undefined);
    if (value(aof) === 'no' && value(save)?.trim() === '') return PERSISTENCE_ADVICE;
  } catch {
    // CONFIG is often renamed or disabled on managed services, which persist on their own terms.
  }
  return undefined;
}

/** For `validate --strict`: connects to `url` once (2 s at most) and says whether it persists; never throws. */
export async function checkRedisPersistence(url: string): Promise<{ warning?: string; unreachable?: string }> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 2_000, commandTimeout: 2_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return { warning: await persistenceWarning(redis) };
  } catch (err) {
    return { unreachable: err instanceof Error ? err.message : String(err) };
  } finally {
    redis.disconnect();
  }
}
