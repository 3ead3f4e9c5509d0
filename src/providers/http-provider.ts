/**
 * Most providers are an HTTPS API: this turns a handful of pure functions (request builder,
 * response and stream translators, error reader) into a ProviderPlugin that owns an undici pool,
 * sends attempts, decodes streams and maps failures. Provider folders never touch sockets.
 */
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import type { ChatCompletion, EmbeddingResponse } from '../openai-types.ts';
import {
  isProviderUnavailable,
  PLUGIN_API_VERSION,
  type EmbeddingCall,
  type ProviderCall,
  type ProviderCapabilities,
  type ProviderEnv,
  type ProviderInstance,
  type ProviderPlugin,
  type StreamTranslator,
  type NativeResponse,
} from '../plugin-api.ts';
import { decodeSseJson, errorBodyOf, readErrorBody, serialise, type ByteBudget, type Headers, type SseJsonEvent } from './http-body.ts';
import { fetchEvents, fetchWhole, type StreamedAnswer, type WholeAnswer } from './answer-handler.ts';
import type { IdentityStatus } from '../plugin-api.ts';
import { GatewayError } from '../errors.ts';
import { UpstreamError, parseRetryAfter } from './upstream-error.ts';
import type { HttpCountTokensSpec, HttpEmbeddingsSpec, HttpProviderSpec, HttpRequestSpec } from './http-spec.ts';

export { decodeSseJson, type Headers, type SseJsonEvent };
export type { EmbeddingAnswerContext, Endpoint, HttpCountTokensSpec, HttpEmbeddingsSpec, HttpProviderSpec, HttpRequestSpec, OutgoingRequest } from './http-spec.ts';

const DEFAULT_EMBEDDING_CONCURRENCY = 4;

/** What one upstream request needs from its attempt (a chat or an embeddings call). */
type AttemptLimits = Pick<ProviderCall, 'signal' | 'timeouts' | 'traceHeaders' | 'maxResponseBytes'>;

/**
 * A ProviderPlugin from an HTTP spec; see docs/plugins.md for a whole one.
 *
 * @example Credentials resolved once per config generation, or the provider reported unavailable
 * prepare(options) {
 *   const key = options.apiKey ?? process.env.ACME_API_KEY;
 *   return key ? { ...options, key } : { unavailable: 'no API key: set apiKey, or ACME_API_KEY in the environment' };
 * },
 */
export function defineHttpProvider<Options>(spec: HttpProviderSpec<Options>): ProviderPlugin<Options>;
export function defineHttpProvider<Options, Prepared>(spec: HttpProviderSpec<Options, Prepared> & Required<Pick<HttpProviderSpec<Options, Prepared>, 'prepare'>>): ProviderPlugin<Options>;
export function defineHttpProvider<Options, Prepared>(spec: HttpProviderSpec<Options, Prepared>): ProviderPlugin<Options> {
  return {
    apiVersion: PLUGIN_API_VERSION,
    kind: 'provider',
    id: spec.id,
    description: spec.description,
    optionsSchema: spec.optionsSchema,
    secretOptions: spec.secretOptions,
    capabilities: spec.embeddings || spec.countTokens ? { ...spec.capabilities, ...(spec.embeddings && { embeddings: true }), ...(spec.countTokens && { countTokens: true }) } : spec.capabilities,
    async create(options, env) {
      // The overloads hold that a spec without `prepare` has Prepared = Options.
      const prepared = spec.prepare ? await spec.prepare(options, env) : (options as unknown as Prepared);
      if (isProviderUnavailable(prepared)) return prepared;
      return new HttpProviderInstance(spec, prepared, env);
    },
  };
}

class HttpProviderInstance<Options, Prepared> implements ProviderInstance {
  readonly #spec: HttpProviderSpec<Options, Prepared>;
  readonly #options: Prepared;
  readonly #name: string;
  /** Keep-alive pools by connect timeout (aliases may set their own). */
  readonly #pools = new Map<number, Pool>();
  readonly #origin: string;
  readonly #basePath: string;
  readonly #headers: Record<string, string>;
  readonly #maxConnections: number;
  /** Present only when the spec has an `embeddings` part (the core may test for it). */
  readonly embed?: (call: EmbeddingCall) => Promise<EmbeddingResponse>;
  readonly nativeProtocols?: readonly string[];
  readonly capabilitiesFor?: (model: string) => ProviderCapabilities | undefined;
  /** Present only when the spec has a `countTokens` part. */
  readonly countTokens?: (call: ProviderCall) => Promise<number>;
  /** Present only when the spec has `checkIdentity`. */
  readonly checkIdentity?: () => Promise<IdentityStatus>;

  constructor(spec: HttpProviderSpec<Options, Prepared>, options: Prepared, env: ProviderEnv) {
    this.#spec = spec;
    this.#options = options;
    this.#name = env.name;
    const endpoint = spec.endpoint(options, env);
    const url = new URL(endpoint.baseUrl);
    this.#origin = url.origin;
    this.#basePath = url.pathname.replace(/\/+$/, '');
    this.#headers = { 'content-type': 'application/json', accept: 'application/json', ...lowerKeys(endpoint.headers ?? {}) };
    this.#maxConnections = env.maxConnections ?? 1024;
    const embeddings = spec.embeddings;
    if (embeddings) this.embed = (call) => this.#embed(embeddings, call);
    if (spec.nativeProtocols) this.nativeProtocols = Object.freeze([...spec.nativeProtocols(options)]);
    const capabilitiesFor = spec.capabilitiesFor;
    if (capabilitiesFor) this.capabilitiesFor = (model) => capabilitiesFor(options, model);
    const counting = spec.countTokens;
    if (counting) this.countTokens = (call) => this.#countTokens(counting, call);
    const check = spec.checkIdentity;
    if (check) this.checkIdentity = () => check(options);
  }

  identity(): IdentityStatus | undefined {
    return this.#spec.identity?.(this.#options);
  }

  /**
   * One keep-alive pool per provider, config generation and connect timeout. Pipelining stays
   * off: streams are long-lived and a slow one would block the requests queued behind it.
   */
  #pool(connectMs: number): Pool {
    let pool = this.#pools.get(connectMs);
    if (!pool) {
      pool = new Pool(this.#origin, { connections: this.#maxConnections, keepAliveTimeout: 30_000, connect: { timeout: connectMs } });
      this.#pools.set(connectMs, pool);
    }
    return pool;
  }

  async send(call: ProviderCall): Promise<NativeResponse> {
    let request = this.#spec.buildRequest(call, this.#options);
    if (!call.stream) {
      const { body, headers } = await this.#fetchJson(request, call);
      const read = call.native && this.#spec.readNativeAnswer;
      return { kind: 'json', body: read ? this.#readable(() => read(body, call, this.#options)) : body, headers };
    }
    request = { ...request, headers: { ...request.headers, accept: 'text/event-stream' } };
    const decode = this.#spec.decodeStream;
    if (decode) {
      const res = await this.#dispatch(request, call);
      return { kind: 'stream', events: this.#guardStream(decode(res.body), call), headers: res.headers as Headers };
    }
    return this.#fetchEvents(request, call);
  }

  /**
   * Sends the call's native requests (several at once, up to the spec's concurrency; the first
   * failure abandons the rest) and joins their answers in order. One byte cap covers them all.
   */
  async #embed(part: HttpEmbeddingsSpec<Prepared>, call: EmbeddingCall): Promise<EmbeddingResponse> {
    const requests = part.buildRequests(call, this.#options);
    if (requests.length === 0) throw new GatewayError('invalid_request', 'There is nothing to embed: `input` is empty.', { param: 'input' });
    const budget: ByteBudget = { left: call.maxResponseBytes };
    const answers = await inParallel(requests.length, part.concurrency ?? DEFAULT_EMBEDDING_CONCURRENCY, call.signal, async (i, signal) => {
      const attempt = signal === call.signal ? call : { ...call, signal };
      const { body, headers } = await this.#fetchJson(requests[i], attempt, budget);
      try {
        return part.toEmbeddings(body, call, this.#options, { request: requests[i], headers });
      } catch (err) {
        // An answer that cannot be read is the provider's fault (502), as for chat translation.
        if (err instanceof UpstreamError || err instanceof GatewayError) throw err;
        throw UpstreamError.protocol(this.#name, (err as Error)?.message ?? String(err), err);
      }
    });
    return joinEmbeddings(answers);
  }

  async #countTokens(part: HttpCountTokensSpec<Prepared>, call: ProviderCall): Promise<number> {
    const { body } = await this.#fetchJson(part.buildRequest(call, this.#options), call);
    return this.#readable(() => part.toCount(body, call, this.#options));
  }

  /** Runs a reading of an answer: one that cannot be read is the provider's fault (502), as for chat translation. */
  #readable<T>(read: () => T): T {
    try {
      return read();
    } catch (err) {
      if (err instanceof UpstreamError || err instanceof GatewayError) throw err;
      throw UpstreamError.protocol(this.#name, (err as Error)?.message ?? String(err), err);
    }
  }

  /** One native request as undici sends it: base, spec and trace headers, signed once the body is final. */
  async #outgoing(request: HttpRequestSpec, call: AttemptLimits): Promise<Dispatcher.DispatchOptions> {
    const path = this.#basePath + request.path;
    const body = request.body === undefined ? '' : serialise(request.body);
    let headers = request.headers ? { ...this.#headers, ...lowerKeys(request.headers) } : this.#headers;
    if (call.traceHeaders) headers = { ...headers, ...call.traceHeaders };
    const method = request.method ?? 'POST';
    if (this.#spec.signRequest) {
      const signed = await this.#spec.signRequest({ method, url: new URL(path, this.#origin), headers: { ...headers }, body }, this.#options);
      headers = { ...headers, ...signed };
    }
    const { firstByteMs, idleMs } = call.timeouts;
    return { method, path, headers, body: body || undefined, headersTimeout: firstByteMs, bodyTimeout: idleMs };
  }

  /**
   * One native request whose answer is read as a stream. A non-2xx answer becomes an
   * UpstreamError in the provider's words; so does a transport failure.
   */
  async #dispatch(request: HttpRequestSpec, call: AttemptLimits): Promise<Dispatcher.ResponseData> {
    const options = await this.#outgoing(request, call);
    let res: Dispatcher.ResponseData;
    try {
      res = await this.#pool(call.timeouts.connectMs).request({ ...options, signal: call.signal } as Dispatcher.RequestOptions);
    } catch (err) {
      throw this.#transportError(err, call);
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const responseHeaders = res.headers as Headers;
      const errorBody = await readErrorBody(res.body, responseHeaders);
      throw this.#httpError(res.statusCode, errorBody, responseHeaders);
    }
    return res;
  }

  /**
   * One native request whose answer is JSON read whole, refused past `call.maxResponseBytes` (or
   * what is left of the attempt's `budget`) so one huge answer cannot take the memory. Failures
   * as #dispatch's.
   */
  async #fetchJson(request: HttpRequestSpec, call: AttemptLimits, budget: ByteBudget = { left: call.maxResponseBytes }): Promise<{ body: unknown; headers: Headers }> {
    const options = await this.#outgoing(request, call);
    let answer: WholeAnswer;
    try {
      answer = await fetchWhole(this.#pool(call.timeouts.connectMs), options, call.signal, budget, () => this.#tooLarge(call));
    } catch (err) {
      throw this.#transportError(err, call);
    }
    const { statusCode, headers } = answer;
    if (statusCode < 200 || statusCode >= 300) throw this.#httpError(statusCode, errorBodyOf(answer.body, answer.size, headers), headers);
    try {
      return { body: JSON.parse(answer.body.toString('utf8')), headers };
    } catch (err) {
      throw this.#transportError(err, call, 'the response body is not valid JSON');
    }
  }

  /** One native request whose answer is SSE with JSON data, its events read as they arrive. Failures as #dispatch's. */
  async #fetchEvents(request: HttpRequestSpec, call: ProviderCall): Promise<NativeResponse> {
    const options = await this.#outgoing(request, call);
    let answer: StreamedAnswer | WholeAnswer;
    try {
      answer = await fetchEvents(this.#pool(call.timeouts.connectMs), options, call.signal, (err) => this.#streamFault(err, call));
    } catch (err) {
      throw this.#transportError(err, call);
    }
    if ('events' in answer) return { kind: 'stream', events: answer.events, headers: answer.headers };
    throw this.#httpError(answer.statusCode, errorBodyOf(answer.body, answer.size, answer.headers), answer.headers);
  }

  #tooLarge(call: AttemptLimits): UpstreamError {
    return UpstreamError.protocol(this.#name, `the answer is larger than ${call.maxResponseBytes} bytes (server.upstreamBodyLimit)`);
  }

  #httpError(status: number, errorBody: unknown, headers: Headers): UpstreamError {
    return UpstreamError.http(this.#name, status, this.#spec.readError(status, errorBody, headers), parseRetryAfter(headers));
  }

  toCompletion(body: unknown, call: ProviderCall): ChatCompletion {
    return this.#spec.toCompletion(body, call, this.#options);
  }

  createStreamTranslator(call: ProviderCall): StreamTranslator {
    return this.#spec.createStreamTranslator(call, this.#options);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((pool) => pool.close()));
  }

  /** A spec's own decoder, with its failures mapped like the default decoder's. */
  async *#guardStream(events: AsyncIterable<unknown>, call: ProviderCall): AsyncGenerator<unknown> {
    try {
      yield* events;
    } catch (err) {
      throw this.#streamFault(err, call);
    }
  }

  /** Socket errors in the middle of a stream become UpstreamErrors like any other failure; bytes that are not the protocol, a protocol error. */
  #streamFault(err: unknown, call: ProviderCall): unknown {
    if (err instanceof SyntaxError) return UpstreamError.protocol(this.#name, err.message, err);
    return this.#transportError(err, call);
  }

  #transportError(err: unknown, call: AttemptLimits, what?: string): unknown {
    if (err instanceof UpstreamError || call.signal.aborted) return err;
    const code = (err as { code?: string }).code ?? '';
    const message = what ?? (err as Error).message ?? String(err);
    const limits = call.timeouts;
    const timeout =
      code === 'UND_ERR_CONNECT_TIMEOUT'
        ? `could not connect within ${limits.connectMs} ms`
        : code === 'UND_ERR_HEADERS_TIMEOUT'
          ? `no response within ${limits.firstByteMs} ms (timeout.firstByteMs)`
          : code === 'UND_ERR_BODY_TIMEOUT'
            ? `the answer stalled for ${limits.idleMs} ms (timeout.idleMs)`
            : undefined;
    if (timeout) return UpstreamError.timeout(this.#name, timeout, err);
    if (what) return UpstreamError.protocol(this.#name, message, err);
    return UpstreamError.connect(this.#name, code ? `${code}: ${message}` : message, err);
  }
}

/**
 * Runs `count` tasks, at most `limit` at a time, results in task order. The first failure aborts
 * the tasks still running (their signal) and is what the caller gets; none start after it.
 */
async function inParallel<T>(count: number, limit: number, signal: AbortSignal, task: (index: number, signal: AbortSignal) => Promise<T>): Promise<T[]> {
  if (count === 1) return [await task(0, signal)];
  const stop = new AbortController();
  const shared = AbortSignal.any([signal, stop.signal]);
  const results = new Array<T>(count);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (next < count && !failure) {
      const index = next++;
      try {
        results[index] = await task(index, shared);
      } catch (error) {
        if (!failure) failure = { error };
        stop.abort();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, count)) }, worker));
  if (failure) throw failure.error;
  return results;
}

/** The answers of one call's requests as one list: indexes run on across them, usage adds up. */
function joinEmbeddings(parts: EmbeddingResponse[]): EmbeddingResponse {
  if (parts.length === 1) return parts[0];
  const joined: EmbeddingResponse = { ...parts[0], data: [], usage: { prompt_tokens: 0, total_tokens: 0 } };
  for (const part of parts) {
    const offset = joined.data.length;
    for (const item of part.data) joined.data.push({ ...item, index: offset + item.index });
    joined.usage.prompt_tokens += part.usage.prompt_tokens;
    joined.usage.total_tokens += part.usage.total_tokens;
  }
  return joined;
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v;
  return out;
}
