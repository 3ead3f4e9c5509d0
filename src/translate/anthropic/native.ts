/**
 * What the Anthropic translations read of the Messages API's answers: the message
 * (https://docs.anthropic.com/en/api/messages) and the streamed events
 * (https://docs.anthropic.com/en/docs/build-with-claude/streaming#event-types). A tolerant
 * reader's types: a field the translation can do without is optional, and a block, delta or event
 * type not listed here reaches the translators' `default` branches and is passed over. (The
 * /v1/messages ingress writes this protocol; what it writes is typed in src/ingress/messages/types.ts.)
 */

/** Anthropic counts cache reads and writes apart from `input_tokens` (the uncached rest). */
export interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  /** Searches the server web search tool ran. */
  server_tool_use?: { web_search_requests?: number } | null;
}

/** A text block's citation of a web search result (other citation types pass over). */
export interface AnthropicCitation {
  type: string;
  url?: string;
  title?: string | null;
  cited_text?: string;
}

/** One page a web search found (`encrypted_content` is Anthropic's own and not read). */
export interface AnthropicSearchResult {
  type: string;
  url?: string;
  title?: string;
}

/** The content blocks the translations read; other server tools and the like pass over. */
export type AnthropicContentBlock =
  | { type: 'text'; text?: string; citations?: AnthropicCitation[] | null }
  | { type: 'server_tool_use'; id?: string; name?: string; input?: unknown }
  /** The results, or `{type: 'web_search_tool_result_error', error_code}`. */
  | { type: 'web_search_tool_result'; tool_use_id?: string; content?: AnthropicSearchResult[] | { type: string; error_code?: string } }
  | { type: 'thinking'; thinking?: string; signature?: string }
  | { type: 'redacted_thinking'; data?: string }
  | { type: 'tool_use'; id?: string; name?: string; input?: unknown };

/** The non-streamed answer, and the snapshot `message_start` opens a stream with (content empty). */
export interface AnthropicResponse {
  type?: 'message';
  id: string;
  model?: string;
  content?: AnthropicContentBlock[];
  stop_reason?: string | null;
  usage?: AnthropicUsage;
}

/** An error: the body of a non-2xx answer, and the `error` event of a stream. */
export interface AnthropicErrorBody {
  type: 'error';
  error?: { type?: string; message?: string };
  request_id?: string;
}

/** `content_block_delta` payloads. */
export type AnthropicDelta =
  | { type: 'text_delta'; text?: string }
  | { type: 'input_json_delta'; partial_json?: string }
  | { type: 'thinking_delta'; thinking?: string }
  | { type: 'signature_delta'; signature?: string }
  | { type: 'citations_delta'; citation?: AnthropicCitation };

/** One streamed event's data (its `type` repeats the SSE event name). */
export type AnthropicStreamEvent =
  | { type: 'message_start'; message?: AnthropicResponse }
  | { type: 'content_block_start'; index: number; content_block?: AnthropicContentBlock }
  | { type: 'content_block_delta'; index: number; delta?: AnthropicDelta }
  | { type: 'content_block_stop'; index: number }
  /** Usage here is cumulative; newer API versions repeat the input and cache counts. */
  | { type: 'message_delta'; delta?: { stop_reason?: string | null; stop_sequence?: string | null }; usage?: AnthropicUsage }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | AnthropicErrorBody;
