/**
 * Most providers are an HTTPS API: this turns a handful of pure functions (request builder,
 * response and stream translators, error reader) into a ProviderPlugin that owns an undici pool,
 * sends attempts, decodes streams and maps failures. Provider folders never touch sockets.
 */
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import type { ChatCompletion } from '../openai-types.ts';
import {
  PLUGIN_API_VERSION,
  type ProviderCall,
  type ProviderEnv,
  type ProviderInstance,
  type ProviderPlugin,
  type StreamTranslator,
  type NativeResponse,
} from '../plugin-api.ts';
import { readSse } from '../protocol/sse.ts';
import type { UpstreamFailure } from '../plugin-api.ts';
import { UpstreamError, parseRetryAfter } from './upstream-error.ts';
import { GatewayError } from '../errors.ts';

export type Headers = Record<string, string | string[] | undefined>;

/** The native HTTP request for one attempt. `path` is appended to the endpoint's base path. */
export interface HttpRequestSpec {
  path: string;
  method?: 'POST' | 'GET';
  headers?: Record<string, string>;
  /** JSON-serialised by the core. */
  body?: unknown;
}

export interface Endpoint {
  /** e.g. https://api.openai.com/v1 — origin plus base path. */
  baseUrl: string;
  /** Sent with every request (auth, versions). */
  headers?: Record<string, string>;
}

/** A request about to go out, for providers that sign requests (AWS SigV4). */
export interface OutgoingRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string;
}

/** An event of a text/event-stream response with its JSON data parsed. */
export interface SseJsonEvent {
  event?: string;
  data: unknown;
}

export interface HttpProviderSpec<Options> extends Omit<ProviderPlugin<Options>, 'apiVersion' | 'kind' | 'create'> {
  endpoint(options: Options, env: ProviderEnv): Endpoint;
  buildRequest(call: ProviderCall, options: Options): HttpRequestSpec;
  /** Adds signature headers once the body is final. */
  signRequest?(request: OutgoingRequest, options: Options): Promise<Record<string, string>>;
  toCompletion(body: unknown, call: ProviderCall, options: Options): ChatCompletion;
  createStreamTranslator(call: ProviderCall, options: Options): StreamTranslator;
  /** Decodes a 2xx streamed body into native events. Default: SSE with JSON data, ending at `[DONE]`. */
  decodeStream?(body: AsyncIterable<Uint8Array>): AsyncIterable<unknown>;
  /** The provider's error body (parsed JSON, else text) in its own words. */
  readError(status: number, body: unknown, headers: Headers): UpstreamFailure;
}

/** Largest error body read from an upstream; the rest is discarded. */
const MAX_ERROR_BODY = 64 * 1024;

export function defineHttpProvider<Options>(spec: HttpProviderSpec<Options>): ProviderPlugin<Options> {
  return {
    apiVersion: PLUGIN_API_VERSION,
    kind: 'provider',
    id: spec.id,
    description: spec.description,
    optionsSchema: spec.optionsSchema,
    secretOptions: spec.secretOptions,
    capabilities: spec.capabilities,
    create(options, env) {
      return new HttpProviderInstance(spec, options, env);
    },
  };
}

class HttpProviderInstance<Options> implements ProviderInstance {
  readonly #spec: HttpProviderSpec<Options>;
  readonly #options: Options;
  readonly #name: string;
  /** Keep-alive pools by connect timeout (aliases may set their own). */
  readonly #pools = new Map<number, Pool>();
  readonly #origin: string;
  readonly #basePath: string;
  readonly #headers: Record<string, string>;

  constructor(spec: HttpProviderSpec<Options>, options: Options, env: ProviderEnv) {
    this.#spec = spec;
    this.#options = options;
    this.#name = env.name;
    const endpoint = spec.endpoint(options, env);
    const url = new URL(endpoint.baseUrl);
    this.#origin = url.origin;
    this.#basePath = url.pathname.replace(/\/+$/, '');
    this.#headers = { 'content-type': 'application/json', accept: 'application/json', ...lowerKeys(endpoint.headers ?? {}) };
  }

  /**
   * One keep-alive pool per provider, config generation and connect timeout. Pipelining stays
   * off: streams are long-lived and a slow one would block the requests queued behind it.
   */
  #pool(connectMs: number): Pool {
    let pool = this.#pools.get(connectMs);
    if (!pool) {
      pool = new Pool(this.#origin, { connections: 256, keepAliveTimeout: 30_000, connect: { timeout: connectMs } });
      this.#pools.set(connectMs, pool);
    }
    return pool;
  }

  async send(call: ProviderCall): Promise<NativeResponse> {
    const spec = this.#spec.buildRequest(call, this.#options);
    const path = this.#basePath + spec.path;
    const body = spec.body === undefined ? '' : serialise(spec.body);
    let headers = spec.headers ? { ...this.#headers, ...lowerKeys(spec.headers) } : this.#headers;
    if (call.traceHeaders) headers = { ...headers, ...call.traceHeaders };
    if (call.stream) headers = { ...headers, accept: 'text/event-stream' };
    const method = spec.method ?? 'POST';
    if (this.#spec.signRequest) {
      const signed = await this.#spec.signRequest({ method, url: new URL(path, this.#origin), headers: { ...headers }, body }, this.#options);
      headers = { ...headers, ...signed };
    }

    let res: Dispatcher.ResponseData;
    try {
      const { connectMs, firstByteMs, idleMs } = call.timeouts;
      res = await this.#pool(connectMs).request({ method, path, headers, body: body || undefined, signal: call.signal, headersTimeout: firstByteMs, bodyTimeout: idleMs });
    } catch (err) {
      throw this.#transportError(err, call);
    }
    const responseHeaders = res.headers as Headers;
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const errorBody = await readErrorBody(res.body, responseHeaders);
      const failure = this.#spec.readError(res.statusCode, errorBody, responseHeaders);
      throw UpstreamError.http(this.#name, res.statusCode, failure, parseRetryAfter(responseHeaders));
    }
    if (!call.stream) return { kind: 'json', body: await this.#readJson(res, call), headers: responseHeaders };
    const events = (this.#spec.decodeStream ?? decodeSseJson)(res.body);
    return { kind: 'stream', events: this.#guardStream(events, call), headers: responseHeaders };
  }

  /** The whole answer, refused past `call.maxResponseBytes` so one huge answer cannot take the memory. */
  async #readJson(res: Dispatcher.ResponseData, call: ProviderCall): Promise<unknown> {
    const declared = Number(res.headers['content-length']);
    const limit = call.maxResponseBytes;
    const tooLarge = () => UpstreamError.protocol(this.#name, `the answer is larger than ${limit} bytes (server.upstreamBodyLimit)`);
    if (declared > limit) {
      res.body.destroy();
      throw tooLarge();
    }
    const parts: Buffer[] = [];
    let size = 0;
    try {
      for await (const part of res.body) {
        size += part.length;
        if (size > limit) {
          res.body.destroy();
          throw tooLarge();
        }
        parts.push(part);
      }
    } catch (err) {
      throw this.#transportError(err, call);
    }
    try {
      return JSON.parse(parts.length === 1 ? parts[0].toString('utf8') : Buffer.concat(parts, size).toString('utf8'));
    } catch (err) {
      throw this.#transportError(err, call, 'the response body is not valid JSON');
    }
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

  /** Socket errors in the middle of a stream become UpstreamErrors like any other failure. */
  async *#guardStream(events: AsyncIterable<unknown>, call: ProviderCall): AsyncGenerator<unknown> {
    try {
      yield* events;
    } catch (err) {
      if (err instanceof SyntaxError) throw UpstreamError.protocol(this.#name, err.message, err);
      throw this.#transportError(err, call);
    }
  }

  #transportError(err: unknown, call: ProviderCall, what?: string): unknown {
    if (err instanceof UpstreamError || call.signal.aborted) return err;
    const code = (err as { code?: string }).code ?? '';
    const message = what ?? (err as Error).message ?? String(err);
    const limits = call.timeouts;
    const timeout =
      code === 'UND_ERR_CONNECT_TIMEOUT' ? `could not connect within ${limits.connectMs} ms`
      : code === 'UND_ERR_HEADERS_TIMEOUT' ? `no response within ${limits.firstByteMs} ms (timeout.firstByteMs)`
      : code === 'UND_ERR_BODY_TIMEOUT' ? `the answer stalled for ${limits.idleMs} ms (timeout.idleMs)`
      : undefined;
    if (timeout) return UpstreamError.timeout(this.#name, timeout, err);
    if (what) return UpstreamError.protocol(this.#name, message, err);
    return UpstreamError.connect(this.#name, code ? `${code}: ${message}` : message, err);
  }
}

/** The request body as JSON; client data that cannot be serialised is the client's mistake, not a 500. */
function serialise(body: unknown): string {
  try {
    return JSON.stringify(body);
  } catch (err) {
    throw new GatewayError('invalid_request', `The request cannot be forwarded: ${(err as Error).message}.`);
  }
}

/** Default stream decoding: SSE events with JSON data; `data: [DONE]` ends the stream. */
export async function* decodeSseJson(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseJsonEvent> {
  for await (const message of readSse(body)) {
    if (message.data === '[DONE]') return;
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      throw new SyntaxError(`stream event is not JSON: ${message.data.slice(0, 120)}`);
    }
    yield { event: message.event, data };
  }
}

/**
 * The error body in the provider's words, when they are words: a compressed body nobody asked
 * for, or bytes that are not UTF-8, are described rather than passed on as garbage.
 */
async function readErrorBody(body: Dispatcher.ResponseData['body'], headers: Headers): Promise<unknown> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      if (size < MAX_ERROR_BODY) parts.push(chunk);
      size += chunk.length;
    }
  } catch {
    // A reset mid-error-body still leaves us the status; the message is best effort.
  }
  const encoding = String(headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity' && encoding !== '') return `an error body in an encoding the gateway did not ask for (content-encoding: ${encoding.slice(0, 32)})`;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(parts).subarray(0, MAX_ERROR_BODY));
  } catch {
    return `an error body that is not text (${size} bytes)`;
  }
  text = withoutControlCharacters(text);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Control characters other than tab and newlines are not part of a message. */
function withoutControlCharacters(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    if (code >= 0x20 || code === 0x09 || code === 0x0a || code === 0x0d) out += code === 0x7f ? '' : ch;
  }
  return out;
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v;
  return out;
}
