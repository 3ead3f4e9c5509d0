/**
 * Spans: one SERVER span per chat request and one CLIENT span per upstream attempt, its child,
 * with the GenAI attributes (docs/gen-ai/gen-ai-spans.md, inference span) and the gateway's own
 * (alias, target, attempt number, retry reason, cost, key). A client's W3C `traceparent` is
 * continued, and each attempt sends the upstream a traceparent naming its own span. The trace
 * id goes on the context for the request log line.
 *
 * Spans that are not sampled cost the propagation only: attributes are set on recording spans.
 * Prompt and completion text are recorded only with `captureContent`.
 */
import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from '../openai-types.ts';
import { isChat, type AttemptRecord, type AttemptView } from '../plugin-api.ts';
import type { ExchangeView } from '../pipeline/exchange.ts';
import type { GatewayObserver } from '../pipeline/observer.ts';
import { codeLabel, targetLabel } from './labels.ts';
import { ATTR } from './semconv.ts';
import { inputMessages, outputMessages, type StreamedOutput } from './span-content.ts';

/** Client strings recorded on spans (the model asked for, error messages) are cut to this length. */
const MAX_TEXT = 256;

interface RequestSpans {
  server: Span;
  /** The server span in its parent's context: the parent of every attempt span. */
  context: Context;
  /** Every attempt's span; a failed one ends at once, the one that answered when the answer is complete. */
  attempts: Span[];
  answered?: Span;
  /** A recording span's stream, observed as it is sent. */
  streamed?: StreamedOutput & { id?: string };
}

export class TracingObserver implements GatewayObserver {
  readonly #tracer: Tracer;
  readonly #captureContent: boolean;
  readonly #propagator = new W3CTraceContextPropagator();
  readonly #requests = new WeakMap<ExchangeView, RequestSpans>();
  readonly #attempts = new WeakMap<AttemptView, Span>();

  constructor(tracer: Tracer, options: { captureContent: boolean }) {
    this.#tracer = tracer;
    this.#captureContent = options.captureContent;
  }

  requestStarted(ctx: ExchangeView): void {
    const parent = this.#propagator.extract(ROOT_CONTEXT, ctx.headers, defaultTextMapGetter);
    const server = this.#tracer.startSpan(ctx.operation, { kind: SpanKind.SERVER, attributes: { [ATTR.operationName]: ctx.operation, [ATTR.httpMethod]: 'POST', [ATTR.requestId]: ctx.id } }, parent);
    ctx.traceId = server.spanContext().traceId;
    this.#requests.set(ctx, { server, context: trace.setSpan(parent, server), attempts: [] });
  }

  attemptStarted(ctx: ExchangeView, attempt: AttemptView): Record<string, string> | undefined {
    const request = this.#requests.get(ctx);
    if (!request) return undefined;
    const target = attempt.target;
    const span = this.#tracer.startSpan(`${ctx.operation} ${target.model}`, { kind: SpanKind.CLIENT }, request.context);
    if (span.isRecording()) {
      span.setAttributes(requestAttributes(isChat(ctx) ? ctx.body : undefined));
      span.setAttributes({
        [ATTR.operationName]: ctx.operation,
        [ATTR.providerName]: target.provider,
        [ATTR.requestModel]: target.model,
        [ATTR.target]: targetLabel(target),
        [ATTR.attempt]: attempt.number,
      });
      if (ctx.route) span.setAttribute(ATTR.alias, ctx.route.name);
      const previous = lastTried(ctx.attempts);
      if (previous?.outcome === 'error') {
        span.setAttribute(ATTR.retryKind, previous.provider === target.provider && previous.model === target.model ? 'retry' : 'failover');
        span.setAttribute(ATTR.retryReason, cut(previous.status ? `${previous.status} ${previous.error ?? ''}` : (previous.error ?? 'failed')));
      }
    }
    this.#attempts.set(attempt, span);
    request.attempts.push(span);
    const headers: Record<string, string> = {};
    this.#propagator.inject(trace.setSpan(request.context, span), headers, defaultTextMapSetter);
    return headers;
  }

  attemptEnded(ctx: ExchangeView, attempt: AttemptView, record: AttemptRecord): void {
    const span = this.#attempts.get(attempt);
    const request = this.#requests.get(ctx);
    if (!span || !request) return;
    if (record.status) span.setAttribute(ATTR.httpStatus, record.status);
    if (record.outcome === 'error') {
      span.setAttribute(ATTR.errorType, record.status ? String(record.status) : '_OTHER');
      span.setStatus({ code: SpanStatusCode.ERROR, message: record.error === undefined ? undefined : cut(record.error) });
      span.end();
      return;
    }
    // The answer exists (a stream: its first chunk); its usage and finish come with its end.
    request.answered = span;
    const response = attempt.response;
    if (response?.kind === 'stream' && request.server.isRecording()) {
      // The response object is the one the route is about to send: observe its chunks on the way.
      const streamed = (request.streamed = { text: [], finishReasons: [] });
      response.chunks = observeStream(response.chunks, streamed, this.#captureContent);
    }
  }

  requestEnded(ctx: ExchangeView): void {
    const request = this.#requests.get(ctx);
    if (!request) return;
    this.#requests.delete(ctx);
    const { server, answered } = request;
    const completion = ctx.attempt?.response?.kind === 'completion' ? ctx.attempt.response.body : undefined;
    const finish = finishReasons(completion, request.streamed);
    const responseId = completion?.id ?? request.streamed?.id;
    const code = codeLabel(ctx);
    const error = ctx.streamError ?? ctx.error;

    if (answered?.isRecording()) {
      answered.setAttributes(responseAttributes(ctx, finish, responseId));
      if (ctx.streamError) {
        answered.setAttribute(ATTR.errorType, code);
        answered.setStatus({ code: SpanStatusCode.ERROR, message: cut(ctx.streamError.message) });
      }
    }
    // An attempt left without a verdict (the client went away) ends with the request. A span
    // stops recording once ended, so only the open ones are touched.
    for (const span of request.attempts) {
      if (!span.isRecording()) continue;
      if (span !== answered) span.setStatus({ code: SpanStatusCode.ERROR, message: 'abandoned' });
      span.end();
    }

    if (server.isRecording()) {
      if (ctx.route) server.updateName(`${ctx.operation} ${ctx.route.name}`);
      server.setAttributes(requestAttributes(isChat(ctx) ? ctx.body : undefined));
      server.setAttributes(responseAttributes(ctx, finish, responseId));
      const asked = ctx.body?.model;
      if (typeof asked === 'string') server.setAttribute(ATTR.requestModel, cut(asked));
      if (ctx.route) server.setAttribute(ATTR.alias, ctx.route.name);
      if (ctx.attempt) server.setAttribute(ATTR.providerName, ctx.attempt.target.provider);
      if (ctx.status) server.setAttribute(ATTR.httpStatus, ctx.status);
      if (ctx.key) server.setAttribute(ATTR.keyName, ctx.key.name);
      if (ctx.key?.team) server.setAttribute(ATTR.team, ctx.key.team);
      if (typeof ctx.costUsd === 'number') server.setAttribute(ATTR.costUsd, ctx.costUsd);
      server.setAttribute(ATTR.attempts, request.attempts.length);
      if (ctx.timing.firstChunkMs !== undefined) server.setAttribute(ATTR.responseTimeToFirstChunk, ctx.timing.firstChunkMs / 1000);
      if (error) {
        server.setAttribute(ATTR.errorType, code);
        // HTTP server spans: a 4xx is the client's doing, not a failure of this service.
        if ((ctx.status ?? 500) >= 500 || ctx.streamError) server.setStatus({ code: SpanStatusCode.ERROR, message: cut(error.message) });
      }
      if (this.#captureContent) {
        const input = inputMessages(isChat(ctx) ? ctx.body.messages : undefined);
        if (input) server.setAttribute(ATTR.inputMessages, input);
        const output = outputMessages(completion, request.streamed);
        if (output) server.setAttribute(ATTR.outputMessages, output);
      }
    }
    server.end();
  }
}

/** The sampling and length parameters of a request, when the client set them. */
function requestAttributes(body: ChatCompletionRequest | undefined): Attributes {
  const attributes: Attributes = {};
  if (!body || typeof body !== 'object') return attributes;
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === 'number') attributes[ATTR.requestMaxTokens] = maxTokens;
  if (typeof body.temperature === 'number') attributes[ATTR.requestTemperature] = body.temperature;
  if (typeof body.top_p === 'number') attributes[ATTR.requestTopP] = body.top_p;
  if (typeof body.frequency_penalty === 'number') attributes[ATTR.requestFrequencyPenalty] = body.frequency_penalty;
  if (typeof body.presence_penalty === 'number') attributes[ATTR.requestPresencePenalty] = body.presence_penalty;
  if (typeof body.seed === 'number') attributes[ATTR.requestSeed] = body.seed;
  if (typeof body.n === 'number' && body.n !== 1) attributes[ATTR.requestChoiceCount] = body.n;
  if (typeof body.stop === 'string') attributes[ATTR.requestStopSequences] = [body.stop];
  else if (Array.isArray(body.stop)) attributes[ATTR.requestStopSequences] = body.stop.filter((s): s is string => typeof s === 'string');
  attributes[ATTR.requestStream] = body.stream === true;
  const format = body.response_format?.type;
  if (format === 'json_object' || format === 'json_schema') attributes[ATTR.outputType] = 'json';
  return attributes;
}

/** What came back: the model, tokens, finish reasons and completion id. */
function responseAttributes(ctx: ExchangeView, finish: string[] | undefined, responseId: string | undefined): Attributes {
  const attributes: Attributes = {};
  if (ctx.upstreamModel) attributes[ATTR.responseModel] = cut(ctx.upstreamModel);
  if (responseId) attributes[ATTR.responseId] = cut(responseId);
  if (finish?.length) attributes[ATTR.responseFinishReasons] = finish;
  const usage = ctx.usage;
  if (usage) {
    attributes[ATTR.usageInputTokens] = usage.prompt_tokens;
    attributes[ATTR.usageOutputTokens] = usage.completion_tokens;
    const cached = usage.prompt_tokens_details?.cached_tokens;
    if (typeof cached === 'number') attributes[ATTR.usageCacheReadInputTokens] = cached;
    const reasoning = usage.completion_tokens_details?.reasoning_tokens;
    if (typeof reasoning === 'number') attributes[ATTR.usageReasoningOutputTokens] = reasoning;
  }
  return attributes;
}

function finishReasons(completion: ChatCompletion | undefined, streamed: StreamedOutput | undefined): string[] | undefined {
  if (completion) return completion.choices.map((c) => c.finish_reason ?? '');
  return streamed?.finishReasons.filter((r) => r !== undefined);
}

/** The stream as sent, noting its id, each choice's finish reason and (capturing content) its text. */
async function* observeStream(chunks: AsyncIterable<ChatCompletionChunk>, seen: StreamedOutput & { id?: string }, captureContent: boolean): AsyncGenerator<ChatCompletionChunk> {
  for await (const chunk of chunks) {
    seen.id ??= chunk.id;
    for (const choice of chunk.choices ?? []) {
      if (choice.finish_reason) seen.finishReasons[choice.index] = choice.finish_reason;
      if (captureContent && typeof choice.delta?.content === 'string') seen.text[choice.index] = (seen.text[choice.index] ?? '') + choice.delta.content;
    }
    yield chunk;
  }
}

/** The last attempt that reached a provider (or failed trying), before the one starting now. */
function lastTried(records: readonly AttemptRecord[]): AttemptRecord | undefined {
  for (let i = records.length - 1; i >= 0; i--) if (records[i].outcome !== 'skipped') return records[i];
  return undefined;
}

function cut(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;
}
