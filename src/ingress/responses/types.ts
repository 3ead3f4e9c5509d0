/**
 * The slice of the OpenAI Responses API wire types the translation produces and reads, written
 * from the API reference (https://platform.openai.com/docs/api-reference/responses) and checked
 * against OpenAI's own schemas (schemas/openai/responses.schema.json) by the tests. Kept here
 * rather than imported from the `openai` SDK, which is an optional peer of the gateway.
 */
// ------------------------------------------------------------------ request (the parts relied on)

/** `text.format`: plain text, JSON mode, or Structured Outputs (the json_schema fields are flat here, nested in chat). */
export type TextFormat = { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean | null; description?: string };

/** A function tool as the Responses API spells it: flat, where chat nests it under `function`. */
export interface ResponsesFunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

export type ResponsesToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; name: string }
  | { type: 'allowed_tools'; mode: 'auto' | 'required'; tools: Array<{ type: 'function'; name: string }> };

/**
 * A `POST /v1/responses` body after `readResponsesRequest` checked it: the fields the translation
 * and the echo in the `response` object rely on, with `null` read as absent. `input` is checked
 * item by item when it is translated (`inputToMessages`).
 */
export interface ResponsesRequest {
  model: string;
  input: string | unknown[];
  instructions?: string;
  tools: ResponsesFunctionTool[];
  tool_choice?: ResponsesToolChoice;
  parallel_tool_calls?: boolean;
  text?: { format?: TextFormat; verbosity?: 'low' | 'medium' | 'high' };
  max_output_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_logprobs?: number;
  reasoning?: { effort?: string; summary?: string };
  metadata?: Record<string, string>;
  user?: string;
  safety_identifier?: string;
  prompt_cache_key?: string;
  prompt_cache_retention?: string;
  service_tier?: string;
  include: string[];
  stream: boolean;
  /** Keep the response (OpenAI's default: true); false when the gateway keeps none. */
  store?: boolean;
  /** The stored response this one continues; its chain is already in `input` once expanded (stored.ts). */
  previous_response_id?: string;
  /** The stored conversation this turn belongs to (its items are already in `input` once expanded). */
  conversation?: string;
}

// ------------------------------------------------------------------ the response object

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** Chat logprobs and Responses logprobs have the same shape (token, logprob, bytes, top_logprobs). */
export interface LogProb {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }>;
}

export interface OutputText {
  type: 'output_text';
  text: string;
  /** Always empty: chat has no citations a provider fills in the same way. */
  annotations: unknown[];
  logprobs: LogProb[];
}

export interface Refusal {
  type: 'refusal';
  refusal: string;
}

export interface ReasoningText {
  type: 'reasoning_text';
  text: string;
}

export interface MessageItem {
  type: 'message';
  id: string;
  role: 'assistant';
  status: ItemStatus;
  content: Array<OutputText | Refusal>;
}

export interface FunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: ItemStatus;
}

/** The model's reasoning as text (chat's `reasoning_content`); never a summary, never encrypted. */
export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  summary: [];
  content: ReasoningText[];
  status: ItemStatus;
}

export type OutputItem = MessageItem | FunctionCallItem | ReasoningItem;

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  /** Switchyard's extension, as on chat usage: USD at the target's price. */
  cost?: number;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** The error of a failed response; `code` is one of OpenAI's ResponseErrorCode values. */
export interface ResponseError {
  code: 'server_error' | 'rate_limit_exceeded' | 'invalid_prompt';
  message: string;
}

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  completed_at?: number | null;
  status: ResponseStatus;
  error: ResponseError | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  model: string;
  output: OutputItem[];
  usage?: ResponseUsage;
  // The echo of the request.
  instructions: string | null;
  tools: Array<ResponsesFunctionTool & { strict: boolean | null; parameters: Record<string, unknown> | null }>;
  tool_choice: ResponsesToolChoice;
  parallel_tool_calls: boolean;
  text: { format: TextFormat; verbosity?: string | null };
  temperature: number | null;
  top_p: number | null;
  top_logprobs: number | null;
  max_output_tokens: number | null;
  reasoning: { effort: string | null; summary: string | null };
  metadata: Record<string, string>;
  store: boolean;
  background: false;
  previous_response_id: string | null;
  conversation?: { id: string } | null;
  truncation: 'disabled';
  service_tier?: string | null;
  user?: string;
  safety_identifier?: string | null;
  prompt_cache_key?: string | null;
}

// ------------------------------------------------------------------ stream events

interface Sequenced {
  sequence_number: number;
}
interface ItemScoped extends Sequenced {
  item_id: string;
  output_index: number;
}
interface PartScoped extends ItemScoped {
  content_index: number;
}

export type ResponsesEvent =
  | ({ type: 'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete' | 'response.failed'; response: ResponseObject } & Sequenced)
  | ({ type: 'response.output_item.added' | 'response.output_item.done'; output_index: number; item: OutputItem } & Sequenced)
  | ({ type: 'response.content_part.added' | 'response.content_part.done'; part: OutputText | Refusal | ReasoningText } & PartScoped)
  | ({ type: 'response.output_text.delta'; delta: string; logprobs: LogProb[] } & PartScoped)
  | ({ type: 'response.output_text.done'; text: string; logprobs: LogProb[] } & PartScoped)
  | ({ type: 'response.refusal.delta'; delta: string } & PartScoped)
  | ({ type: 'response.refusal.done'; refusal: string } & PartScoped)
  | ({ type: 'response.reasoning_text.delta'; delta: string } & PartScoped)
  | ({ type: 'response.reasoning_text.done'; text: string } & PartScoped)
  | ({ type: 'response.function_call_arguments.delta'; delta: string } & ItemScoped)
  | ({ type: 'response.function_call_arguments.done'; name: string; arguments: string } & ItemScoped)
  | ({ type: 'error'; code: string; message: string; param: string | null; error: { type: string; code: string; message: string; param: string | null } } & Sequenced);
