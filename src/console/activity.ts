/**
 * What the operator's console shows of recent traffic, kept in memory by one gateway observer:
 * the last requests with their attempt logs (never a prompt or a completion), 10-second buckets
 * over the last 15 minutes (requests, errors, latency and time-to-first-token samples, tokens,
 * spend), each target's recent errors with the last (already scrubbed) message, and when each
 * key last made a request. Everything is per instance and forgotten at restart: the figures
 * that must survive (spend, budgets) come from the state backend.
 */
import { performance } from 'node:perf_hooks';
import type { AttemptRecord, AttemptView } from '../plugin-api.ts';
import type { ExchangeView } from '../pipeline/exchange.ts';
import type { GatewayObserver } from '../pipeline/observer.ts';
import { Reservoir } from './reservoir.ts';

export const BUCKET_MS = 10_000;
export const WINDOW_MS = 15 * 60_000;
const BUCKETS = WINDOW_MS / BUCKET_MS;
/** Latency samples kept per bucket (a reservoir: percentiles stay fair under load). */
const SAMPLES = 64;

export interface RequestSummary {
  id: string;
  /** Epoch ms when the request arrived. */
  at: number;
  key: string | null;
  team: string | null;
  alias: string | null;
  /** `provider/model` of the last attempt. */
  target: string | null;
  status: number;
  durationMs: number;
  ttftMs: number | null;
  tokens: { prompt: number; completion: number } | null;
  costUsd: number | null;
  error: { code: string; message: string } | null;
  attempts: AttemptRecord[];
  /** The guardrails' verdicts (rule, action, site, kinds found: never the text), when a rule found something. */
  guardrails?: unknown[];
  /** The exact cache's result (hit, miss, bypass) and what a hit saved, when the cache saw the request. */
  cache?: { result: string; savedUsd?: number | null };
  /** The cluster worker that served it (set when the console gathers every worker's requests). */
  worker?: number;
}

export interface BucketView {
  /** Epoch ms of the bucket's start. */
  at: number;
  requests: number;
  errors: number;
  p50Ms: number | null;
  p99Ms: number | null;
  ttftP50Ms: number | null;
  tokens: number;
  costUsd: number;
}

export interface TargetActivity {
  /** Failed attempts in the last 15 minutes. */
  errors: number;
  lastError: { at: number; status: number; message: string } | null;
}

interface Bucket {
  at: number;
  requests: number;
  errors: number;
  latency: Reservoir;
  ttft: Reservoir;
  tokens: number;
  costUsd: number;
  /** Target key → failed attempts in this bucket. */
  targetErrors: Map<string, number>;
}

/** A process's activity as plain data (JSON over the cluster's IPC channel): see RecentActivity.snapshot. */
export interface ActivitySnapshot {
  startedAt: number;
  inFlight: number;
  buckets: Array<Omit<Bucket, 'latency' | 'ttft' | 'targetErrors'> & { latency: number[]; ttft: number[]; targetErrors: Array<[string, number]> }>;
  lastError: Array<[string, NonNullable<TargetActivity['lastError']>]>;
  lastRequest: Array<[string, number]>;
  /** Oldest first. */
  recent: RequestSummary[];
}

/** `alias|provider|model`: one target of one alias. */
export function targetKey(alias: string, provider: string, model: string): string {
  return `${alias}|${provider}|${model}`;
}

/**
 * @example
 * const activity = new RecentActivity({ capacity: 200 });
 * Gateway.start({ config, observers: [activity] });
 * activity.series(Date.now()); // 90 buckets, oldest first
 */
export class RecentActivity implements GatewayObserver {
  readonly startedAt: number;
  readonly #capacity: number;
  readonly #recent: RequestSummary[] = [];
  readonly #buckets: Bucket[] = [];
  readonly #live = new Set<ExchangeView>();
  readonly #lastError = new Map<string, TargetActivity['lastError']>();
  readonly #lastRequest = new Map<string, number>();
  readonly #now: () => number;
  /** In flight in the other processes whose snapshots were merged in (see merge). */
  #inFlightElsewhere = 0;

  constructor({ capacity = 200, now = Date.now, startedAt = Date.now() }: { capacity?: number; now?: () => number; startedAt?: number } = {}) {
    this.#capacity = capacity;
    this.#now = now;
    this.startedAt = startedAt;
  }

  get inFlight(): number {
    return this.#live.size + this.#inFlightElsewhere;
  }

  requestStarted(ctx: ExchangeView): void {
    this.#live.add(ctx);
  }

  attemptEnded(ctx: ExchangeView, attempt: AttemptView, record: AttemptRecord): void {
    if (record.outcome !== 'error' || !ctx.route) return;
    const key = targetKey(ctx.route.name, attempt.target.provider, attempt.target.model);
    const now = this.#now();
    const bucket = this.#bucket(now);
    bucket.targetErrors.set(key, (bucket.targetErrors.get(key) ?? 0) + 1);
    this.#lastError.set(key, { at: now, status: record.status, message: record.error ?? `status ${record.status}` });
  }

  requestEnded(ctx: ExchangeView): void {
    this.#live.delete(ctx);
    const now = this.#now();
    const durationMs = Math.max(0, performance.now() - ctx.startedAt);
    const status = ctx.status ?? 0;
    const failed = status >= 500 || status === 429 || ctx.streamError !== undefined;
    const tokens = ctx.usage ? ctx.usage.prompt_tokens + ctx.usage.completion_tokens : 0;
    const bucket = this.#bucket(now);
    bucket.requests++;
    if (failed) bucket.errors++;
    bucket.latency.add(durationMs);
    if (ctx.timing.firstChunkMs !== undefined) bucket.ttft.add(ctx.timing.firstChunkMs);
    bucket.tokens += tokens;
    bucket.costUsd += ctx.costUsd ?? 0;
    if (ctx.key) this.#lastRequest.set(ctx.key.name, now);
    const last = ctx.attempts.findLast((a) => a.outcome !== 'skipped') ?? ctx.attempts.at(-1);
    const error = ctx.error ?? ctx.streamError;
    this.#recent.push({
      id: ctx.id,
      at: now - durationMs,
      key: ctx.key?.name ?? null,
      team: ctx.key?.team ?? null,
      alias: ctx.route?.name ?? null,
      target: last ? `${last.provider}/${last.model}` : null,
      status,
      durationMs: Math.round(durationMs),
      ttftMs: ctx.timing.firstChunkMs === undefined ? null : Math.round(ctx.timing.firstChunkMs),
      tokens: ctx.usage ? { prompt: ctx.usage.prompt_tokens, completion: ctx.usage.completion_tokens } : null,
      costUsd: ctx.costUsd ?? null,
      error: error ? { code: error.code, message: error.message } : null,
      attempts: ctx.attempts.map((a) => ({ ...a })),
      ...annotationsOf(ctx),
    });
    if (this.#recent.length > this.#capacity) this.#recent.shift();
  }

  /** The most recent requests, newest first. */
  recent(limit = this.#capacity): RequestSummary[] {
    return this.#recent.slice(-limit).reverse();
  }

  request(id: string): RequestSummary | undefined {
    return this.#recent.findLast((r) => r.id === id);
  }

  /** When the key last made a request here (epoch ms). */
  lastRequestOf(key: string): number | null {
    return this.#lastRequest.get(key) ?? null;
  }

  target(key: string, now = this.#now()): TargetActivity {
    let errors = 0;
    for (const b of this.#window(now)) errors += b.targetErrors.get(key) ?? 0;
    const lastError = this.#lastError.get(key) ?? null;
    return { errors, lastError: lastError && now - lastError.at < WINDOW_MS ? lastError : null };
  }

  /** One entry per 10-second bucket of the last 15 minutes, oldest first (empty buckets included). */
  series(now = this.#now()): BucketView[] {
    const byStart = new Map(this.#window(now).map((b) => [b.at, b]));
    const current = bucketStart(now);
    const out: BucketView[] = [];
    for (let at = current - (BUCKETS - 1) * BUCKET_MS; at <= current; at += BUCKET_MS) {
      const b = byStart.get(at);
      out.push(
        b
          ? { at, requests: b.requests, errors: b.errors, p50Ms: b.latency.quantile(0.5), p99Ms: b.latency.quantile(0.99), ttftP50Ms: b.ttft.quantile(0.5), tokens: b.tokens, costUsd: b.costUsd }
          : { at, requests: 0, errors: 0, p50Ms: null, p99Ms: null, ttftP50Ms: null, tokens: 0, costUsd: 0 },
      );
    }
    return out;
  }

  /** Figures over the last `spanMs` (default: the whole window). */
  totals(now = this.#now(), spanMs = WINDOW_MS) {
    const buckets = this.#window(now).filter((b) => b.at > now - spanMs - BUCKET_MS);
    const latency = new Reservoir(SAMPLES * 8);
    const ttft = new Reservoir(SAMPLES * 8);
    let requests = 0;
    let errors = 0;
    let tokens = 0;
    let costUsd = 0;
    for (const b of buckets) {
      requests += b.requests;
      errors += b.errors;
      tokens += b.tokens;
      costUsd += b.costUsd;
      latency.merge(b.latency);
      ttft.merge(b.ttft);
    }
    return { requests, errors, tokens, costUsd, p50Ms: latency.quantile(0.5), p99Ms: latency.quantile(0.99), ttftP50Ms: ttft.quantile(0.5), ttftP99Ms: ttft.quantile(0.99) };
  }

  /** What this process holds, as plain data another process can merge (the last `recent` requests). */
  snapshot(recent: number, now = this.#now()): ActivitySnapshot {
    return {
      startedAt: this.startedAt,
      inFlight: this.inFlight,
      buckets: this.#window(now).map((b) => ({ ...b, latency: [...b.latency.values], ttft: [...b.ttft.values], targetErrors: [...b.targetErrors] })),
      lastError: [...this.#lastError].filter((e): e is [string, NonNullable<TargetActivity['lastError']>] => e[1] !== null),
      lastRequest: [...this.#lastRequest],
      recent: recent > 0 ? this.#recent.slice(-recent) : [],
    };
  }

  /**
   * One view of several processes' activity (a cluster's workers): buckets added up (latency
   * samples pooled, so percentiles cover every worker), requests interleaved by time, the latest
   * error and request of each target and key. Read-only: it observes no request itself.
   */
  static merge(snapshots: readonly ActivitySnapshot[], now: () => number = Date.now): RecentActivity {
    const n = Math.max(1, snapshots.length);
    const merged = new RecentActivity({ capacity: 200 * n, now, startedAt: Math.min(now(), ...snapshots.map((s) => s.startedAt)) });
    const buckets = new Map<number, Bucket>();
    for (const s of snapshots) {
      merged.#inFlightElsewhere += s.inFlight;
      for (const b of s.buckets) {
        let into = buckets.get(b.at);
        if (!into)
          buckets.set(b.at, (into = { at: b.at, requests: 0, errors: 0, latency: new Reservoir(SAMPLES * n), ttft: new Reservoir(SAMPLES * n), tokens: 0, costUsd: 0, targetErrors: new Map() }));
        into.requests += b.requests;
        into.errors += b.errors;
        into.tokens += b.tokens;
        into.costUsd += b.costUsd;
        for (const v of b.latency) into.latency.add(v);
        for (const v of b.ttft) into.ttft.add(v);
        for (const [key, count] of b.targetErrors) into.targetErrors.set(key, (into.targetErrors.get(key) ?? 0) + count);
      }
      for (const [key, error] of s.lastError) if ((merged.#lastError.get(key)?.at ?? -1) < error.at) merged.#lastError.set(key, error);
      for (const [key, at] of s.lastRequest) merged.#lastRequest.set(key, Math.max(at, merged.#lastRequest.get(key) ?? 0));
      merged.#recent.push(...s.recent);
    }
    merged.#buckets.push(...[...buckets.values()].sort((a, b) => a.at - b.at));
    merged.#recent.sort((a, b) => a.at - b.at);
    return merged;
  }

  #window(now: number): Bucket[] {
    const oldest = bucketStart(now) - (BUCKETS - 1) * BUCKET_MS;
    while (this.#buckets.length > 0 && this.#buckets[0].at < oldest) this.#buckets.shift();
    return this.#buckets;
  }

  #bucket(now: number): Bucket {
    const at = bucketStart(now);
    const last = this.#buckets.at(-1);
    if (last && last.at === at) return last;
    const bucket: Bucket = { at, requests: 0, errors: 0, latency: new Reservoir(SAMPLES), ttft: new Reservoir(SAMPLES), tokens: 0, costUsd: 0, targetErrors: new Map() };
    this.#buckets.push(bucket);
    this.#window(now);
    return bucket;
  }
}

const bucketStart = (ms: number): number => ms - (ms % BUCKET_MS);

/** What the console shows of the stages' annotations: the guardrails' verdicts and the cache's result. */
function annotationsOf(ctx: ExchangeView): Pick<RequestSummary, 'guardrails' | 'cache'> {
  const a = ctx.annotations;
  if (!a) return {};
  const out: Pick<RequestSummary, 'guardrails' | 'cache'> = {};
  if (Array.isArray(a.guardrails)) out.guardrails = structuredClone(a.guardrails);
  if (a.cache && typeof a.cache === 'object') out.cache = { ...(a.cache as RequestSummary['cache'] & object) };
  return out;
}
