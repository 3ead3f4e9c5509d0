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
}

/** The content blocks the translations read; server tools and the like pass over. */
export type AnthropicContentBlock =
  | { type: 'text'; text?: string }
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

/** `content_block_delta` payloads; signature and citations deltas carry nothing an OpenAI client can use. */
export type AnthropicDelta =
  | { type: 'text_delta'; text?: string }
  | { type: 'input_json_delta'; partial_json?: string }
  | { type: 'thinking_delta'; thinking?: string }
  | { type: 'signature_delta'; signature?: string }
  | { type: 'citations_delta'; citation?: unknown };

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
