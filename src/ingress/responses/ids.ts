/**
 * The names and times of one response. OpenAI's ids are opaque strings with a type prefix
 * (`resp_`, `msg_`, `fc_`, `ctc_`, `rs_`, `ws_`); these are derived from the gateway's request id, so a client
 * quoting a response or item id points at the gateway's log line for it. The clock is injected
 * so the translation stays a pure function of its inputs.
 */

export type ItemKind = 'msg' | 'fc' | 'ctc' | 'tsc' | 'rs' | 'ws';

export interface ResponseIds {
  /** `resp_...`, the response's `id`. */
  readonly responseId: string;
  /** Unix seconds the request arrived: the response's `created_at`. */
  readonly createdAt: number;
  /** The id of the output item at `outputIndex` (unique within the response). */
  itemId(kind: ItemKind, outputIndex: number): string;
  /** Unix seconds now (`completed_at`). */
  now(): number;
}

/**
 * @example
 * const ids = responseIds(ctx.id);           // resp_<request id>, msg_<request id>_0, ...
 * const ids = responseIds('req_1', 1700000000, () => 1700000005); // in a test
 */
export function responseIds(requestId: string, createdAt = unixNow(), now: () => number = unixNow): ResponseIds {
  // Ids travel in JSON and logs: keep them to characters no client has to escape.
  const tag = requestId.replace(/[^A-Za-z0-9_-]/g, '') || 'gateway';
  return {
    responseId: `resp_${tag}`,
    createdAt,
    itemId: (kind, outputIndex) => `${kind}_${tag}_${outputIndex}`,
    now,
  };
}

function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}
