/**
 * The primary's side of ipc-store.ts: runs a worker's call on the one store every worker shares
 * and says how it went. Never rejects: an error travels back as data, with what the engine needs
 * to tell an outage (queue the settlement, answer `unavailable`) from a bug (log it).
 */
import type { StateCall, StateReply } from './ipc-protocol.ts';
import type { RawSettle, ScopeStore } from './store.ts';
import { StateUnavailableError } from './types.ts';

type WireMethod = (...args: unknown[]) => Promise<unknown>;

export async function answerStateCall(store: ScopeStore, call: StateCall): Promise<StateReply> {
  try {
    // The memory store runs each operation to its end before the next starts, so calls from
    // several workers are as exact as calls from one process.
    const value = call.op === 'settleBatch' ? await settleAll(store, call.args[0] as RawSettle[]) : await (store[call.op] as WireMethod).apply(store, call.args);
    return { sy: 'state-reply', id: call.id, ok: true, value: value ?? null };
  } catch (err) {
    const unavailable = err instanceof StateUnavailableError;
    return { sy: 'state-reply', id: call.id, ok: false, message: err instanceof Error ? err.message : String(err), unavailable, maybeApplied: unavailable ? err.maybeApplied : true };
  }
}

async function settleAll(store: ScopeStore, settlements: RawSettle[]): Promise<void> {
  for (const settlement of settlements) await store.settle(settlement);
}
