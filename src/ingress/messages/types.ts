/**
 * The slice of Anthropic's Messages API wire types (https://docs.anthropic.com/en/api/messages)
 * that the /v1/messages ingress writes. Requests are read as `unknown` and checked field by field
 * (request.ts), so only the answer side is typed in full here.
 */

/** https://docs.anthropic.com/en/api/messages#response-stop-reason */
export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

/** A text block's citation of a page the provider's web search found (the gateway has no `encrypted_index`: ''). */
export interface WebSearchCitation {
  type: 'web_search_result_location';
  url: string;
  title: string;
  cited_text: string;
  encrypted_index: string;
}

export interface TextBlock {
  type: 'text';
  text: string;
  citations?: WebSearchCitation[];
}

/** A search the provider ran (the gateway's `web_search_calls`), as Anthropic's server tool call. */
export interface ServerToolUseBlock {
  type: 'server_tool_use';
  id: string;
  name: 'web_search';
  input: Record<string, unknown>;
}

/** What that search found (no `encrypted_content`: the target was not Anthropic; ''), or its error. */
export interface WebSearchToolResultBlock {
  type: 'web_search_tool_result';
  tool_use_id: string;
  content: Array<{ type: 'web_search_result'; url: string; title: string; encrypted_content: string; page_age: null }> | { type: 'web_search_tool_result_error'; error_code: string };
}

/**
 * Extended thinking. The signature is the provider's (Anthropic's, Bedrock's, or Gemini's
 * thoughtSignature), sent back on the next turn; '' when the provider gave none.
 */
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

/** Reasoning the provider encrypted: `data` is opaque and goes back as it came. */
export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export type ContentBlock = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ServerToolUseBlock | WebSearchToolResultBlock;

/**
 * Anthropic counts cache reads and writes apart from `input_tokens` (the uncached rest); the
 * prompt is their sum. https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
 */
export interface MessagesUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
  /** Searches the target's own web search ran (Anthropic's server tool, Gemini's grounding queries). */
  server_tool_use?: { web_search_requests: number };
}

/** The `message` object: the non-streamed answer, and the snapshot a stream builds up. */
export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
}

/** What the answer translations read of the client's Messages request. */
export interface MessagesRequestInfo {
  model?: unknown;
  stop_sequences?: unknown;
}

// ---------------------------------------------------------------- stream events
// https://docs.anthropic.com/en/docs/build-with-claude/streaming#event-types

export interface MessageStartEvent {
  type: 'message_start';
  message: AnthropicMessage;
}

export interface PingEvent {
  type: 'ping';
}

export interface ContentBlockStartEvent {
  type: 'content_block_start';
  index: number;
  /** Starts empty: text '', thinking '' with signature '', tool_use with input {}. */
  content_block: ContentBlock;
}

export type BlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'citations_delta'; citation: WebSearchCitation };

export interface ContentBlockDeltaEvent {
  type: 'content_block_delta';
  index: number;
  delta: BlockDelta;
}

export interface ContentBlockStopEvent {
  type: 'content_block_stop';
  index: number;
}

export interface MessageDeltaEvent {
  type: 'message_delta';
  delta: { stop_reason: StopReason; stop_sequence: string | null };
  /** Cumulative totals: output_tokens always, the input counts once they are known. */
  usage: Partial<MessagesUsage> & { output_tokens: number };
}

export interface MessageStopEvent {
  type: 'message_stop';
}

export interface ErrorEvent {
  type: 'error';
  error: { type: AnthropicErrorType; message: string; details?: Readonly<Record<string, unknown>> };
}

export type AnthropicEvent = MessageStartEvent | PingEvent | ContentBlockStartEvent | ContentBlockDeltaEvent | ContentBlockStopEvent | MessageDeltaEvent | MessageStopEvent | ErrorEvent;

// ---------------------------------------------------------------- errors

/** https://docs.anthropic.com/en/api/errors#http-errors (plus timeout_error, which the SDK knows). */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: AnthropicErrorType; message: string; details?: Readonly<Record<string, unknown>> };
  /** Anthropic's bodies repeat the `request-id` header here. */
  request_id?: string;
}
