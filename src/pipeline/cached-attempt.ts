/**
 * An answer the gateway already had (the exact cache): an attempt that calls no provider. The
 * writer sends it like any other, in the client's protocol; a stream is replayed chunk by chunk
 * without the original's pauses.
 */
import type { GatewayError } from '../errors.ts';
import type { ChatCompletionChunk } from '../openai-types.ts';
import type { Drop, GatewayResponse, NativeResponse, ProviderCall, RouteTarget, Timeouts } from '../plugin-api.ts';
import type { Exchange, ExchangeAttempt } from './exchange.ts';

export class CachedAttempt implements ExchangeAttempt {
  readonly number = 1;
  readonly target: RouteTarget;
  readonly timeouts: Timeouts;
  readonly call: ProviderCall | undefined = undefined;
  readonly native: NativeResponse | undefined = undefined;
  readonly response: GatewayResponse;
  readonly passthrough = false;
  readonly sent = false;
  readonly drops: readonly Drop[] | undefined = undefined;
  readonly #x: Exchange;

  constructor(x: Exchange, target: RouteTarget, response: GatewayResponse) {
    this.#x = x;
    this.target = target;
    this.timeouts = target.timeouts;
    this.response = response;
  }

  get signal(): AbortSignal {
    return this.#x.signal;
  }

  async send(): Promise<void> {}
  translate(): void {}

  async complete(): Promise<GatewayResponse> {
    return this.response;
  }

  takeNativeEvents(): unknown[] {
    return [];
  }

  interrupt(_reason: GatewayError): void {}
  close(): void {}
}

/**
 * A stored stream's chunks, replayed as a stream. They are the caller's own (a cache store parses
 * its entry afresh on each read), so the writer and stages may annotate them: no copy here.
 */
export async function* replayChunks(chunks: readonly ChatCompletionChunk[]): AsyncIterable<ChatCompletionChunk> {
  for (const chunk of chunks) yield chunk;
}
