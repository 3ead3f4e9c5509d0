/**
 * The behaviour every state backend must have, run against each (memory-store.test.ts,
 * redis-store.test.ts): the same cases, the same numbers. Time is always passed explicitly, so
 * windows, leases and calendar periods are exercised to the millisecond.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AdmitResult, GovernanceLogger, Lease, Scope, StateBackend, TokenUsage } from '../types.ts';

export interface BackendPair {
  /** Two instances sharing one state (for memory, the same instance twice). */
  a: StateBackend;
  b: StateBackend;
  close(): Promise<void>;
}

export type BackendFactory = () => Promise<BackendPair>;

/** Records what the engine logs. */
export function recordingLogger(): GovernanceLogger & { lines: Array<{ level: string; msg: string }> } {
  const lines: Array<{ level: string; msg: string }> = [];
  const at = (level: string) => (_obj: object, msg: string) => void lines.push({ level, msg });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

/** Saturday 2026-01-31 23:00:00 UTC: an hour before a day, a month (and a day before an ISO week) ends. */
export const T0 = Date.UTC(2026, 0, 31, 23, 0, 0);

const usage = (input: number, output: number): TokenUsage => ({ input, cachedInput: 0, cacheWrite: 0, output });

const lease = (r: AdmitResult): Lease => {
  if (r.status !== 'admitted') throw new Error(`expected admitted, got ${JSON.stringify(r)}`);
  return r.lease;
};

/** A deterministic generator, so a failing property run can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export function backendSuite(name: string, factory: BackendFactory): void {
  describe(`state backend conformance: ${name}`, () => {
    let pair: BackendPair | undefined;
    const open = async () => (pair = await factory());
    afterEach(async () => {
      await pair?.close();
      pair = undefined;
    });

    describe('requests per minute', () => {
      it('admits exactly rpm of a concurrent burst spread over two instances', async () => {
        const { a, b } = await open();
        const scopes: Scope[] = [{ name: 'key:burst', limits: { rpm: 20 } }];
        const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).admit({ scopes, tokens: 10, costUsd: 0, now: T0 })));
        expect(results.filter((r) => r.status === 'admitted')).toHaveLength(20);
        const refused = results.filter((r) => r.status === 'refused');
        expect(refused).toHaveLength(30);
        for (const r of refused) expect(r.status === 'refused' && r.refusal).toMatchObject({ scope: 'key:burst', kind: 'requests', used: 20, limit: 20, retryAfterMs: 60_000, final: false });
      });

      it('says when the window has room again', async () => {
        const { a } = await open();
        const scopes: Scope[] = [{ name: 'key:k', limits: { rpm: 2 } }];
        lease(await a.admit({ scopes, tokens: 1, costUsd: 0, now: T0 }));
        lease(await a.admit({ scopes, tokens: 1, costUsd: 0, now: T0 + 10_000 }));
        const r = await a.admit({ scopes, tokens: 1, costUsd: 0, now: T0 + 20_000 });
        expect(r.status === 'refused' && r.refusal).toMatchObject({ kind: 'requests', used: 2, limit: 2, requested: 1, retryAfterMs: 40_000 });
        expect(r.status === 'refused' && r.quota[0]!.requests).toEqual({ limit: 2, remaining: 0, resetMs: 50_000 });
        expect((await a.admit({ scopes, tokens: 1, costUsd: 0, now: T0 + 59_999 })).status).toBe('refused');
        expect((await a.admit({ scopes, tokens: 1, costUsd: 0, now: T0 + 60_000 })).status).toBe('admitted');
      });

      it('slides: no burst of 2N across a minute boundary', async () => {
        const { a } = await open();
        const scopes: Scope[] = [{ name: 'key:slide', limits: { rpm: 10 } }];
        const minute = Date.UTC(2026, 0, 31, 12, 1, 0);
        for (let i = 0; i < 10; i++) lease(await a.admit({ scopes, tokens: 1, costUsd: 0, now: minute - 100 }));
        // A fixed window would start afresh at `minute`; the sliding one still holds the 10.
        const after = await Promise.all(Array.from({ length: 10 }, () => a.admit({ scopes, tokens: 1, costUsd: 0, now: minute + 100 })));
        expect(after.filter((r) => r.status === 'admitted')).toHaveLength(0);
        expect((await a.admit({ scopes, tokens: 1, costUsd: 0, now: minute + 59_900 })).status).toBe('admitted');
      });

      it('never admits more than rpm in any 60 s window, and refuses only when it is full (random arrivals)', async () => {
        const { a, b } = await open();
        const rpm = 7;
        const scopes: Scope[] = [{ name: 'key:prop', limits: { rpm } }];
        const next = random(42);
        const admitted: number[] = [];
        let t = T0;
        for (let i = 0; i < 300; i++) {
          t += Math.floor(next() * 4_000);
          const r = await (i % 2 ? a : b).admit({ scopes, tokens: 1, costUsd: 0, now: t });
          const inWindow = admitted.filter((at) => at > t - 60_000).length;
          if (r.status === 'admitted') {
            expect(inWindow).toBeLessThan(rpm);
            admitted.push(t);
          } else {
            expect(inWindow).toBe(rpm);
            expect(r.status === 'refused' && r.refusal.retryAfterMs).toBe(admitted[admitted.length - rpm]! + 60_000 - t);
          }
        }
        expect(admitted.length).toBeGreaterThan(50);
      });
    });

    describe('tokens per minute', () => {
      it('reserves the estimate, settles to real usage, and frees what was not used', async () => {
        const { a, b } = await open();
        const scopes: Scope[] = [{ name: 'key:tpm', limits: { tpm: 1_000, rpm: 100 } }];
        const first = lease(await a.admit({ scopes, tokens: 600, costUsd: 0, now: T0 }));
        const refused = await b.admit({ scopes, tokens: 600, costUsd: 0, now: T0 + 1_000 });
        expect(refused.status === 'refused' && refused.refusal).toMatchObject({ kind: 'tokens', used: 600, limit: 1_000, requested: 600, retryAfterMs: 59_000, final: false });
        await a.settle(first, { usage: usage(150, 50), costUsd: 0, now: T0 + 2_000 });
        const second = await b.admit({ scopes, tokens: 600, costUsd: 0, now: T0 + 3_000 });
        expect(second.status === 'admitted' && second.quota[0]!.tokens).toEqual({ limit: 1_000, remaining: 200, resetMs: 60_000 });
        // A failed request gives its tokens back but still counts as a request.
        await b.release(lease(second));
        const [status] = await a.status(scopes, T0 + 4_000);
        expect(status!.tokens!.remaining).toBe(800);
        expect(status!.requests!.remaining).toBe(98);
      });

      it('refuses a request larger than tpm for good', async () => {
        const { a } = await open();
        const r = await a.admit({ scopes: [{ name: 'key:big', limits: { tpm: 500 } }], tokens: 501, costUsd: 0, now: T0 });
        expect(r.status === 'refused' && r.refusal).toMatchObject({ kind: 'tokens', requested: 501, retryAfterMs: null, final: true });
      });

      it('never lets the tokens of a window exceed tpm (random sizes, random settlements)', async () => {
        const { a, b } = await open();
        const tpm = 5_000;
        const scopes: Scope[] = [{ name: 'key:tprop', limits: { tpm } }];
        const next = random(7);
        const entries: Array<{ at: number; tokens: number; lease: Lease | undefined }> = [];
        let t = T0;
        for (let i = 0; i < 200; i++) {
          t += Math.floor(next() * 2_000);
          const tokens = 1 + Math.floor(next() * 1_500);
          const backend = i % 2 ? a : b;
          const r = await backend.admit({ scopes, tokens, costUsd: 0, now: t });
          const live = entries.filter((e) => e.at > t - 60_000).reduce((sum, e) => sum + e.tokens, 0);
          if (r.status === 'admitted') {
            expect(live + tokens).toBeLessThanOrEqual(tpm);
            entries.push({ at: t, tokens, lease: r.lease });
          } else {
            expect(live + tokens).toBeGreaterThan(tpm);
          }
          // Settle an earlier request to what it really used (at most its reservation).
          const running = entries.find((e) => e.lease && next() < 0.5);
          if (running?.lease) {
            const real = Math.floor(running.tokens * next());
            await backend.settle(running.lease, { usage: usage(real, 0), costUsd: 0, now: t });
            running.tokens = real;
            running.lease = undefined;
          }
        }
      });
    });

    describe('concurrency', () => {
      it('never has more in flight than the limit, and a settled request frees its slot', async () => {
        const { a, b } = await open();
        const scopes: Scope[] = [{ name: 'key:conc', limits: { concurrency: 3 } }];
        const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).admit({ scopes, tokens: 1, costUsd: 0, now: T0 })));
        const admitted = burst.filter((r) => r.status === 'admitted');
        expect(admitted).toHaveLength(3);
        const refused = burst.find((r) => r.status === 'refused');
        expect(refused?.status === 'refused' && refused.refusal).toMatchObject({ kind: 'concurrency', used: 3, limit: 3, retryAfterMs: 1_000, final: false });
        await a.settle(lease(admitted[0]!), { usage: usage(1, 1), costUsd: 0, now: T0 + 10 });
        expect((await b.admit({ scopes, tokens: 1, costUsd: 0, now: T0 + 20 })).status).toBe('admitted');
        expect((await b.admit({ scopes, tokens: 1, costUsd: 0, now: T0 + 30 })).status).toBe('refused');
      });

      it('frees the slots of leases nobody renews (an instance died)', async () => {
        const { a } = await open();
        const scopes: Scope[] = [{ name: 'key:leak', limits: { concurrency: 2 } }];
        lease(await a.admit({ scopes, tokens: 1, costUsd: 0, now: T0 }));
        lease(await a.admit({ scopes, tokens: 1, costUsd: 0, now: T0 }));
        expect((await a.admit({ scopes, tokens: 1, costUsd: 0, now: T0 + 29_999 })).status).toBe('refused');
        expect((await a.admit({ scopes, tokens: 1, costUsd: 0, now: T0 + 30_000 })).status).toBe('admitted');
      });
    });

    describe('budgets', () => {
      it('admits exactly the requests whose worst case fits, and books the real cost', async () => {
        const { a, b } = await open();
        const scopes: Scope[] = [{ name: 'key:budget', limits: { budget: { usd: 1, period: 'monthly' } } }];
        // Worst case $0.30 each: three fit in $1 at once, whatever the concurrency.
        const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).admit({ scopes, tokens: 100, costUsd: 0.3, now: T0 })));
        const first = burst.filter((r) => r.status === 'admitted');
        expect(first).toHaveLength(3);
        const pending = burst.find((r) => r.status === 'refused');
        expect(pending?.status === 'refused' && pending.refusal).toMatchObject({ kind: 'budget', final: false, used: 0.9, limit: 1, requested: 0.3 });
        for (const r of first) await a.settle(lease(r), { usage: usage(10, 10), costUsd: 0.1, now: T0 + 1 });
        // Then one at a time: admitted while spent + 0.30 <= 1, i.e. at 0.3, 0.4, ..., 0.7 spent.
        let more = 0;
        for (let i = 0; i < 20; i++) {
          const r = await b.admit({ scopes, tokens: 100, costUsd: 0.3, now: T0 + 10 + i });
          if (r.status !== 'admitted') {
            expect(r.status === 'refused' && r.refusal).toMatchObject({ kind: 'budget', final: true, retryAfterMs: null, resetsAt: Date.UTC(2026, 1, 1) });
            break;
          }
          more++;
          await b.settle(r.lease, { usage: usage(10, 10), costUsd: 0.1, now: T0 + 10 + i });
        }
        expect(more).toBe(5);
        const [status] = await a.status(scopes, T0 + 100);
        expect(status!.budget).toMatchObject({ usd: 1, period: 'monthly', reservedUsd: 0, resetsAt: Date.UTC(2026, 1, 1) });
        expect(status!.budget!.spentUsd).toBeCloseTo(0.8, 9);
        expect(status!.budget!.remainingUsd).toBeCloseTo(0.2, 9);
      });

      it('rolls daily, weekly and monthly budgets over at UTC midnight, books a request in its admission period, and never resets total', async () => {
        const { a } = await open();
        const endOfJanuary = Date.UTC(2026, 0, 31, 23, 59, 59, 999);
        const february = Date.UTC(2026, 1, 1);
        for (const period of ['daily', 'monthly'] as const) {
          const scopes: Scope[] = [{ name: `key:${period}`, limits: { budget: { usd: 1, period } } }];
          const late = lease(await a.admit({ scopes, tokens: 1, costUsd: 0.5, now: endOfJanuary - 1_000 }));
          await a.settle(late, { usage: usage(1, 1), costUsd: 0.5, now: february + 1_000 });
          const last = lease(await a.admit({ scopes, tokens: 1, costUsd: 0.5, now: endOfJanuary }));
          expect((await a.admit({ scopes, tokens: 1, costUsd: 0.01, now: endOfJanuary })).status).toBe('refused');
          await a.settle(last, { usage: usage(1, 1), costUsd: 0.5, now: february });
          // The new period starts empty: both requests admitted before midnight were booked before it.
          const r = await a.admit({ scopes, tokens: 1, costUsd: 1, now: february });
          expect(r.status, period).toBe('admitted');
        }
        // 2026-02-01 is a Sunday: the ISO week turns on Monday the 2nd.
        const weekly: Scope[] = [{ name: 'key:weekly', limits: { budget: { usd: 1, period: 'weekly' } } }];
        await a.settle(lease(await a.admit({ scopes: weekly, tokens: 1, costUsd: 1, now: endOfJanuary })), { usage: usage(1, 1), costUsd: 1, now: endOfJanuary });
        expect((await a.admit({ scopes: weekly, tokens: 1, costUsd: 0.01, now: february + 86_400_000 - 1 })).status).toBe('refused');
        expect((await a.admit({ scopes: weekly, tokens: 1, costUsd: 1, now: february + 86_400_000 })).status).toBe('admitted');
        const total: Scope[] = [{ name: 'key:total', limits: { budget: { usd: 1, period: 'total' } } }];
        await a.settle(lease(await a.admit({ scopes: total, tokens: 1, costUsd: 1, now: T0 })), { usage: usage(1, 1), costUsd: 1, now: T0 });
        const later = await a.admit({ scopes: total, tokens: 1, costUsd: 0.01, now: T0 + 400 * 86_400_000 });
        expect(later.status === 'refused' && later.refusal).toMatchObject({ kind: 'budget', final: true, resetsAt: null });
      });

      it('charges a lease nobody settled its worst case once it expires', async () => {
        const { a } = await open();
        const scopes: Scope[] = [{ name: 'key:dead', limits: { budget: { usd: 1, period: 'total' } } }];
        lease(await a.admit({ scopes, tokens: 1, costUsd: 0.4, now: T0 }));
        const [status] = await a.status(scopes, T0 + 31_000);
        expect(status!.budget).toMatchObject({ spentUsd: 0.4, reservedUsd: 0 });
      });

      it('refuses an unpriced request on a scope with a budget, and records it as unpriced elsewhere', async () => {
        const { a } = await open();
        const budgeted = await a.admit({ scopes: [{ name: 'key:b', limits: { budget: { usd: 5, period: 'daily' } } }], tokens: 1, costUsd: null, now: T0 });
        expect(budgeted.status === 'refused' && budgeted.refusal).toMatchObject({ scope: 'key:b', kind: 'unpriced', final: true });
        const free = lease(await a.admit({ scopes: [{ name: 'key:free', limits: { rpm: 5 } }], tokens: 1, costUsd: null, now: T0 }));
        await a.settle(free, { usage: usage(10, 5), costUsd: null, labels: { key: 'free', model: 'mystery' }, now: T0 });
        const page = await a.usage({ startTime: T0 / 1000, endTime: T0 / 1000 + 3_600, groupBy: ['key', 'model'] });
        expect(page.data[0]!.results).toEqual([expect.objectContaining({ key: 'free', model: 'mystery', num_model_requests: 1, amount: null, unpriced_requests: 1 })]);
      });
    });

    describe('one atomic step over all scopes', () => {
      it('reserves in every scope or in none, and lists every limit that refused', async () => {
        const { a } = await open();
        const key: Scope = { name: 'key:all', limits: { rpm: 5, concurrency: 5 } };
        const target: Scope = { name: 'target:m/p/m', limits: { rpm: 1 } };
        lease(await a.admit({ scopes: [key, target], tokens: 1, costUsd: 0, now: T0 }));
        const r = await a.admit({ scopes: [key, target], tokens: 1, costUsd: 0, now: T0 + 1 });
        expect(r.status === 'refused' && r.violations.map((v) => v.scope)).toEqual(['target:m/p/m']);
        const [k] = await a.status([key], T0 + 2);
        expect(k).toMatchObject({ requests: { remaining: 4 }, concurrency: { inFlight: 1 } });
      });

      it('answers with a spent budget before a rate limit', async () => {
        const { a } = await open();
        const key: Scope = { name: 'key:order', limits: { rpm: 1, budget: { usd: 1, period: 'daily' } } };
        const team: Scope = { name: 'team:order', limits: { rpm: 2 } };
        await a.settle(lease(await a.admit({ scopes: [key, team], tokens: 1, costUsd: 0.9, now: T0 })), { usage: usage(1, 1), costUsd: 0.9, now: T0 + 1 });
        const rate = await a.admit({ scopes: [team, key], tokens: 1, costUsd: 0.05, now: T0 + 5_000 });
        expect(rate.status === 'refused' && rate.refusal).toMatchObject({ scope: 'key:order', kind: 'requests', retryAfterMs: 55_000 });
        const spent = await a.admit({ scopes: [team, key], tokens: 1, costUsd: 0.2, now: T0 + 5_000 });
        expect(spent.status === 'refused' && spent.violations.map((v) => v.kind).sort()).toEqual(['budget', 'requests']);
        expect(spent.status === 'refused' && spent.refusal).toMatchObject({ kind: 'budget', final: true, retryAfterMs: null, resetsAt: Date.UTC(2026, 1, 1) });
      });

      it('re-admits a request on another target without counting its key twice', async () => {
        const { a } = await open();
        const key: Scope = { name: 'key:fo', limits: { rpm: 10, concurrency: 1, budget: { usd: 1, period: 'daily' } } };
        const t1: Scope = { name: 'target:fo/one', limits: { rpm: 10 } };
        const t2: Scope = { name: 'target:fo/two', limits: { rpm: 10 } };
        const first = lease(await a.admit({ scopes: [key, t1], tokens: 100, costUsd: 0.2, now: T0 }));
        await a.release(first, [t1.name]);
        const again = lease(await a.admit({ id: first.id, scopes: [key, t2], tokens: 100, costUsd: 0.5, now: T0 + 10 }));
        const [k, one, two] = await a.status([key, t1, t2], T0 + 20);
        expect(k).toMatchObject({ requests: { remaining: 9 }, concurrency: { inFlight: 1 }, budget: { reservedUsd: 0.5 } });
        expect(one).toMatchObject({ requests: { remaining: 9 } });
        expect(two).toMatchObject({ requests: { remaining: 9 } });
        await a.settle(again, { usage: usage(50, 20), costUsd: 0.3, labels: { key: 'fo', model: 'm' }, now: T0 + 30 });
        const [settled] = await a.status([key], T0 + 40);
        expect(settled).toMatchObject({ concurrency: { inFlight: 0 }, budget: { spentUsd: 0.3, reservedUsd: 0 } });
      });

      it('settles once: a second settle or release changes nothing', async () => {
        const { a, b } = await open();
        const scopes: Scope[] = [{ name: 'key:once', limits: { budget: { usd: 10, period: 'daily' } } }];
        const l = lease(await a.admit({ scopes, tokens: 10, costUsd: 1, now: T0 }));
        const labels = { key: 'once', model: 'm' };
        expect(await a.settle(l, { usage: usage(5, 5), costUsd: 0.5, labels, now: T0 + 1 })).toBe('settled');
        await b.settle(l, { usage: usage(5, 5), costUsd: 0.5, labels, now: T0 + 2 });
        await b.release(l);
        const [status] = await a.status(scopes, T0 + 3);
        expect(status!.budget).toMatchObject({ spentUsd: 0.5, reservedUsd: 0 });
        const page = await a.usage({ startTime: T0 / 1000, endTime: T0 / 1000 + 60 });
        expect(page.data[0]!.results[0]!.num_model_requests).toBe(1);
      });
    });

    describe('usage records', () => {
      it('buckets requests, tokens and cost by UTC day, grouped as asked', async () => {
        const { a, b } = await open();
        const scopes: Scope[] = [{ name: 'key:u', limits: { rpm: 100 } }];
        const day1 = Date.UTC(2026, 2, 1, 10);
        const day2 = Date.UTC(2026, 2, 2, 10);
        const book = async (backend: StateBackend, now: number, key: string, model: string, costUsd: number) =>
          backend.settle(lease(await backend.admit({ scopes, tokens: 100, costUsd, now })), {
            usage: { input: 100, cachedInput: 40, cacheWrite: 10, output: 20 },
            costUsd,
            labels: { key, team: 'search', model },
            now,
          });
        await book(a, day1, 'search-prod', 'gpt-4o', 0.01);
        await book(b, day1 + 1, 'search-prod', 'gpt-4o', 0.02);
        await book(a, day1 + 2, 'search-dev', 'claude', 0.005);
        await book(b, day2, 'search-prod', 'gpt-4o', 0.04);
        const page = await a.usage({ startTime: Date.UTC(2026, 1, 28) / 1000, endTime: Date.UTC(2026, 2, 3) / 1000, groupBy: ['key', 'model'] });
        expect(page).toMatchObject({ object: 'page', has_more: false });
        expect(page.data.map((d) => [d.start_time, d.end_time])).toEqual([
          [Date.UTC(2026, 1, 28) / 1000, Date.UTC(2026, 2, 1) / 1000],
          [Date.UTC(2026, 2, 1) / 1000, Date.UTC(2026, 2, 2) / 1000],
          [Date.UTC(2026, 2, 2) / 1000, Date.UTC(2026, 2, 3) / 1000],
        ]);
        expect(page.data[0]!.results).toEqual([]);
        expect(page.data[1]!.results).toEqual([
          {
            object: 'gateway.usage.result',
            key: 'search-dev',
            team: null,
            model: 'claude',
            num_model_requests: 1,
            input_tokens: 100,
            input_cached_tokens: 40,
            input_cache_write_tokens: 10,
            output_tokens: 20,
            amount: { value: 0.005, currency: 'usd' },
            unpriced_requests: 0,
          },
          {
            object: 'gateway.usage.result',
            key: 'search-prod',
            team: null,
            model: 'gpt-4o',
            num_model_requests: 2,
            input_tokens: 200,
            input_cached_tokens: 80,
            input_cache_write_tokens: 20,
            output_tokens: 40,
            amount: { value: 0.03, currency: 'usd' },
            unpriced_requests: 0,
          },
        ]);
        const byTeam = await b.usage({ startTime: day1 / 1000, endTime: Date.UTC(2026, 2, 3) / 1000, groupBy: ['team'], models: ['gpt-4o'] });
        expect(byTeam.data.map((d) => d.results.map((r) => [r.team, r.num_model_requests, r.amount?.value]))).toEqual([[['search', 2, 0.03]], [['search', 1, 0.04]]]);
      });
    });
  });
}
