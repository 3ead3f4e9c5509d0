/**
 * The slice of the OpenAI Chat Completions wire types the gateway relies on.
 * Every object keeps an index signature: upstream extras (service_tier, obfuscation,
 * prompt_filter_results, ...) must survive the trip untouched.
 */

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';

export interface TextPart {
  type: 'text';
  text: string;
  [extra: string]: unknown;
}
export interface ImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
  [extra: string]: unknown;
}
export interface AudioPart {
  type: 'input_audio';
  input_audio: { data: string; format: string };
  [extra: string]: unknown;
}
export interface FilePart {
  type: 'file';
  file: Record<string, unknown>;
  [extra: string]: unknown;
}
export interface RefusalPart {
  type: 'refusal';
  refusal: string;
  [extra: string]: unknown;
}
export type ContentPart = TextPart | ImagePart | AudioPart | FilePart | RefusalPart;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  [extra: string]: unknown;
}

/**
 * Switchyard's extension: one block of a model's reasoning as its provider gave it, with what the
 * provider needs to take it back on a later turn (LiteLLM's `thinking_blocks` shape). `signature`
 * is opaque and means something only to the provider family that made it: Anthropic's thinking
 * signature, Bedrock's `reasoningText.signature`, Gemini's `thoughtSignature`. `redacted_thinking`
 * holds reasoning the provider encrypted (Anthropic `data`, Bedrock `redactedContent`).
 */
export type ThinkingBlock = { type: 'thinking'; thinking: string; signature?: string } | { type: 'redacted_thinking'; data: string };

/**
 * Switchyard's extension, Anthropic's prompt-cache marker: the cached prefix ends with the message
 * (or the tool list) that carries it. Providers map it to their own caching (Bedrock `cachePoint`,
 * OpenAI `prompt_cache_key`) or leave it out.
 */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

/**
 * Switchyard's extension (request): the client asked for its provider's own web search (a
 * Responses `web_search` tool, a Messages `web_search_2025…` server tool). A translation maps it
 * to the target's native search (Anthropic's server tool `web_search_20250305`, Gemini's
 * `googleSearch` grounding) or reports it dropped (see src/translate/chat/web-search.ts).
 */
export interface WebSearchRequest {
  /** Where the client asked for it (`tools[3]`), for a report when a target cannot carry it. */
  field?: string;
  /** The client's name for the tool (`web_search`, `web_search_20250305`). */
  what?: string;
  /** The most searches the model may run in this request. */
  max_uses?: number;
  /** Only these domains (and their subdomains) in results. */
  allowed_domains?: string[];
  /** Never these domains. */
  blocked_domains?: string[];
  /** Where the user is, approximately, for local results. */
  user_location?: { city?: string; region?: string; country?: string; timezone?: string };
}

/** Switchyard's extension (answer): one search the provider ran, with the pages it found. */
export interface WebSearchCall {
  /** The provider's id for it (Anthropic's `srvtoolu_…`), or one the translation made. */
  id: string;
  /** The query, when the provider says it. */
  query?: string;
  /** The pages found, in the provider's order. */
  sources: Array<{ url: string; title?: string }>;
  status: 'completed' | 'failed';
  /** Why it failed (Anthropic's `error_code`), when it did. */
  error?: string;
}

/**
 * A citation in the assistant's text: OpenAI chat's own `annotations` shape. `start_index` and
 * `end_index` are UTF-16 offsets (JavaScript string indices) into the message's whole `content`.
 */
export interface UrlCitation {
  type: 'url_citation';
  url_citation: { start_index: number; end_index: number; url: string; title: string };
}

export interface ChatMessage {
  role: Role;
  content?: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  refusal?: string | null;
  /** The assistant's reasoning text, under the field OpenAI-compatible servers use for it. */
  reasoning_content?: string;
  /** Switchyard's extension (assistant turns): the reasoning blocks with their signatures, in order. */
  thinking_blocks?: ThinkingBlock[];
  /** Switchyard's extension: the cached prefix ends with this message. */
  cache_control?: CacheControl;
  [extra: string]: unknown;
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
  /** Switchyard's extension: the cached prefix ends with the tool definitions (set on the last cached tool). */
  cache_control?: CacheControl;
  [extra: string]: unknown;
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema?: Record<string, unknown>; strict?: boolean | null; description?: string } };

export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean; [extra: string]: unknown } | null;
  temperature?: number | null;
  top_p?: number | null;
  n?: number | null;
  stop?: string | string[] | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  seed?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  response_format?: ResponseFormat;
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  user?: string;
  metadata?: Record<string, string> | null;
  /** Switchyard's extension: run the provider's own web search (see WebSearchRequest). */
  web_search?: WebSearchRequest;
  [extra: string]: unknown;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; [extra: string]: unknown };
  completion_tokens_details?: { reasoning_tokens?: number; [extra: string]: unknown };
  /** Switchyard's extension: USD at the target's price (absent when the price is unknown). */
  cost?: number;
  /** Searches the provider ran on its side (Anthropic's name; Gemini's grounding queries), billed per request. */
  server_tool_use?: { web_search_requests?: number; [extra: string]: unknown };
  [extra: string]: unknown;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: {
      role: 'assistant';
      content: string | null;
      refusal?: string | null;
      tool_calls?: ToolCall[];
      reasoning_content?: string;
      /** Switchyard's extension: the reasoning blocks with their signatures (see ThinkingBlock). */
      thinking_blocks?: ThinkingBlock[];
      /** Citations of the web pages the provider's search found (OpenAI's shape). */
      annotations?: UrlCitation[];
      /** Switchyard's extension: the searches the provider ran (see WebSearchCall). */
      web_search_calls?: WebSearchCall[];
      [extra: string]: unknown;
    };
    finish_reason: FinishReason | null;
    logprobs?: unknown;
    [extra: string]: unknown;
  }>;
  usage?: Usage;
  [extra: string]: unknown;
}

export interface ChunkToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
  [extra: string]: unknown;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: {
      role?: 'assistant';
      content?: string | null;
      refusal?: string | null;
      tool_calls?: ChunkToolCallDelta[];
      /** A fragment of the reasoning text. */
      reasoning_content?: string;
      /**
       * Switchyard's extension: what reasoning text deltas cannot carry. `{type: 'thinking',
       * thinking: '', signature}` closes the reasoning streamed so far with its signature (later
       * reasoning text starts a new block); `{type: 'redacted_thinking', data}` is a whole block.
       */
      thinking_blocks?: ThinkingBlock[];
      /** Citations, offsets into the choice's whole content so far (see UrlCitation). */
      annotations?: UrlCitation[];
      /** Switchyard's extension: searches the provider ran, each whole once it finished. */
      web_search_calls?: WebSearchCall[];
      [extra: string]: unknown;
    };
    finish_reason: FinishReason | null;
    logprobs?: unknown;
    [extra: string]: unknown;
  }>;
  usage?: Usage | null;
  [extra: string]: unknown;
}

// ---------------------------------------------------------------- embeddings

/** POST /v1/embeddings: text, texts, or token arrays. */
export interface EmbeddingRequest {
  model: string;
  input: string | string[] | number[] | number[][];
  /** `float` (default) or `base64` (little-endian float32, as OpenAI sends it). */
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  user?: string;
  [extra: string]: unknown;
}

export interface Embedding {
  object: 'embedding';
  index: number;
  /** Floats, or base64 of little-endian float32 when the request asked for base64. */
  embedding: number[] | string;
}

export interface EmbeddingResponse {
  object: 'list';
  data: Embedding[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number; cost?: number; [extra: string]: unknown };
  [extra: string]: unknown;
}
