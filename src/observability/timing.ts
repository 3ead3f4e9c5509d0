/**
 * Where a request's time went, as the client sees it in the answer's headers: the gateway's own
 * time (`x-switchyard-overhead-ms`) and a Server-Timing header (W3C Server Timing) with
 * `gateway`, `upstream` and, for a stream, `ttft` (its first chunk is ready when the headers go
 * out, so time to first token is known then). Values are in milliseconds, as the spec says.
 */
import type { ExchangeView } from '../pipeline/exchange.ts';

/** The gateway's own time until `now`: since arrival, minus every wait for an upstream. */
export function overheadMs(ctx: Pick<ExchangeView, 'startedAt' | 'timing'>, now: number = performance.now()): number {
  return Math.max(0, now - ctx.startedAt - ctx.timing.upstreamMs);
}

/** Milliseconds with two decimals, as a header or log value. */
export function roundMs(ms: number): number {
  return Math.round(ms * 100) / 100;
}

/** Adds the timing headers to the headers of an answer written now. */
export function addTimingHeaders(headers: Record<string, string>, ctx: Pick<ExchangeView, 'startedAt' | 'timing'>, now: number = performance.now()): void {
  const overhead = String(roundMs(overheadMs(ctx, now)));
  let serverTiming = `gateway;dur=${overhead}, upstream;dur=${roundMs(ctx.timing.upstreamMs)}`;
  if (ctx.timing.firstChunkMs !== undefined) serverTiming += `, ttft;dur=${roundMs(ctx.timing.firstChunkMs)}`;
  headers['x-switchyard-overhead-ms'] = overhead;
  headers['server-timing'] = serverTiming;
}
