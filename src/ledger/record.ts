/**
 * One request on the books: what the ledger keeps of a request that reached an upstream or was
 * refused by a limit, built from the exchange when it ends. Plain data (numbers and strings),
 * so a queued row holds nothing of the request (no body, no headers) while the database is down.
 */
import { randomBytes } from 'node:crypto';
import { tokenUsageOf } from '../governance/cost.ts';
import { dayId } from '../governance/periods.ts';
import type { ExchangeView } from '../pipeline/exchange.ts';

/** Why a row has no cost: the target has no price, nothing was used or reported, or a limit refused it. */
export type CostNote = 'unpriced' | 'no_usage' | 'refused';

export interface LedgerRow {
  /**
   * The row's own id, made when it is queued: what makes a retried batch idempotent. Not the
   * request id, which a client may choose (x-request-id) and send twice: each request is booked.
   */
  entry: string;
  /** The request id (x-request-id). */
  id: string;
  /** Epoch ms when the request arrived. */
  at: number;
  key: string | null;
  team: string | null;
  /** The alias the client asked for. */
  model: string | null;
  provider: string | null;
  targetModel: string | null;
  ingress: string;
  operation: string;
  status: number;
  errorCode: string | null;
  inputTokens: number | null;
  cachedTokens: number | null;
  cacheWriteTokens: number | null;
  outputTokens: number | null;
  /** Nano-USD (integers add up exactly); null with `costNote` saying why. */
  costNano: number | null;
  costNote: CostNote | null;
  /** Whether the upstream reported the usage, or the gateway estimated it (an answer without usage). */
  usageSource: 'reported' | 'estimated' | null;
  durationMs: number;
  ttftMs: number | null;
  /** Attempts that reached a provider. */
  attempts: number;
  /** The exact cache's verdict (`hit`, `miss`, `bypass`); null when no cache applied. */
  cache: CacheResult | null;
  /** A hit: what the answer cost when it was made (nano-USD), the spend it saved; null otherwise or unpriced. */
  savedNano: number | null;
}

export type CacheResult = 'hit' | 'miss' | 'bypass';

/** The columns in the order the engines write them. */
export const COLUMNS = [
  'entry',
  'id',
  'at',
  'day',
  'key',
  'team',
  'model',
  'provider',
  'target_model',
  'ingress',
  'operation',
  'status',
  'error_code',
  'input_tokens',
  'cached_tokens',
  'cache_write_tokens',
  'output_tokens',
  'cost_nano',
  'cost_note',
  'usage_source',
  'duration_ms',
  'ttft_ms',
  'attempts',
  'cache',
  'saved_nano',
] as const;

export type LedgerValue = string | number | null;

/**
 * Writes the row's values in COLUMNS order into `into` from index `at`: a batch's parameters go
 * into one array, with no array of its own per row.
 */
export function writeValues(r: LedgerRow, into: LedgerValue[], at: number): void {
  into[at] = r.entry;
  into[at + 1] = r.id;
  into[at + 2] = r.at;
  // The UTC day reports group by, made here by the writer rather than on the serving thread.
  into[at + 3] = dayId(r.at);
  into[at + 4] = r.key;
  into[at + 5] = r.team;
  into[at + 6] = r.model;
  into[at + 7] = r.provider;
  into[at + 8] = r.targetModel;
  into[at + 9] = r.ingress;
  into[at + 10] = r.operation;
  into[at + 11] = r.status;
  into[at + 12] = r.errorCode;
  into[at + 13] = r.inputTokens;
  into[at + 14] = r.cachedTokens;
  into[at + 15] = r.cacheWriteTokens;
  into[at + 16] = r.outputTokens;
  into[at + 17] = r.costNano;
  into[at + 18] = r.costNote;
  into[at + 19] = r.usageSource;
  into[at + 20] = r.durationMs;
  into[at + 21] = r.ttftMs;
  into[at + 22] = r.attempts;
  into[at + 23] = r.cache;
  into[at + 24] = r.savedNano;
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** A row as a database returns it (snake case; PostgreSQL's BIGINT as text) → a LedgerRow. */
export function rowFrom(r: Record<string, unknown>): LedgerRow {
  return {
    entry: String(r.entry),
    id: String(r.id),
    at: Number(r.at),
    key: str(r.key),
    team: str(r.team),
    model: str(r.model),
    provider: str(r.provider),
    targetModel: str(r.target_model),
    ingress: String(r.ingress),
    operation: String(r.operation),
    status: Number(r.status),
    errorCode: str(r.error_code),
    inputTokens: num(r.input_tokens),
    cachedTokens: num(r.cached_tokens),
    cacheWriteTokens: num(r.cache_write_tokens),
    outputTokens: num(r.output_tokens),
    costNano: num(r.cost_nano),
    costNote: str(r.cost_note) as CostNote | null,
    usageSource: str(r.usage_source) as LedgerRow['usageSource'],
    durationMs: Number(r.duration_ms),
    ttftMs: num(r.ttft_ms),
    attempts: Number(r.attempts),
    cache: str(r.cache) as CacheResult | null,
    savedNano: num(r.saved_nano),
  };
}

/** This process's prefix: entries are unique across processes and restarts, and cost a counter's increment. */
const ENTRY_PREFIX = randomBytes(12).toString('base64url');
let entries = 0;
/**
 * The counter at a fixed width (11 base-36 digits hold any safe integer): a process's entries
 * sort in the order they are made, so the primary key's index grows at one place, not at a new
 * place each time the counter gains a digit.
 */
const nextEntry = (): string => `${ENTRY_PREFIX}${(++entries).toString(36).padStart(11, '0')}`;

/** The cache stage's verdict (its log-line annotation), when it ran. */
function cacheOf(x: ExchangeView): { result: CacheResult; savedUsd?: number | null } | undefined {
  return x.annotations?.cache as { result: CacheResult; savedUsd?: number | null } | undefined;
}

/** Whether the request belongs on the books: it reached an upstream, was answered from the cache, or a limit refused it. */
export function isBooked(x: ExchangeView): boolean {
  if (x.refusal || cacheOf(x)?.result === 'hit') return true;
  for (const a of x.attempts) if (a.outcome !== 'skipped') return true;
  return false;
}

/** The row for a request that has ended (after settlement: the cost is final). */
export function rowOf(x: ExchangeView, now: number = performance.now()): LedgerRow {
  const at = Math.round(performance.timeOrigin + x.startedAt);
  const reported = x.usage !== undefined;
  const tokens = x.usage ? tokenUsageOf(x.usage) : x.estimatedUsage;
  let attempts = 0;
  let last: ExchangeView['attempts'][number] | undefined;
  for (const a of x.attempts) {
    if (a.outcome === 'skipped') continue;
    attempts++;
    last = a;
  }
  const error = x.streamError ?? x.error;
  const cache = cacheOf(x);
  // A hit called no provider: it cost nothing, and saved what the answer cost when it was made.
  const hit = cache?.result === 'hit' && !x.refusal;
  const costNote: CostNote | null = hit ? null : x.refusal ? 'refused' : !tokens ? 'no_usage' : x.costUsd === null || x.costUsd === undefined ? 'unpriced' : null;
  return {
    entry: nextEntry(),
    id: x.id,
    at,
    key: x.key?.name ?? null,
    team: x.key?.team ?? null,
    model: x.route?.name ?? (typeof x.body?.model === 'string' ? x.body.model : null),
    provider: last?.provider ?? (hit ? (x.attempt?.target.provider ?? null) : null),
    targetModel: x.upstreamModel ?? last?.model ?? null,
    ingress: x.ingress,
    operation: x.operation,
    status: x.status ?? 0,
    errorCode: error?.code ?? null,
    inputTokens: tokens?.input ?? null,
    cachedTokens: tokens?.cachedInput ?? null,
    cacheWriteTokens: tokens?.cacheWrite ?? null,
    outputTokens: tokens?.output ?? null,
    costNano: hit ? 0 : costNote === null ? Math.round((x.costUsd as number) * 1e9) : null,
    costNote,
    usageSource: reported ? 'reported' : tokens ? 'estimated' : null,
    durationMs: Math.round(Math.max(0, now - x.startedAt)),
    ttftMs: x.timing.firstChunkMs === undefined ? null : Math.round(x.timing.firstChunkMs),
    attempts,
    cache: cache?.result ?? null,
    savedNano: hit && typeof cache.savedUsd === 'number' ? Math.round(cache.savedUsd * 1e9) : null,
  };
}
