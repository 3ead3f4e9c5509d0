/**
 * The messages that carry ScopeStore calls between a cluster worker (ipc-store.ts) and the
 * primary that holds the memory store (ipc-server.ts). JSON over the IPC channel, so only plain
 * data: a call names the method and its arguments, a reply carries the value or what the error
 * means to the engine (unavailable or not, maybe applied or not).
 */
/**
 * The ScopeStore methods a worker may call (`close` stays with the primary, which owns the
 * store), and `settleBatch`: several settlements in one message, settled in order.
 */
export const STATE_OPS = ['admit', 'settle', 'settleBatch', 'renew', 'figures', 'usageRows'] as const;
export type StateOp = (typeof STATE_OPS)[number];

/** `sy` tells these apart from any other IPC traffic (the cluster's own, prom-client's). */
export interface StateCall {
  sy: 'state-call';
  id: number;
  op: StateOp;
  args: unknown[];
}

export type StateReply = { sy: 'state-reply'; id: number; ok: true; value: unknown } | { sy: 'state-reply'; id: number; ok: false; message: string; unavailable: boolean; maybeApplied: boolean };

const isRecord = (m: unknown): m is Record<string, unknown> => typeof m === 'object' && m !== null;

export function isStateCall(m: unknown): m is StateCall {
  return isRecord(m) && m.sy === 'state-call' && typeof m.id === 'number' && (STATE_OPS as readonly unknown[]).includes(m.op) && Array.isArray(m.args);
}

export function isStateReply(m: unknown): m is StateReply {
  return isRecord(m) && m.sy === 'state-reply' && typeof m.id === 'number';
}
