/**
 * Opens the engine a ledger names: what the writer thread owns (thread.ts). The pg driver is
 * loaded only when PostgreSQL is configured.
 */
import type { LedgerEngine } from './engine.ts';

/** Which database, as plain data: it crosses to the writer thread. */
export type EngineSpec = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; poolSize?: number };

export async function openEngine(spec: EngineSpec, onIdleError: (err: Error) => void): Promise<LedgerEngine> {
  if (spec.kind === 'postgres') {
    const { PostgresLedger } = await import('./postgres.ts');
    return new PostgresLedger({ url: spec.url, poolSize: spec.poolSize, onIdleError });
  }
  const { SqliteLedger } = await import('./sqlite.ts');
  return new SqliteLedger(spec.path);
}
