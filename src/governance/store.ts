/**
 * What a state store implements: the raw, integer-only operations the engine (engine.ts) turns
 * the public API into. Two implementations with the same semantics: memory-store.ts (one
 * process, persisted with SQLite) and redis-store.ts (one Lua script per operation). Money is in
 * nano-USD so counters stay exact integers; times are epoch ms.
 *
 * Semantics both follow, per scope:
 * - a request log (id → admission time) and a token log (id → admission time, tokens) over a
 *   sliding window of WINDOW_MS: an entry counts while `at > now - WINDOW_MS`;
 * - a lease per request in flight (id → expiry, reserved nano-USD); a lease counts while
 *   `expiresAt > now`; an expired lease (its instance died) is charged its reserved cost;
 * - spend counters per calendar period (daily, weekly, monthly, total: all four always, so a
 *   reload that adds or changes a budget starts from what was really spent).
 * Stores throw StateUnavailableError when they cannot answer.
 */
import type { LockStats } from '../runtime/sqlite.ts';
import type { BudgetPeriod, TokenUsage, UsageLabels } from './types.ts';

export const WINDOW_MS = 60_000;

export const toNano = (usd: number): number => Math.round(usd * 1e9);
export const fromNano = (nano: number): number => nano / 1e9;

export interface RawScope {
  name: string;
  rpm?: number;
  tpm?: number;
  concurrency?: number;
  budgetNano?: number;
  /** The budget's period; `total` when the scope has no budget (its figures then report total spend). */
  period: BudgetPeriod;
}

export interface RawAdmit {
  id: string;
  now?: number;
  tokens: number;
  costNano: number;
  leaseTtlMs: number;
  scopes: RawScope[];
}

export interface RawFigures {
  requests: number;
  /** Admission time of the newest request in the window (null when empty). */
  requestsNewest: number | null;
  tokens: number;
  tokensNewest: number | null;
  inFlight: number;
  reservedNano: number;
  /** Spent in the scope's period. */
  spentNano: number;
}

export type RawLimitKind = 'requests' | 'tokens' | 'concurrency' | 'budget';

export interface RawViolation {
  /** Index into the request's scopes. */
  scope: number;
  kind: RawLimitKind;
  /** For budget: spent + reserved nano-USD. */
  used: number;
  limit: number;
  /** When enough of the window will have expired (requests, tokens); null otherwise. */
  retryAt: number | null;
  /** Budget: spent alone leaves no room. Tokens: the request is larger than tpm. */
  final: boolean;
}

export interface RawAdmitResult {
  now: number;
  admitted: boolean;
  /** After the reservation when admitted, before it otherwise. */
  figures: RawFigures[];
  violations: RawViolation[];
}

export interface RawSettle {
  id: string;
  /** Admission time: spend and usage are booked in its period and day. */
  at: number;
  now?: number;
  /** The lease was reserved in the store (false: admitted without it; only spend and usage are booked). */
  reserved: boolean;
  /** The request is over: its usage is recorded once, and a second settle is a no-op. */
  final: boolean;
  scopes: string[];
  /** Real tokens, replacing the reservation in the same window entry. */
  tokens: number;
  /** Real cost; null when unknown. */
  costNano: number | null;
  labels?: UsageLabels;
  usage: TokenUsage;
  /**
   * A request's settlement (booked once, by its id, even when replayed after a timeout that
   * hid its success); false or absent for a release, which books nothing.
   */
  mark?: boolean;
  /** Epoch ms when the request ended (Redis: a settlement that ended before a rebuild is in it already). */
  endedAt?: number;
}

export interface RawRenew {
  now?: number;
  leaseTtlMs: number;
  leases: Array<{ id: string; scopes: string[] }>;
}

export interface UsageRow {
  day: string;
  key: string;
  team: string;
  model: string;
  requests: number;
  input: number;
  cachedInput: number;
  cacheWrite: number;
  output: number;
  costNano: number;
  /** Requests with a known cost (those in costNano). */
  priced: number;
  /** From the request ledger only: answers served by the exact cache, and what they saved (nano-USD). */
  cacheHits?: number;
  savedNano?: number;
}

export interface ScopeStore {
  admit(request: RawAdmit): Promise<RawAdmitResult>;
  settle(settlement: RawSettle): Promise<void>;
  renew(renewal: RawRenew): Promise<void>;
  figures(scopes: RawScope[], now?: number): Promise<{ now: number; figures: RawFigures[] }>;
  /** Rows of the UTC days from `fromDay` to `toDay`, inclusive (`YYYY-MM-DD`). */
  usageRows(fromDay: string, toDay: string): Promise<UsageRow[]>;
  /** Redis: data losses seen and rebuilds made by this instance. */
  readonly recovery?: { dataLosses: number; rebuilds: number };
  /** A SQLite file's lock waits (memory backend), for metrics. */
  lockStats?(): LockStats | undefined;
  close(): Promise<void>;
}
