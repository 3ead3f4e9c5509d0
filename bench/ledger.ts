/**
 * The request ledger's CPU cost per request, measured in this process without HTTP: what the
 * serving thread does at a request's end (build the row, push it: `requestEnded`), and what the
 * writer's timer does per row (a 500-row batch into SQLite, and into PostgreSQL when one is
 * given). Both run on the gateway's one thread; the full benchmark's variants measure the whole.
 *
 *   node bench/ledger.ts [postgres://…]     (npm run bench passes the server it started)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { RequestLedger } from '../src/ledger/book.ts';
import type { LedgerEngine } from '../src/ledger/engine.ts';
import { PostgresLedger } from '../src/ledger/postgres.ts';
import { rowOf, type LedgerRow } from '../src/ledger/record.ts';
import { SqliteLedger } from '../src/ledger/sqlite.ts';
import type { ExchangeView } from '../src/pipeline/exchange.ts';

export interface LedgerCost {
  /** µs of the serving thread per request: the row built and queued. */
  recordUs: number;
  /** µs per row written in 500-row batches. */
  sqliteWriteUs: number;
  postgresWriteUs: number | null;
}

/** A finished request as the observer sees it: answered, with usage, one attempt. */
function finished(i: number): ExchangeView {
  return {
    id: `req_${i}`,
    operation: 'chat',
    ingress: 'chat',
    startedAt: performance.now() - 5,
    headers: {},
    body: { model: 'bench', messages: [] },
    key: { name: 'bench', team: 'team', models: ['*'], metadata: {} },
    route: { name: 'bench' },
    attempt: undefined,
    attempts: [{ provider: 'upstream', model: 'bench', outcome: 'success', status: 200, durationMs: 4 }],
    timing: { upstreamMs: 4, firstChunkMs: 2 },
    usage: { prompt_tokens: 12, completion_tokens: 20, total_tokens: 32, prompt_tokens_details: { cached_tokens: 0 } },
    costUsd: 0.00012,
    upstreamModel: 'bench',
    status: 200,
    error: undefined,
    streamError: undefined,
    refusal: undefined,
    traceId: undefined,
  } as unknown as ExchangeView; // A fake with only the fields the ledger reads.
}

const quiet = pino({ level: 'silent' });

/** CPU time of this process (user + system), µs: the machine's other work does not count. */
function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

async function recordCost(): Promise<number> {
  const views = Array.from({ length: 1000 }, (_, i) => finished(i));
  // An engine that keeps nothing: the queue is emptied between timed rounds, as the writer's timer
  // empties it every flushMs, and only the serving thread's share (requestEnded) is timed.
  const sink: LedgerEngine = {
    kind: 'none',
    migrate: async () => {},
    insert: async () => {},
    request: async () => undefined,
    usageRows: async () => [],
    spendByKey: async () => new Map(),
    spendSince: async () => [],
    deleteBefore: async () => 0,
    close: async () => {},
  };
  const ledger = new RequestLedger({ engine: sink, log: quiet, flushMs: 10_000_000 });
  await ledger.start();
  let timed = 0;
  const rounds = 300;
  for (let round = -30; round < rounds; round++) {
    const t0 = cpuMicros();
    for (const view of views) ledger.requestEnded(view);
    if (round >= 0) timed += cpuMicros() - t0;
    await ledger.flush();
  }
  return timed / (rounds * views.length);
}

async function writeCost(engine: LedgerEngine): Promise<number> {
  await engine.migrate();
  const rows: LedgerRow[] = Array.from({ length: 20_000 }, (_, i) => rowOf(finished(i)));
  await engine.insert(rows.slice(0, 500));
  const t0 = cpuMicros();
  for (let i = 500; i < rows.length; i += 500) await engine.insert(rows.slice(i, i + 500));
  // This process's CPU (PostgreSQL's own work is the server's, not the gateway's).
  const us = (cpuMicros() - t0) / (rows.length - 500);
  await engine.close();
  return us;
}

export async function measureLedger(postgresUrl?: string): Promise<LedgerCost> {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-bench-ledger-'));
  try {
    return {
      recordUs: await recordCost(),
      sqliteWriteUs: await writeCost(new SqliteLedger(path.join(dir, 'state.sqlite'))),
      postgresWriteUs: postgresUrl ? await writeCost(new PostgresLedger({ url: postgresUrl })) : null,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cost = await measureLedger(process.argv[2]);
  console.log(JSON.stringify(cost));
}
