/**
 * The ledger's writer thread: it owns the database (the SQLite connection, or the pg pool) and
 * runs the engine's calls the serving thread posts (thread.ts). The inserts' statement building,
 * parameter encoding, SQLite's synchronous write and the driver's protocol work all happen here.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { LedgerEngine } from './engine.ts';
import { openEngine, type EngineSpec } from './engines.ts';
import type { EngineCall, EngineReply } from './thread.ts';

const port = parentPort!;
const spec = workerData as EngineSpec;
const post = (reply: EngineReply): void => port.postMessage(reply);
// Opened on the first call: a failure to open is that call's failure, and the next call tries again.
let opening: Promise<LedgerEngine> | undefined;
const engine = (): Promise<LedgerEngine> => {
  opening ??= openEngine(spec, (err) => post({ log: 'warn', msg: `request ledger: a PostgreSQL connection broke; the pool opens another (${err.message})` })).catch((err: unknown) => {
    opening = undefined;
    throw err;
  });
  return opening;
};

// A thread started after another died serves a ledger migrated long ago: its engine migrates first.
let migrated = false;

port.on('message', async (call: EngineCall) => {
  try {
    const e = await engine();
    if (!migrated && call.method !== 'migrate' && call.method !== 'close') {
      await e.migrate();
      migrated = true;
    }
    // Each method is the engine's own, called with the arguments the serving thread gave.
    const value = await (e[call.method] as (...args: unknown[]) => Promise<unknown>).apply(e, call.args);
    if (call.method === 'migrate') migrated = true;
    post({ id: call.id, ok: true, value });
  } catch (err) {
    // The message only: a driver's error object may carry its connection settings.
    post({ id: call.id, ok: false, message: err instanceof Error ? err.message : String(err) });
  }
});
