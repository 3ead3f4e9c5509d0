import { mkdtempSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { RequestLedger } from './book.ts';
import type { LedgerRow } from './record.ts';
import { SqliteLedger } from './sqlite.ts';

const quiet = pino({ level: 'silent' });
const file = () => path.join(mkdtempSync(path.join(tmpdir(), 'switchyard-book-')), 'state.sqlite');

function row(entry: string, at = Date.now()): LedgerRow {
  return {
    entry,
    id: entry,
    at,
    key: 'k',
    team: null,
    model: 'm',
    provider: 'p',
    targetModel: 't',
    ingress: 'chat',
    operation: 'chat',
    status: 200,
    errorCode: null,
    inputTokens: 1,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 1,
    costNano: 1_000,
    costNote: null,
    usageSource: 'reported',
    durationMs: 1,
    ttftMs: null,
    attempts: 1,
    cache: null,
    savedNano: null,
  };
}

describe('RequestLedger on SQLite', () => {
  it('a state file another process holds locked never stalls a flush: rows wait, then are written', async () => {
    const where = file();
    const ledger = new RequestLedger({ engine: new SqliteLedger(where), log: quiet, flushMs: 10 });
    await ledger.start();
    const other = new DatabaseSync(where);
    other.exec('BEGIN EXCLUSIVE');
    ledger.record(row('a'));
    const started = performance.now();
    await ledger.flush();
    // The busy timeout is a few ms: the serving thread is not held for the lock.
    expect(performance.now() - started).toBeLessThan(100);
    expect(ledger.stats).toMatchObject({ queued: 1, written: 0, up: false });
    other.exec('ROLLBACK');
    other.close();
    await ledger.flush();
    expect(ledger.stats).toMatchObject({ queued: 0, written: 1, up: true });
    expect(await ledger.request('a')).toEqual(row('a', (await ledger.request('a'))!.at));
    await ledger.close();
  });

  it('a lock its retry gets past is not logged; one that outlasts the retry is, once each way', async () => {
    const where = file();
    const lines: Array<{ level: string; msg: string }> = [];
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as { level: string; msg: string }) });
    const ledger = new RequestLedger({ engine: new SqliteLedger(where), log, flushMs: 10 });
    await ledger.start();
    const other = new DatabaseSync(where);
    other.exec('BEGIN EXCLUSIVE');
    ledger.record(row('a'));
    await ledger.flush();
    other.exec('ROLLBACK');
    await ledger.flush();
    expect(ledger.stats).toMatchObject({ queued: 0, written: 1, up: true });
    expect(lines.map((l) => l.msg)).toEqual([]);
    // Two failures in a row: an outage, said when it starts and when it ends.
    other.exec('BEGIN EXCLUSIVE');
    ledger.record(row('b'));
    await ledger.flush();
    await ledger.flush();
    other.exec('ROLLBACK');
    other.close();
    await ledger.flush();
    expect(ledger.stats).toMatchObject({ queued: 0, written: 2, up: true });
    expect(lines.map((l) => l.msg)).toEqual([
      expect.stringContaining('request ledger: the database cannot be written'),
      'request ledger: the database takes writes again; the queued rows are written',
    ]);
    await ledger.close();
  });

  it('drops and counts what does not fit the queue while the database is down', async () => {
    const where = file();
    const ledger = new RequestLedger({ engine: new SqliteLedger(where), log: quiet, maxQueued: 3 });
    await ledger.start();
    const other = new DatabaseSync(where);
    other.exec('BEGIN EXCLUSIVE');
    for (const e of ['a', 'b', 'c', 'd', 'e']) ledger.record(row(e));
    expect(ledger.stats).toMatchObject({ queued: 3, dropped: 2 });
    other.exec('ROLLBACK');
    other.close();
    await ledger.close();
    const reopened = new SqliteLedger(where);
    await reopened.migrate();
    expect(await reopened.request('c')).toBeDefined();
    expect(await reopened.request('d')).toBeUndefined();
    await reopened.close();
  });

  it('retention deletes the rows older than the days kept, at start', async () => {
    const where = file();
    const first = new RequestLedger({ engine: new SqliteLedger(where), log: quiet });
    await first.start();
    first.record(row('old', Date.now() - 10 * 86_400_000));
    first.record(row('new'));
    await first.close();
    const second = new RequestLedger({ engine: new SqliteLedger(where), log: quiet, retentionDays: 7 });
    await second.start();
    await expect.poll(() => second.request('old')).toBeUndefined();
    expect(await second.request('new')).toBeDefined();
    await second.close();
  });

  it('writes batches of every size, each row once with its own values, through the few statement sizes', async () => {
    const engine = new SqliteLedger(':memory:');
    await engine.migrate();
    let n = 0;
    // Sizes below, at and across the statement sizes (64, 16, 4, 1), and a full queue's batch.
    for (const size of [1, 3, 4, 5, 17, 63, 64, 65, 99, 150, 500]) {
      const batch = Array.from({ length: size }, (_, i) => ({ ...row(`s${size}-${i}`), inputTokens: i, outputTokens: size }));
      await engine.insert(batch);
      n += size;
      for (const i of [0, Math.floor(size / 2), size - 1]) expect(await engine.request(`s${size}-${i}`)).toMatchObject({ inputTokens: i, outputTokens: size });
    }
    const day = new Date().toISOString().slice(0, 10);
    expect((await engine.usageRows(day, day)).reduce((sum, r) => sum + r.requests, 0)).toBe(n);
    await engine.close();
  });
});
