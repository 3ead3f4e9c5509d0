/**
 * The request as stages see it (`RequestContext`): their own fields, and read-only windows on
 * the core's exchange, which only the core's own stages reach (`exchangeOf`).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import type { ChatCompletionRequest, EmbeddingRequest } from '../openai-types.ts';
import type { AnswerTransform, AttemptRecord, AttemptView, Ingress, KeyIdentity, ModelRoute, Operation, RequestContext } from '../plugin-api.ts';
import type { Exchange } from './exchange.ts';

/** The request as stages see it: their fields, and read-only windows on the core's. */
export class StageContext implements RequestContext {
  readonly #exchange: Exchange;
  body: ChatCompletionRequest | EmbeddingRequest;
  key: KeyIdentity | undefined = undefined;
  route: ModelRoute | undefined = undefined;

  constructor(exchange: Exchange, body: ChatCompletionRequest) {
    this.#exchange = exchange;
    this.body = body;
  }

  /** The exchange behind a context the gateway made. Not in the public kit: stages cannot call it. */
  static exchangeOf(ctx: RequestContext): Exchange {
    if (!(#exchange in ctx)) throw new TypeError('not a request context made by the gateway');
    return ctx.#exchange;
  }

  get id(): string {
    return this.#exchange.id;
  }
  get operation(): Operation {
    return this.#exchange.operation;
  }
  get ingress(): Ingress {
    return this.#exchange.ingress;
  }
  get startedAt(): number {
    return this.#exchange.startedAt;
  }
  get headers(): IncomingHttpHeaders {
    return this.#exchange.headers;
  }
  get signal(): AbortSignal {
    return this.#exchange.signal;
  }
  get log(): Logger {
    return this.#exchange.log;
  }
  get attempt(): AttemptView | undefined {
    return this.#exchange.attempt;
  }
  get attempts(): readonly AttemptRecord[] {
    // A frozen copy (stages read it rarely): the core's log stays the core's.
    return Object.freeze(this.#exchange.attempts.slice());
  }
  get responseHeaders(): Record<string, string> {
    return this.#exchange.responseHeaders;
  }
  transformAnswer(transform: AnswerTransform): void {
    (this.#exchange.answerTransforms ??= []).push(transform);
  }
  annotate(field: string, value: unknown): void {
    (this.#exchange.annotations ??= {})[field] = value;
  }
}

/** The exchange behind a stage's context: how the core's own stages (retry, transform-response) reach it. */
export function exchangeOf(ctx: RequestContext): Exchange {
  return StageContext.exchangeOf(ctx);
}
