/**
 * The request ledger's cost to the serving thread per request, measured in this process without
 * HTTP, as main-thread CPU (process.threadCpuUsage: the writer thread's and the machine's other
 * work do not count). A request's end builds the row and queues it (`requestEnded`); every
 * `flushMs` the queue goes to the engine in one batch. Two ways are timed, for SQLite and for
 * PostgreSQL when one is given: the engine on the serving thread (the SQL, the parameters,
 * SQLite's write, pg's encoding and replies all on it, as before the writer thread), and the
 * engine on its writer thread (thread.ts: the serving thread only copies the batch across).
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
import { SqliteLedger } from '../src/ledger/sqlite.ts';
import { ThreadedEngine } from '../src/ledger/thread.ts';
import type { ExchangeView } from '../src/pipeline/exchange.ts';

export interface LedgerCost {
  /** µs of the serving thread per request: the row built and queued, nothing written. */
  recordUs: number;
  /** µs of the serving thread per request, row and write, with the engine on that thread. */
  sqliteInThreadUs: number;
  postgresInThreadUs: number | null;
  /** The same with the engine on its writer thread (what the gateway runs). */
  sqliteThreadedUs: number;
  postgresThreadedUs: number | null;
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

/** CPU time of this thread (user + system), µs; the whole process's on a Node without threadCpuUsage. */
function cpuMicros(): number {
  const { user, system } = process.threadCpuUsage?.() ?? process.cpuUsage();
  return user + system;
}

/** Main-thread µs per request for the row alone: an engine that keeps nothing, the queue emptied between rounds. */
async function recordCost(): Promise<number> {
  const views = Array.from({ length: 1000 }, (_, i) => finished(i));
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

/** Requests per batch: 200 ms (flushMs) of 1,000 requests a second. */
const BATCH = 200;

/**
 * Main-thread µs per request: rows recorded a batch at a time, each batch then written as the
 * writer's timer writes it (flush), the whole cycle timed.
 */
async function servingCost(engine: LedgerEngine, batches: number): Promise<number> {
  const ledger = new RequestLedger({ engine, log: quiet, flushMs: 10_000_000 });
  await ledger.start();
  let n = 0;
  const views = () => Array.from({ length: BATCH }, () => finished(n++));
  for (let warm = 0; warm < 20; warm++) {
    for (const view of views()) ledger.requestEnded(view);
    await ledger.flush();
  }
  let timed = 0;
  for (let round = 0; round < batches; round++) {
    const batch = views();
    const t0 = cpuMicros();
    for (const view of batch) ledger.requestEnded(view);
    await ledger.flush();
    timed += cpuMicros() - t0;
  }
  if (ledger.stats.written !== n) throw new Error(`the bench wrote ${ledger.stats.written} rows of ${n}`);
  await ledger.close();
  return timed / (batches * BATCH);
}

export async function measureLedger(postgresUrl?: string, batches = 100): Promise<LedgerCost> {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-bench-ledger-'));
  let files = 0;
  const file = () => path.join(dir, `state-${++files}.sqlite`);
  const warn = (msg: string) => quiet.warn(msg);
  try {
    return {
      recordUs: await recordCost(),
      sqliteInThreadUs: await servingCost(new SqliteLedger(file()), batches),
      sqliteThreadedUs: await servingCost(new ThreadedEngine({ kind: 'sqlite', path: file() }, warn), batches),
      postgresInThreadUs: postgresUrl ? await servingCost(new PostgresLedger({ url: postgresUrl }), batches) : null,
      postgresThreadedUs: postgresUrl ? await servingCost(new ThreadedEngine({ kind: 'postgres', url: postgresUrl }, warn), batches) : null,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cost = await measureLedger(process.argv[2]);
  console.log(JSON.stringify(cost));
}
