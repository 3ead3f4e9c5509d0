/**
 * `cache`: the exact response cache. A chat request asked again, word for word, within its
 * scope (the key, the team, or everyone) and the entry's TTL, is answered from the cache: no
 * provider is called and nothing is charged to budgets or limits; a stream is replayed as a
 * stream. `Cache-Control: no-cache` skips the lookup, `no-store` the cache altogether; errors and
 * unfinished streams are never kept. Put it after `route` (and after `guardrails`, so that it
 * keeps answers before their originals are restored) and before `retry`.
 */
import { completionJson, entryJson, type CacheEntry, type CacheStore } from '../cache/entry.ts';
import { cacheKey } from '../cache/key.ts';
import { recorded } from '../cache/record.ts';
import { compileGlob } from '../config/glob.ts';
import { MemoryCache } from '../cache/memory.ts';
import type { ChatCompletionRequest } from '../openai-types.ts';
import { CachedAttempt, replayChunks } from '../pipeline/cached-attempt.ts';
import { exchangeOf, type Exchange } from '../pipeline/exchange.ts';
import { defineStage, type GatewayResponse, type JsonSchema, type KeyIdentity, type RequestContext } from '../plugin-api.ts';

type Scope = 'key' | 'team' | 'global';

interface CacheRule {
  models?: readonly string[];
  keys?: readonly string[];
  teams?: readonly string[];
  ttl?: number;
  scope?: Scope;
}

export interface CacheOptions {
  /** Seconds an entry lives (default 3600). */
  ttl?: number;
  /** Who shares entries (default `key`). */
  scope?: Scope;
  /** Bytes the in-memory cache may hold (default 64 MiB). */
  maxBytes?: number;
  /** Entries in Redis (shared by every instance) instead of memory. */
  redis?: { url: string; prefix?: string; timeoutMs?: number };
  /** Which requests are cached (first match gives ttl and scope); default all. */
  apply?: readonly CacheRule[];
}

const STRINGS = { type: 'array', items: { type: 'string', minLength: 1 } } as const;
const SCOPE = { enum: ['key', 'team', 'global'] } as const;

const OPTIONS_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ttl: { type: 'integer', minimum: 1 },
    scope: SCOPE,
    maxBytes: { type: 'integer', minimum: 1024 },
    redis: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: { url: { type: 'string', pattern: '^rediss?://' }, prefix: { type: 'string' }, timeoutMs: { type: 'integer', minimum: 1 } },
    },
    apply: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, properties: { models: STRINGS, keys: STRINGS, teams: STRINGS, ttl: { type: 'integer', minimum: 1 }, scope: SCOPE } },
    },
  },
};

export default defineStage<CacheOptions>({
  apiVersion: 2,
  kind: 'stage',
  name: 'cache',
  description: 'Exact response cache per key, team or everyone: a repeated request is answered without calling a provider',
  optionsSchema: OPTIONS_SCHEMA,
  async create(options, env) {
    // ioredis is loaded only for a cache in Redis: a gateway without one does not carry it.
    const store: CacheStore = options.redis ? new (await import('../cache/redis.ts')).RedisCache(options.redis) : new MemoryCache(options.maxBytes ?? 64 << 20);
    const rules = (options.apply ?? [{}]).map((r) => ({ ...r, models: r.models?.map(compileGlob), ttl: r.ttl ?? options.ttl ?? 3600, scope: r.scope ?? options.scope ?? 'key' }));
    const ruleFor = (ctx: RequestContext) =>
      rules.find(
        (r) =>
          (!r.models || r.models.some((m) => m.test(ctx.route?.name ?? '') || m.test(String(ctx.body.model)))) &&
          (!r.keys || (ctx.key !== undefined && r.keys.includes(ctx.key.name))) &&
          (!r.teams || (ctx.key?.team !== undefined && r.teams.includes(ctx.key.team))),
      );
    return {
      name: 'cache',
      async handle(ctx, next) {
        const route = ctx.route;
        const rule = ctx.operation === 'chat' && route ? ruleFor(ctx) : undefined;
        if (!rule || !route) return next();
        const control = String(ctx.headers['cache-control'] ?? '').toLowerCase();
        if (control.includes('no-store')) return bypass(ctx, next);
        const key = cacheKey(scopeOf(rule.scope, ctx.key), route.name, ctx.body as ChatCompletionRequest);
        if (!control.includes('no-cache')) {
          const entry = await store.get(key).catch((err: unknown) => {
            env.log.debug({ err, reqId: ctx.id }, 'cache lookup failed: served as a miss');
            return undefined;
          });
          if (entry) {
            const x = exchangeOf(ctx);
            // A hit is a request all the same: it counts against rpm (and concurrency), never tokens or money.
            await x.services.limits?.admitFree?.(x);
            return answerFromCache(x, entry);
          }
        }
        const result = control.includes('no-cache') ? 'bypass' : 'miss';
        ctx.responseHeaders['x-switchyard-cache'] = result;
        ctx.annotate('cache', { result });
        const x = exchangeOf(ctx);
        const keep = (answerJson: string) => {
          const target = x.attempt?.target;
          if (!target || x.attempt?.passthrough) return;
          const json = entryJson(answerJson, { provider: target.provider, model: x.upstreamModel ?? target.model, costUsd: x.costUsd ?? null, storedAt: Date.now() });
          store.set(key, json, rule.ttl * 1000).catch((err: unknown) => env.log.debug({ err, reqId: ctx.id }, 'cache store failed'));
        };
        ctx.transformAnswer({
          completion(body) {
            keep(completionJson(body));
            return body;
          },
          stream: (chunks) => recorded(chunks, keep),
        });
        await next();
      },
      close: () => store.close?.(),
    };
  },
});

async function bypass(ctx: RequestContext, next: () => Promise<void>): Promise<void> {
  ctx.responseHeaders['x-switchyard-cache'] = 'bypass';
  ctx.annotate('cache', { result: 'bypass' });
  await next();
}

/** Whose entries a request shares: its key's, its team's (a key without a team is its own team), or everyone's. */
function scopeOf(scope: Scope, key: KeyIdentity | undefined): string {
  if (scope === 'global') return 'global';
  if (scope === 'team' && key?.team) return `team:${key.team}`;
  return key ? `key:${key.name}` : 'anonymous';
}

/** Answers from an entry: an attempt that calls nothing, so no admission, no reservation, no charge. */
function answerFromCache(x: Exchange, entry: CacheEntry): void {
  const route = x.route;
  if (!route) return;
  const target = route.targets.find((t) => t.provider === entry.provider && t.model === entry.model) ?? route.targets[0];
  const response: GatewayResponse = entry.answer.kind === 'completion' ? { kind: 'completion', body: entry.answer.body } : { kind: 'stream', chunks: replayChunks(entry.answer.chunks) };
  x.attempt = new CachedAttempt(x, target, response);
  x.upstreamModel = entry.model;
  x.responseHeaders['x-switchyard-cache'] = 'hit';
  x.ctx.annotate('cache', { result: 'hit', savedUsd: entry.costUsd });
}
