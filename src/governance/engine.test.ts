import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createEngine } from './engine.ts';
import { MemoryStore } from './memory-store.ts';
import type { RawSettle, ScopeStore } from './store.ts';
import { recordingLogger, T0 } from './testing/backend-suite.ts';
import { StateUnavailableError, type Scope } from './types.ts';

/** A memory store that fails on demand, counting what reaches it. */
function flakyStore() {
  const inner = new MemoryStore();
  const state = { failure: undefined as Error | undefined, admits: 0, settles: [] as RawSettle[] };
  const store: ScopeStore = {
    async admit(r) {
      state.admits++;
      if (state.failure) throw state.failure;
      return inner.admit(r);
    },
    async settle(s) {
      if (state.failure) throw state.failure;
      state.settles.push(s);
      return inner.settle(s);
    },
    renew: (r) => inner.renew(r),
    figures: (s, now) => inner.figures(s, now),
    usageRows: (from, to) => inner.usageRows(from, to),
    close: () => inner.close(),
  };
  return { store, state };
}

const scopes: Scope[] = [{ name: 'key:k', limits: { rpm: 10, budget: { usd: 10, period: 'daily' } } }];
const usage = { input: 10, cachedInput: 0, cacheWrite: 0, output: 5 };

describe('engine', () => {
  it('asks the store nothing for a key without limits, or for an unpriced request against a budget', async () => {
    const { store, state } = flakyStore();
    const engine = createEngine(store, { log: recordingLogger() });
    expect(await engine.admit({ scopes: [], tokens: 10, costUsd: null, now: T0 })).toMatchObject({ status: 'admitted', lease: { reserved: false } });
    expect(await engine.admit({ scopes, tokens: 10, costUsd: null, now: T0 })).toMatchObject({ status: 'refused', refusal: { kind: 'unpriced', scope: 'key:k' } });
    expect(state.admits).toBe(0);
    await engine.close();
  });

  it('writes no usage records when the ledger keeps them: a key without limits settles nothing, a limited one its spend only', async () => {
    const { store, state } = flakyStore();
    const engine = createEngine(store, { log: recordingLogger(), usageRecords: false });
    const free = await engine.admit({ scopes: [], tokens: 10, costUsd: 0.5, now: T0 });
    const limited = await engine.admit({ scopes, tokens: 10, costUsd: 1, now: T0 });
    if (free.status !== 'admitted' || limited.status !== 'admitted') throw new Error('not admitted');
    expect(await engine.settle(free.lease, { usage, costUsd: 0.5, labels: { key: 'free', model: 'm' }, now: T0 })).toBe('settled');
    expect(await engine.settle(limited.lease, { usage, costUsd: 0.5, labels: { key: 'k', model: 'm' }, now: T0 })).toBe('settled');
    expect(state.settles.map((s) => ({ scopes: s.scopes, costNano: s.costNano, labels: s.labels }))).toEqual([{ scopes: ['key:k'], costNano: 500_000_000, labels: undefined }]);
    expect(await store.usageRows('1970-01-01', '2999-12-31')).toEqual([]);
    expect((await engine.status(scopes, T0))[0]).toMatchObject({ spentUsd: 0.5 });
    await engine.close();
  });

  it('writes usage records by default, for a key without limits too', async () => {
    const { store, state } = flakyStore();
    const engine = createEngine(store, { log: recordingLogger() });
    const free = await engine.admit({ scopes: [], tokens: 10, costUsd: 0.5, now: T0 });
    if (free.status !== 'admitted') throw new Error('not admitted');
    expect(await engine.settle(free.lease, { usage, costUsd: 0.5, labels: { key: 'free', model: 'm' }, now: T0 })).toBe('settled');
    expect(state.settles).toHaveLength(1);
    expect(await store.usageRows('1970-01-01', '2999-12-31')).toMatchObject([{ key: 'free', model: 'm', requests: 1, input: 10, output: 5, costNano: 500_000_000 }]);
    await engine.close();
  });

  it('makes its own request ids: two requests with the same client id are two requests', async () => {
    const engine = createEngine(new MemoryStore(), { log: recordingLogger() });
    const one: Scope[] = [{ name: 'key:one', limits: { concurrency: 1 } }];
    expect((await engine.admit({ scopes: one, tokens: 1, costUsd: 0, now: T0 })).status).toBe('admitted');
    expect((await engine.admit({ scopes: one, tokens: 1, costUsd: 0, now: T0 })).status).toBe('refused');
    await engine.close();
  });

  it('keeps settlements while the store is down and replays them in order when it is back', async () => {
    const { store, state } = flakyStore();
    const engine = createEngine(store, { log: recordingLogger(), retryEveryMs: 10 });
    const a = await engine.admit({ scopes, tokens: 10, costUsd: 1, now: T0 });
    const b = await engine.admit({ scopes, tokens: 10, costUsd: 1, now: T0 });
    if (a.status !== 'admitted' || b.status !== 'admitted') throw new Error('not admitted');
    state.failure = new StateUnavailableError('down');
    expect(await engine.settle(a.lease, { usage, costUsd: 0.5, labels: { key: 'k', model: 'm' }, now: T0 })).toBe('queued');
    expect(await engine.settle(b.lease, { usage, costUsd: 0.25, labels: { key: 'k', model: 'm' }, now: T0 })).toBe('queued');
    await sleep(50);
    expect(state.settles).toHaveLength(0);
    state.failure = undefined;
    await sleep(50);
    expect(state.settles.map((s) => s.id)).toEqual([a.lease.id, b.lease.id]);
    const [status] = await engine.status(scopes, T0 + 1);
    expect(status!.budget).toMatchObject({ spentUsd: 0.75, reservedUsd: 0 });
    await engine.close();
  });

  it('gives back, later, what an admission whose reply was lost may have reserved, and nothing when it was not sent', async () => {
    const { store, state } = flakyStore();
    const engine = createEngine(store, { log: recordingLogger(), retryEveryMs: 10 });
    state.failure = new StateUnavailableError('not connected', { maybeApplied: false });
    expect(await engine.admit({ scopes, tokens: 10, costUsd: 1, now: T0 })).toMatchObject({ status: 'unavailable', lease: { reserved: false } });
    state.failure = new StateUnavailableError('timed out');
    const lost = await engine.admit({ scopes, tokens: 10, costUsd: 1, now: T0 });
    state.failure = undefined;
    await sleep(50);
    expect(state.settles).toEqual([expect.objectContaining({ id: lost.status === 'unavailable' && lost.lease.id, final: true, reserved: true, tokens: 0, costNano: 0 })]);
    await engine.close();
  });

  it('logs and drops a settlement the store rejects (a bug), instead of retrying it for ever', async () => {
    const { store, state } = flakyStore();
    const log = recordingLogger();
    const engine = createEngine(store, { log });
    const r = await engine.admit({ scopes, tokens: 10, costUsd: 1, now: T0 });
    if (r.status !== 'admitted') throw new Error(r.status);
    state.failure = new Error('ERR Error running script');
    expect(await engine.settle(r.lease, { usage, costUsd: 0.5, now: T0 })).toBe('failed');
    expect(log.lines).toEqual([{ level: 'error', msg: 'state backend rejected a settlement' }]);
    state.failure = undefined;
    await engine.close();
  });

  it('bounds the queue, dropping the oldest and saying so once', async () => {
    const { store, state } = flakyStore();
    const log = recordingLogger();
    const engine = createEngine(store, { log, maxQueued: 3, retryEveryMs: 10 });
    state.failure = new StateUnavailableError('down', { maybeApplied: false });
    const leases = [];
    for (let i = 0; i < 5; i++) {
      const r = await engine.admit({ scopes: [], tokens: 1, costUsd: 0.01, now: T0 + i });
      if (r.status !== 'admitted') throw new Error(r.status);
      leases.push(r.lease);
      await engine.settle(r.lease, { usage, costUsd: 0.01, labels: { key: 'k', model: 'm' } });
    }
    expect(log.lines.filter((l) => l.level === 'error')).toHaveLength(1);
    state.failure = undefined;
    await sleep(50);
    expect(state.settles.map((s) => s.at)).toEqual([T0 + 2, T0 + 3, T0 + 4]);
    await engine.close();
  });
});
