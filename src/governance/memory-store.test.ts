import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from './engine.ts';
import { MemoryStore } from './memory-store.ts';
import { StateUnavailableError } from './types.ts';
import { backendSuite, recordingLogger, T0 } from './testing/backend-suite.ts';
import type { Scope } from './types.ts';

backendSuite('memory', async () => {
  const engine = createEngine(new MemoryStore(), { log: recordingLogger(), renewEveryMs: 3_600_000 });
  return { a: engine, b: engine, close: () => engine.close() };
});

describe('memory store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-state-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps spend and usage across a restart (SQLite file), and enforces the budget from them', async () => {
    const path = join(dir, 'state.sqlite');
    const scopes: Scope[] = [{ name: 'key:persist', limits: { budget: { usd: 1, period: 'monthly' } } }];
    const first = createEngine(new MemoryStore({ path }), { log: recordingLogger() });
    const r = await first.admit({ scopes, tokens: 100, costUsd: 0.9, now: T0 });
    if (r.status !== 'admitted') throw new Error(r.status);
    await first.settle(r.lease, { usage: { input: 60, cachedInput: 0, cacheWrite: 0, output: 40 }, costUsd: 0.75, labels: { key: 'persist', team: 'search', model: 'gpt-4o' }, now: T0 });
    await first.close();

    const second = createEngine(new MemoryStore({ path }), { log: recordingLogger() });
    const [status] = await second.status(scopes, T0 + 1);
    expect(status!.budget).toMatchObject({ spentUsd: 0.75, remainingUsd: 0.25 });
    const refused = await second.admit({ scopes, tokens: 100, costUsd: 0.3, now: T0 + 2 });
    expect(refused.status === 'refused' && refused.refusal).toMatchObject({ kind: 'budget', final: true });
    const page = await second.usage({ startTime: T0 / 1000, endTime: T0 / 1000 + 60, groupBy: ['key', 'team', 'model'] });
    expect(page.data[0]!.results).toEqual([
      expect.objectContaining({ key: 'persist', team: 'search', model: 'gpt-4o', num_model_requests: 1, input_tokens: 60, output_tokens: 40, amount: { value: 0.75, currency: 'usd' } }),
    ]);
    await second.close();
  });

  it('books what a crashed process left reserved at the next open, once; a lease that expired is not booked twice', async () => {
    const path = join(dir, 'crash.sqlite');
    const scope = { name: 'key:crash', budgetNano: 10e9, period: 'total' as const };
    const crashed = new MemoryStore({ path });
    await crashed.admit({ id: 'in-flight', now: T0, tokens: 1, costNano: 3e9, leaseTtlMs: 60_000, scopes: [scope] });
    await crashed.admit({ id: 'expires', now: T0, tokens: 1, costNano: 2e9, leaseTtlMs: 1_000, scopes: [scope] });
    // The short lease expires: charged its worst case now, and gone from the file.
    const { figures } = await crashed.figures([scope], T0 + 5_000);
    expect(figures[0]).toMatchObject({ spentNano: 2e9, reservedNano: 3e9 });
    // No close: the process died. The next open books the request that was still in flight.
    const next = new MemoryStore({ path });
    expect(next.recovered).toEqual({ requests: 1, nano: 3e9 });
    expect((await next.figures([scope], T0 + 6_000)).figures[0]).toMatchObject({ spentNano: 5e9, reservedNano: 0 });
    await next.close();
    const again = new MemoryStore({ path });
    expect(again.recovered).toEqual({ requests: 0, nano: 0 });
    expect((await again.figures([scope], T0 + 7_000)).figures[0]).toMatchObject({ spentNano: 5e9 });
    await again.close();
    await crashed.close();
  });

  it('renews the leases of requests in flight, so a long stream keeps its slot', async () => {
    let now = T0;
    const engine = createEngine(new MemoryStore({ now: () => now }), { log: recordingLogger(), now: () => now, leaseTtlMs: 30_000, renewEveryMs: 5 });
    const scopes: Scope[] = [{ name: 'key:long', limits: { concurrency: 1 } }];
    const r = await engine.admit({ scopes, tokens: 1, costUsd: 0 });
    expect(r.status).toBe('admitted');
    for (let i = 0; i < 6; i++) {
      now += 20_000;
      await sleep(30);
      expect((await engine.admit({ scopes, tokens: 1, costUsd: 0 })).status).toBe('refused');
    }
    if (r.status === 'admitted') await engine.settle(r.lease, { usage: { input: 1, cachedInput: 0, cacheWrite: 0, output: 1 }, costUsd: 0 });
    expect((await engine.admit({ scopes, tokens: 1, costUsd: 0 })).status).toBe('admitted');
    await engine.close();
  });
});

describe('memory store: a state file another connection has write-locked', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-state-lock-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const scope = { name: 'key:locked', budgetNano: 100e9, period: 'total' as const };
  const admit = (store: MemoryStore, id: string, now = T0) => store.admit({ id, now, tokens: 1, costNano: 1e9, leaseTtlMs: 1_000, scopes: [scope] });

  /** A second connection (a cluster worker's ledger, say) takes the write lock and gives it back after `ms`. */
  function holdLock(path: string, ms: number): Promise<void> {
    const db = new DatabaseSync(path);
    db.exec('BEGIN IMMEDIATE');
    return sleep(ms).then(() => {
      db.exec('COMMIT');
      db.close();
    });
  }

  it('a lock held for a moment (a ledger batch) is waited out: the budgeted request is admitted, counted, not logged', async () => {
    const path = join(dir, 'moment.sqlite');
    const log = recordingLogger();
    const store = new MemoryStore({ path, log });
    const released = holdLock(path, 40);
    const r = await admit(store, 'a');
    await released;
    expect(r.admitted).toBe(true);
    expect(store.lockStats()!.busy).toBeGreaterThanOrEqual(1);
    expect(store.lockStats()!.locked).toBe(false);
    // Its reservation reached the file (another process sees it).
    const reader = new DatabaseSync(path, { readOnly: true });
    expect(reader.prepare('SELECT id, nano FROM reservations').all()).toEqual([{ id: 'a', nano: 1e9 }]);
    reader.close();
    expect(log.lines).toEqual([]);
    await store.close();
  });

  it('a lock held longer is an outage: the first call gives up after its wait, later ones at once, one line each way', async () => {
    const path = join(dir, 'outage.sqlite');
    const log = recordingLogger();
    const store = new MemoryStore({ path, log });
    const released = holdLock(path, 1_000);
    let at = performance.now();
    await expect(admit(store, 'a')).rejects.toBeInstanceOf(StateUnavailableError);
    const waited = performance.now() - at;
    at = performance.now();
    await expect(admit(store, 'b')).rejects.toBeInstanceOf(StateUnavailableError);
    const second = performance.now() - at;
    // Waited about LOCK_WAIT_MS (200), then did not wait again (the 5 ms busy timeout only).
    expect(waited).toBeGreaterThan(100);
    expect(second).toBeLessThan(waited / 2);
    expect(log.lines.filter((l) => l.msg.includes('is locked by another process'))).toHaveLength(1);
    await released;
    expect((await admit(store, 'c')).admitted).toBe(true);
    expect(log.lines.filter((l) => l.msg.includes('is writable again'))).toHaveLength(1);
    expect((await store.figures([scope], T0)).figures[0]).toMatchObject({ spentNano: 0, reservedNano: 1e9 });
    await store.close();
  });

  it('an expired lease whose booking meets a lock stays held until it is booked, once', async () => {
    const path = join(dir, 'expired.sqlite');
    const store = new MemoryStore({ path, log: recordingLogger() });
    expect((await admit(store, 'dead')).admitted).toBe(true);
    // Past its lease: the next call books its worst case; the file is locked for longer than the wait.
    const released = holdLock(path, 600);
    await expect(store.figures([scope], T0 + 5_000)).rejects.toBeInstanceOf(StateUnavailableError);
    await released;
    expect((await store.figures([scope], T0 + 6_000)).figures[0]).toMatchObject({ spentNano: 1e9, reservedNano: 0 });
    expect((await store.figures([scope], T0 + 7_000)).figures[0]).toMatchObject({ spentNano: 1e9, reservedNano: 0 });
    const reader = new DatabaseSync(path, { readOnly: true });
    expect(reader.prepare('SELECT COUNT(*) AS n FROM reservations').get()).toEqual({ n: 0 });
    reader.close();
    await store.close();
  });
});
