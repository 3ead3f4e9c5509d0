import { mkdtempSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { RequestLedger } from './book.ts';
import type { LedgerRow } from './record.ts';
import { SqliteLedger } from './sqlite.ts';
import { ThreadedEngine } from './thread.ts';

const quiet = pino({ level: 'silent' });
const file = () => path.join(mkdtempSync(path.join(tmpdir(), 'switchyard-thread-')), 'state.sqlite');

function row(entry: string, key = 'k'): LedgerRow {
  return {
    entry,
    id: `req-${entry}`,
    at: Date.now(),
    key,
    team: 'lab',
    model: 'm',
    provider: 'p',
    targetModel: 't',
    ingress: 'chat',
    operation: 'chat',
    status: 200,
    errorCode: null,
    inputTokens: 3,
    cachedTokens: 1,
    cacheWriteTokens: 0,
    outputTokens: 2,
    costNano: 1_500,
    costNote: null,
    usageSource: 'reported',
    durationMs: 4,
    ttftMs: 1,
    attempts: 1,
    cache: null,
    savedNano: null,
  };
}

describe('the ledger on its writer thread', () => {
  it('writes, reads and reports as the engine on this thread does', async () => {
    const where = file();
    const ledger = new RequestLedger({ engine: new ThreadedEngine({ kind: 'sqlite', path: where }, () => {}), log: quiet, flushMs: 10 });
    await ledger.start();
    for (let i = 0; i < 250; i++) ledger.record(row(`e${i}`, i % 2 ? 'odd' : 'even'));
    await ledger.flush();
    expect(ledger.stats).toMatchObject({ queued: 0, written: 250, up: true });
    expect(await ledger.request('req-e7')).toEqual({ ...row('e7', 'odd'), at: expect.any(Number) });
    expect(await ledger.spendByKey()).toEqual(
      new Map([
        ['even', (125 * 1_500) / 1e9],
        ['odd', (125 * 1_500) / 1e9],
      ]),
    );
    const day = new Date().toISOString().slice(0, 10);
    expect((await ledger.engine.usageRows(day, day)).reduce((n, r) => n + r.requests, 0)).toBe(250);
    await ledger.close();
    // The rows are in the file, as this thread's own connection reads them.
    const direct = new SqliteLedger(where);
    await direct.migrate();
    expect(await direct.request('req-e249')).toMatchObject({ entry: 'e249', key: 'odd' });
    await direct.close();
  });

  it('a graceful close writes what was queued a moment before', async () => {
    const where = file();
    const ledger = new RequestLedger({ engine: new ThreadedEngine({ kind: 'sqlite', path: where }, () => {}), log: quiet, flushMs: 60_000 });
    await ledger.start();
    for (let i = 0; i < 30; i++) ledger.record(row(`late${i}`));
    await ledger.close();
    const db = new DatabaseSync(where);
    expect(db.prepare('SELECT COUNT(*) AS n FROM ledger_requests').get()).toEqual({ n: 30 });
    db.close();
  });

  it('a state file locked by another process: the flush answers at once, the rows wait and are written after', async () => {
    const where = file();
    const ledger = new RequestLedger({ engine: new ThreadedEngine({ kind: 'sqlite', path: where }, () => {}), log: quiet, flushMs: 10 });
    await ledger.start();
    const other = new DatabaseSync(where);
    other.exec('BEGIN EXCLUSIVE');
    ledger.record(row('a'));
    const started = performance.now();
    await ledger.flush();
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(ledger.stats).toMatchObject({ queued: 1, written: 0, up: false });
    // While it waits, the row is still found by its request id.
    expect(await ledger.request('req-a')).toMatchObject({ entry: 'a' });
    other.exec('ROLLBACK');
    other.close();
    await expect.poll(() => ledger.stats, { timeout: 10_000 }).toMatchObject({ queued: 0, written: 1, up: true });
    await ledger.close();
  });

  it('a writer thread that dies fails its calls; its rows stay queued and a new thread writes them once', async () => {
    const where = file();
    const engine = new ThreadedEngine({ kind: 'sqlite', path: where }, () => {});
    const ledger = new RequestLedger({ engine, log: quiet, flushMs: 10, maxRetryMs: 20 });
    await ledger.start();
    ledger.record(row('before'));
    await ledger.flush();
    for (let i = 0; i < 50; i++) ledger.record(row(`during${i}`));
    // Dies while the batch is on its way: that write fails, the rows stay queued.
    const writing = ledger.flush();
    await engine.killThread();
    await writing;
    await expect.poll(() => ledger.stats, { timeout: 10_000 }).toMatchObject({ queued: 0, written: 51, up: true });
    await ledger.close();
    const db = new DatabaseSync(where);
    expect(db.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT entry) AS entries FROM ledger_requests').get()).toEqual({ n: 51, entries: 51 });
    db.close();
  });

  it('a call whose arguments cannot be copied to the thread fails alone', async () => {
    const engine = new ThreadedEngine({ kind: 'sqlite', path: file() }, () => {});
    await engine.migrate();
    await expect(engine.insert([{ ...row('bad'), key: (() => 'k') as unknown as string }])).rejects.toThrow(/could not be cloned/);
    await engine.insert([row('good')]);
    expect(await engine.request('req-good')).toMatchObject({ entry: 'good' });
    await engine.close();
  });

  it('an engine that cannot open fails its calls, and the rows stay queued', async () => {
    const engine = new ThreadedEngine({ kind: 'sqlite', path: path.join(tmpdir(), 'no-such-dir-switchyard', 'x', 'state.sqlite') }, () => {});
    const ledger = new RequestLedger({ engine, log: quiet, flushMs: 10, maxRetryMs: 20 });
    await ledger.start();
    ledger.record(row('kept'));
    await ledger.flush();
    expect(ledger.stats).toMatchObject({ queued: 1, written: 0, up: false });
    await ledger.close();
    await expect(engine.request('x')).rejects.toThrow(/closed/);
  });
});
