/** The provider side of the contract: capabilities, calls, native answers, stream translators, plugins. Part of the plugin contract (a leaf: wire types and the error catalogue only). */
import type { IdentityStatus } from './identity.ts';
import type { JsonSchema, Logger, ProviderApiVersion } from './common.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, EmbeddingRequest, EmbeddingResponse } from '../openai-types.ts';
import type { GatewayError } from '../errors.ts';
import type { Drop } from './dropped.ts';
import type { Timeouts } from './policies.ts';

/**
 * What the provider can honour. The core reads it: before an attempt's request is built it
 * refuses (400 `unsupported_parameter`) or, with `dropUnsupportedParams`, drops what is not
 * supported; the conformance battery runs the scenarios the declaration allows.
 */
export interface ProviderCapabilities {
  /** `stream: true` (default true). */
  streaming?: boolean;
  /** Streams end with token usage (default true; the battery checks the usage chunk). */
  streamUsage?: boolean;
  /** `tools` / `tool_choice` (default true). */
  tools?: boolean;
  /** Image content parts (default true). */
  images?: boolean;
  /** `response_format` json_object / json_schema (default true). */
  responseFormat?: boolean;
  /**
   * `n` above 1, `logprobs`/`top_logprobs`, non-zero penalties, a non-empty `logit_bias`,
   * non-text `modalities` (default true). When false their no-op values still pass.
   */
  samplingExtras?: boolean;
  /** Parameters the provider cannot honour at any value (`reasoning_effort` among them: see `reasoning`). */
  unsupportedParams?: readonly string[];
  /**
   * The model can reason (default true). When false, or when `unsupportedParams` lists
   * `reasoning_effort`, a request's `reasoning_effort` is dropped and reported rather than
   * refused: it asks how long to think, not what to answer. A target's `reasoning:` in
   * gateway.yaml sets it per model.
   */
  reasoning?: boolean;
  /**
   * Request parameters outside OpenAI's Chat Completions set that the provider reads: `'all'`
   * for an OpenAI-compatible server, which gets them as the client sent them (a parameter newer
   * than the gateway included), or the ones its translation reads (`['top_k', 'thinking']`). Any
   * other is reported as dropped (`x-switchyard-dropped`; refused when strict). Default: none.
   */
  extraParams?: 'all' | readonly string[];
  /** Serves POST /v1/embeddings through `ProviderInstance.embed` (default false). */
  embeddings?: boolean;
  /**
   * Client protocols this provider speaks natively (e.g. `anthropic-messages`): a request that
   * came in that way is handed over as the client sent it (`ProviderCall.native`), so every
   * field survives, and its answer goes back to the client untranslated.
   */
  nativeProtocols?: readonly string[];
  /**
   * Counts a chat request's input tokens exactly, with the provider's own counter
   * (`ProviderInstance.countTokens`): token counts (Anthropic's /v1/messages/count_tokens) are
   * answered with it, marked `x-switchyard-token-count: exact`. Without it (default false), and
   * without a native counting protocol, the gateway answers its estimate.
   */
  countTokens?: boolean;
}

/** A request as the client sent it in a provider's own protocol (see `nativeProtocols`). */
export interface NativeRequest {
  protocol: string;
  /** The client's body; send it with `model` set to the call's model. */
  body: Readonly<Record<string, unknown>>;
  /** The client's protocol headers worth passing on (e.g. anthropic-version, anthropic-beta). */
  headers?: Readonly<Record<string, string>>;
  /**
   * Parts only the native protocol has, which the translation leaves out: dropped and reported
   * when the attempt translates (refused when the request is strict); kept when it passes through.
   */
  untranslatable?: readonly Drop[];
  /**
   * Parts the translation cannot leave out without changing what the model is asked (Anthropic's
   * `max_tokens: 0`, a document only the native API can read): the 400 answered when the attempt
   * translates, whatever strictness says.
   */
  unservable?: readonly GatewayError[];
}

/** One attempt against one provider. */
export interface ProviderCall {
  /** The provider's name in gateway.yaml, for error messages. */
  readonly provider: string;
  /** The client's request as validated (minus dropped parameters). Read-only: a retry re-uses it. */
  readonly request: ChatCompletionRequest;
  /** The upstream model this attempt targets (from the alias target, never the alias). */
  readonly model: string;
  readonly stream: boolean;
  /** Aborted when the client goes away or the attempt is abandoned. */
  readonly signal: AbortSignal;
  readonly requestId: string;
  readonly log: Logger;
  /** From the alias or provider config: drop parameters the provider cannot honour instead of answering 400. */
  readonly dropUnsupportedParams: boolean;
  /** Connect, first-byte and idle-gap limits for this attempt (HTTP providers apply them). */
  readonly timeouts: Timeouts;
  /** Headers the gateway adds to the upstream request (W3C trace context); HTTP providers send them. */
  readonly traceHeaders?: Readonly<Record<string, string>>;
  /** Largest non-streamed answer accepted, in bytes (`server.upstreamBodyLimit`); past it the attempt fails. */
  readonly maxResponseBytes: number;
  /**
   * Set when the client spoke a protocol this provider declared in `nativeProtocols`: build the
   * upstream request from it instead of `request` (which is still its chat translation). The
   * answer is translated as usual (usage, cost) and passed to the client untranslated.
   */
  readonly native?: NativeRequest;
  /**
   * Reports a field this attempt's translation leaves out because of its target (a
   * `reasoning_effort` for a model without reasoning, a role the server lacks): the answer's
   * `x-switchyard-dropped` header, the log line and the dropped-fields counter name it. When the
   * request is strict it throws the 400 naming the field instead, so call it before leaving the
   * field out. Absent on calls the gateway did not make (a test's fake): the kit's `reportDrop`
   * calls it when present.
   */
  readonly drop?: (drop: Drop) => void;
}

/** A provider's answer before translation: its own JSON body, or its own stream of events. */
export type NativeResponse =
  | { kind: 'json'; body: unknown; headers: Record<string, string | string[] | undefined> }
  | { kind: 'stream'; events: AsyncIterable<unknown>; headers: Record<string, string | string[] | undefined> };

/** Turns one native stream into OpenAI chunks. A new one is made per attempt: it may keep state. */
export interface StreamTranslator {
  /** One native event → zero or more chunks. Throw an UpstreamError for an in-stream error event. */
  push(event: unknown): ChatCompletionChunk | ChatCompletionChunk[] | undefined;
  /** The upstream stream ended; return trailing chunks or throw if it ended too early. */
  end?(): ChatCompletionChunk | ChatCompletionChunk[] | undefined;
  /**
   * true: `push` returns each SSE event's parsed `data` itself, never changed (an OpenAI-compatible
   * upstream's chunks). A chunk that nothing else changes then goes to a chat client as the
   * upstream's own JSON text, not serialised again.
   */
  readonly verbatim?: boolean;
}

/** A live provider, made once per config generation from the provider's options. */
export interface ProviderInstance {
  /** Performs the attempt. Non-2xx answers and transport failures throw UpstreamError. */
  send(call: ProviderCall): Promise<NativeResponse>;
  /**
   * The client protocols this instance speaks natively, when its options decide it (a server
   * that may not serve every protocol its plugin can): overrides `capabilities.nativeProtocols`
   * for this instance's targets. Absent: the plugin's declaration holds.
   */
  readonly nativeProtocols?: readonly string[];
  /**
   * What this instance honours for one model, when its options decide it (Bedrock's `api` sends
   * a Claude model Anthropic's Messages body, another Converse's): the fields given replace the
   * plugin's declaration for that target, once per config generation. Absent or undefined: the
   * declaration holds.
   */
  capabilitiesFor?(model: string): ProviderCapabilities | undefined;
  /** Native JSON body → OpenAI chat completion (pure). */
  toCompletion(body: unknown, call: ProviderCall): ChatCompletion;
  /** A fresh translator for one streamed attempt. */
  createStreamTranslator(call: ProviderCall): StreamTranslator;
  /**
   * Embeddings for `call.embedding` (providers declaring `capabilities.embeddings`). Answers the
   * OpenAI shape with float vectors; the core converts to base64 when the client asked for it.
   * Non-2xx answers and transport failures throw UpstreamError, as `send` does.
   */
  embed?(call: EmbeddingCall): Promise<EmbeddingResponse>;
  /**
   * The input tokens of `call.request` as the provider counts them (providers declaring
   * `capabilities.countTokens`), with its counting endpoint: nothing is generated or billed.
   * Failures throw UpstreamError, as `send` does.
   */
  countTokens?(call: ProviderCall): Promise<number>;
  /** Release pools and timers when the config generation that made it retires. */
  close?(): Promise<void>;
  /** The identity it calls its upstream with, when it has one to report (a refreshed cloud token). */
  identity?(): IdentityStatus | undefined;
  /**
   * Resolves the credentials once now (a token fetched, not just configured) and answers where
   * they came from: `switchyard validate --strict` calls it for every provider. Rejects when none
   * could be had, with a message that names why and holds no secret. Absent: `identity()` is
   * what there is to say (an API key needs no fetch).
   */
  checkIdentity?(): Promise<IdentityStatus>;
}

/** One embeddings attempt: the same call, with the embeddings request instead of a chat one. */
export interface EmbeddingCall extends Omit<ProviderCall, 'request' | 'stream'> {
  /** The client's request, `model` still the alias; `encoding_format` is the core's business. */
  readonly embedding: EmbeddingRequest;
}

export interface ProviderEnv {
  /** The provider's name in gateway.yaml (`providers.<name>`). */
  name: string;
  log: Logger;
  /** Directory of gateway.yaml, for options that name files. */
  configDir: string;
  /** Most connections to keep open to the upstream (`providers.<name>.maxConnections`). */
  maxConnections?: number;
}

export interface ProviderPlugin<Options = Record<string, unknown>> {
  apiVersion: ProviderApiVersion;
  kind: 'provider';
  /** Stable id, e.g. `openai`; built-ins are referenced by it. */
  id: string;
  description?: string;
  /** JSON Schema for `providers.<name>` minus `plugin`, checked at load with file:line:col errors. */
  optionsSchema: JsonSchema;
  /** Option names holding secrets (a dotted path for a nested one: `auth.clientSecret`): scrubbed from every message a client or log sees. */
  secretOptions?: string[];
  capabilities?: ProviderCapabilities;
  /**
   * Called once per config generation whose options for this provider changed. Answer
   * `{ unavailable: reason }` when the provider cannot serve as configured (no credentials in
   * the options or the environment): the gateway still starts, names the reason in a config
   * warning, the startup banner and /readyz, and answers 503 for its targets (a fallback
   * serves) without calling it. Throwing is for a configuration that is wrong: a config error.
   */
  create(options: Options, env: ProviderEnv): ProviderInstance | ProviderUnavailable | Promise<ProviderInstance | ProviderUnavailable>;
}

/** Why a provider cannot serve with its configuration (see `ProviderPlugin.create`); the reason must not hold a secret. */
export interface ProviderUnavailable {
  readonly unavailable: string;
}

/** True when `create` (or an HTTP provider's `prepare`) answered why the provider cannot serve. */
export function isProviderUnavailable(created: unknown): created is ProviderUnavailable {
  return typeof created === 'object' && created !== null && typeof (created as Partial<ProviderUnavailable>).unavailable === 'string';
}

/**
 * Declares a provider plugin (identity at run time; it types the object).
 *
 * @example
 * export default defineProvider({ apiVersion: 2, kind: 'provider', id: 'acme', optionsSchema: {}, create: () => instance });
 */
export function defineProvider<Options>(plugin: ProviderPlugin<Options>): ProviderPlugin<Options> {
  return plugin;
}
