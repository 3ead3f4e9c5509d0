/**
 * The Gemini API as a way in (https://ai.google.dev/api): `POST /v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent` (SSE with `alt=sse`, else one JSON array written as it comes),
 * `:countTokens`, `:embedContent` and `:batchEmbedContents`, each also under `/v1/`. `{model}` is
 * a model alias of gateway.yaml. Keys come as `x-goog-api-key`, `?key=` or a bearer token; errors
 * are Google's envelope.
 *
 * A `gemini` target gets the client's body as sent (the native pass-through: thought signatures,
 * function-call ids, safetySettings, hosted tools all survive); any other target gets its
 * chat translation, and the answer comes back in Gemini's shape. Either way the request runs the one pipeline: keys, limits, routing, fallbacks, cost,
 * the log line (ingress `gemini`) and metrics.
 */
import { GatewayError } from '../../errors.ts';
import type { ExchangeAttempt, ProtocolSession, SseEvents } from '../../pipeline/exchange.ts';
import type { EmbeddingRequest } from '../../openai-types.ts';
import { GEMINI_COUNT_TOKENS } from '../../translate/gemini/count-tokens.ts';
import { estimateInputTokens } from '../messages/count-tokens.ts';
import { defineProtocol, type ProtocolRequest } from '../protocol.ts';
import { type Drop, Drops, refusalOf } from './drops.ts';
import { embeddingRequestOf, embeddingsToGemini } from './embed.ts';
import { geminiError, googleErrorOf } from './errors.ts';
import { isObject, objectAt, type Json } from './fields.ts';
import { liftQueryKey } from './keys.ts';
import { type GenerateTranslation, translateGenerateContent } from './request.ts';
import { completionToGemini } from './response.ts';
import { type Framing, GeminiStreamWriter, JSON_ARRAY_FRAMING, SSE_FRAMING } from './stream.ts';

/** The native protocol a gemini provider declares (`capabilities.nativeProtocols`); countTokens is GEMINI_COUNT_TOKENS. */
export const GEMINI_GENERATE = 'gemini-generate-content';

/**
 * `/v1beta/models/{model}:{method}` and its `/v1/` twin, in fastify's syntax: `::` is a literal
 * colon, and the model is a parameter that may itself hold colons (`a:b:countTokens` → `a:b`).
 */
export function methodPaths(method: string): string[] {
  return ['/v1beta', '/v1'].map((version) => `${version}/models/:model(^[^/]+)::${method}`);
}

/** A URL in the Gemini API's shape (`/v1beta/...`, `/v1/models/{model}:{method}`), for the envelope of a 404. */
export function isGeminiUrl(url: string): boolean {
  return /^\/v1beta\/|^\/v1\/models\/[^/?]+:/.test(url);
}

interface GenerateCall extends GenerateTranslation {
  body: Json;
  framing: Framing;
}

/** The alias named in the path (`models/` is not part of it; the SDKs put it in the path only). */
function modelOf(request: ProtocolRequest): string {
  const model = request.params.model ?? '';
  if (!model) throw new GatewayError('not_found', 'The URL names no model.');
  return model;
}

function readGenerate(body: unknown, request: ProtocolRequest, stream: boolean): GenerateCall {
  liftQueryKey(request.query, request.headers);
  if (!isObject(body)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  const framing = stream && request.query.alt !== 'sse' ? JSON_ARRAY_FRAMING : SSE_FRAMING;
  return { body, framing, ...translateGenerateContent(body, modelOf(request), stream) };
}

function generateSession(call: GenerateCall, id: string): ProtocolSession {
  return {
    body: call.chat,
    // What the chat translation leaves out goes up untouched to a gemini target; on any other it
    // is dropped and reported (x-switchyard-dropped, the log line, the counter), or refused.
    native: { protocol: GEMINI_GENERATE, body: call.body, headers: {}, untranslatable: call.drops, unservable: call.unservable.map(refusalOf) },
    answer(response, attempt) {
      if (attempt.passthrough && attempt.native?.kind === 'json') return attempt.native.body;
      return response.kind === 'completion' ? completionToGemini(response.body, call.includeThoughts) : response.body;
    },
    events: (attempt) =>
      attempt.passthrough
        ? new NativeEvents(attempt, call.framing, id)
        : new GeminiStreamWriter({ includeThoughts: call.includeThoughts, webSearch: call.chat.web_search !== undefined, framing: call.framing, requestId: id }),
  };
}

export const geminiGenerateProtocol = defineProtocol<GenerateCall>({
  name: 'gemini',
  operation: 'chat',
  paths: methodPaths('generateContent'),
  parse: (body, request) => readGenerate(body, request, false),
  begin: (call, { id }) => generateSession(call, id),
  error: geminiError,
});

export const geminiStreamProtocol = defineProtocol<GenerateCall>({
  name: 'gemini',
  operation: 'chat',
  paths: methodPaths('streamGenerateContent'),
  parse: (body, request) => readGenerate(body, request, true),
  begin: (call, { id }) => generateSession(call, id),
  error: geminiError,
});

/**
 * countTokens: `{contents}` or `{generateContentRequest}` (https://ai.google.dev/api/tokens). A
 * target that speaks the Gemini API (gemini, vertex) counts the client's own request, passed
 * through (thought signatures, hosted tools and safety settings count as sent), and its answer
 * comes back as it sent it; any other target counts the translation with its own counter where it
 * has one (Bedrock's CountTokens), else the gateway estimates it. `x-switchyard-token-count` says
 * `exact` (a provider counted) or `estimate`.
 */
export const geminiCountTokensProtocol = defineProtocol<GenerateCall>({
  name: 'gemini',
  operation: 'count_tokens',
  paths: methodPaths('countTokens'),
  parse(body, request) {
    const wrapped = isObject(body) && body.generateContentRequest != null ? objectAt(body.generateContentRequest, 'generateContentRequest') : body;
    return readGenerate(wrapped, request, false);
  },
  begin(call) {
    return {
      body: call.chat,
      // Counted translated, what the translation leaves out is left out of the count, reported;
      // what it could not serve is only a count here, so it is reported too, not refused.
      native: { protocol: GEMINI_COUNT_TOKENS, body: call.body, headers: {}, untranslatable: [...call.drops, ...call.unservable] },
      estimate: estimateInputTokens(call.chat),
      countOf: totalTokensOf,
      answer(response, attempt, headers) {
        headers['x-switchyard-token-count'] = attempt.sent ? 'exact' : 'estimate';
        if (attempt.passthrough && attempt.native?.kind === 'json') return attempt.native.body;
        const counted = response.kind === 'count' ? response.body.input_tokens : 0;
        return { totalTokens: counted };
      },
    };
  },
  error: geminiError,
});

/** `totalTokens` of Gemini's countTokens answer (proto3 JSON leaves a zero out); undefined when it is not one. */
function totalTokensOf(body: unknown): number | undefined {
  if (!isObject(body)) return undefined;
  if (body.totalTokens === undefined) return 0;
  return typeof body.totalTokens === 'number' && Number.isFinite(body.totalTokens) ? body.totalTokens : undefined;
}

interface EmbedCall {
  request: EmbeddingRequest;
  batch: boolean;
  drops: Drop[];
}

function embedProtocol(method: 'embedContent' | 'batchEmbedContents') {
  const batch = method === 'batchEmbedContents';
  return defineProtocol<EmbedCall>({
    name: 'gemini',
    operation: 'embeddings',
    paths: methodPaths(method),
    parse(body, request) {
      liftQueryKey(request.query, request.headers);
      const drops = new Drops();
      return { request: embeddingRequestOf(body, modelOf(request), batch, drops), batch, drops: drops.list };
    },
    begin: (call) => ({
      body: call.request,
      drops: call.drops,
      answer: (response) => (response.kind === 'embeddings' ? embeddingsToGemini(response.body, call.batch) : response.body),
    }),
    error: geminiError,
  });
}

export const geminiEmbedProtocol = embedProtocol('embedContent');
export const geminiBatchEmbedProtocol = embedProtocol('batchEmbedContents');

/**
 * A passed-through stream: the upstream's own GenerateContentResponse events, in order, as the
 * translation (which still runs, for usage and cost) consumed them, framed as the client asked.
 */
class NativeEvents implements SseEvents {
  readonly #attempt: ExchangeAttempt;
  readonly #framing: Framing;
  readonly #requestId: string;
  readonly contentType: string | undefined;
  started = false;

  constructor(attempt: ExchangeAttempt, framing: Framing, requestId: string) {
    this.#attempt = attempt;
    this.#framing = framing;
    this.#requestId = requestId;
    this.contentType = framing.contentType;
  }

  push(): string {
    let text = '';
    for (const e of this.#attempt.takeNativeEvents()) {
      text += this.#framing.event(isObject(e) && 'data' in e ? e.data : e, !this.started);
      this.started = true;
    }
    return text;
  }

  end(): string {
    return this.push() + this.#framing.close(!this.started);
  }

  fail(error: GatewayError): string {
    return this.#framing.event(googleErrorOf(error, this.#requestId).body, !this.started) + this.#framing.close(false);
  }
}
