/**
 * What the Responses translations read of OpenAI's Responses API answers: the response object
 * (https://platform.openai.com/docs/api-reference/responses/object) and its streamed events
 * (https://platform.openai.com/docs/api-reference/responses-streaming). A tolerant reader's types:
 * a field the translation can do without is optional, and an item or event type not listed here
 * (hosted tool calls, reasoning summaries...) passes over. (The /v1/responses ingress writes this
 * protocol; what it writes is typed in src/ingress/responses/types.ts.)
 */

/** Cached input is part of `input_tokens`; reasoning is part of `output_tokens`. */
export interface ResponsesUsage {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
  input_tokens_details?: { cached_tokens?: number } | null;
  output_tokens_details?: { reasoning_tokens?: number } | null;
}

export type ResponsesContentPart = { type: 'output_text'; text?: string } | { type: 'refusal'; refusal?: string } | { type: string };

/** The output items the translations read; every other type (web_search_call, mcp_call...) passes over. */
export type ResponsesOutputItem =
  | { type: 'message'; id?: string; content?: ResponsesContentPart[] }
  | { type: 'function_call'; id?: string; call_id?: string; name?: string; arguments?: string }
  | { type: 'reasoning'; id?: string; summary?: Array<{ type: string; text?: string }>; content?: Array<{ type: string; text?: string }> }
  | { type: string; id?: string };

/** A non-streamed answer, and the snapshot the lifecycle events carry. */
export interface ResponsesBody {
  id?: string;
  object?: 'response';
  created_at?: number;
  status?: 'completed' | 'incomplete' | 'failed' | 'in_progress' | 'queued' | 'cancelled' | string;
  model?: string;
  output?: ResponsesOutputItem[];
  incomplete_details?: { reason?: string } | null;
  error?: { code?: string | null; message?: string } | null;
  usage?: ResponsesUsage | null;
}

/** The streamed events the translation reads (`type` is also the SSE event name). */
export type ResponsesStreamEvent =
  | { type: 'response.created' | 'response.in_progress' | 'response.queued'; response?: ResponsesBody }
  | { type: 'response.completed' | 'response.incomplete' | 'response.failed'; response?: ResponsesBody }
  | { type: 'response.output_item.added' | 'response.output_item.done'; output_index?: number; item?: ResponsesOutputItem }
  | { type: 'response.output_text.delta' | 'response.refusal.delta'; output_index?: number; delta?: string }
  | { type: 'response.reasoning_summary_text.delta' | 'response.reasoning_text.delta'; output_index?: number; delta?: string }
  | { type: 'response.function_call_arguments.delta'; output_index?: number; item_id?: string; delta?: string }
  | { type: 'error'; code?: string | null; message?: string; param?: string | null; error?: { type?: string; code?: string | null; message?: string; param?: string | null } }
  | { type: string };
