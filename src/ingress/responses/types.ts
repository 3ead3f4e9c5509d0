/**
 * The slice of the OpenAI Responses API wire types the translation produces and reads, written
 * from the API reference (https://platform.openai.com/docs/api-reference/responses) and checked
 * against OpenAI's own schemas (schemas/openai/responses.schema.json) by the tests. Kept here
 * rather than imported from the `openai` SDK, which is an optional peer of the gateway.
 */
import type { Drop } from '../../contract/dropped.ts';
import type { FunctionTool, WebSearchRequest } from '../../openai-types.ts';

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

/** A custom (freeform) tool's input format: unconstrained text, or text a grammar (Lark or a regex) defines. */
export type CustomFormat = { type: 'text' } | { type: 'grammar'; syntax: string; definition: string };

/** A custom tool: the model calls it with free text (`custom_tool_call.input`), not JSON arguments. */
export interface ResponsesCustomTool {
  type: 'custom';
  name: string;
  description?: string;
  format?: CustomFormat;
}

/** Function and custom tools grouped under a name their calls carry (`namespace` on the call item). */
export interface ResponsesNamespaceTool {
  type: 'namespace';
  name: string;
  description: string;
  tools: Array<ResponsesFunctionTool | ResponsesCustomTool>;
}

/** Tool search the client runs (`execution: client`): the model asks, the client answers with tools to load. */
export interface ResponsesToolSearchTool {
  type: 'tool_search';
  execution: 'client';
  description?: string;
  parameters?: Record<string, unknown>;
}

/** OpenAI's hosted web search tool, as the client sent it (echoed); the search itself is `ResponsesRequest.web_search`. */
export interface ResponsesWebSearchTool {
  type: 'web_search' | 'web_search_2025_08_26' | 'web_search_preview' | 'web_search_preview_2025_03_11';
  filters?: unknown;
  user_location?: unknown;
  search_context_size?: unknown;
}

/** A tool of the request the translation carries (other hosted tools are dropped), as the response echoes it. */
export type ResponsesTool = ResponsesFunctionTool | ResponsesCustomTool | ResponsesNamespaceTool | ResponsesToolSearchTool | ResponsesWebSearchTool;

/** A function or custom tool as chat sees it: one function, under a name unique in the request. */
export interface Callable {
  /** The chat function's name (see tools.ts for how it is made). */
  chatName: string;
  kind: 'function' | 'custom' | 'tool_search';
  /** The tool's own name, as its calls carry it back. */
  name: string;
  /** Its namespace, as its calls carry it back (absent for top-level tools and OpenAI's default `functions`). */
  namespace?: string;
  /** The chat function it is. */
  tool: FunctionTool;
}

/** A named tool the choice points at; `namespace` where the client names one. */
export interface NamedTool {
  type: 'function' | 'custom';
  name: string;
  namespace?: string;
}

export type ResponsesToolChoice = 'none' | 'auto' | 'required' | NamedTool | { type: 'allowed_tools'; mode: 'auto' | 'required'; tools: NamedTool[] };

/**
 * A `POST /v1/responses` body after `readResponsesRequest` checked it: the fields the translation
 * and the echo in the `response` object rely on, with `null` read as absent. `input` is checked
 * item by item when it is translated (`inputToMessages`).
 */
export interface ResponsesRequest {
  model: string;
  input: string | unknown[];
  instructions?: string;
  /** Function, custom and namespace tools, from `tools` then from `additional_tools` input items. */
  tools: ResponsesTool[];
  /** Those tools flattened into chat functions, and the names their calls map back to. */
  callables: Callable[];
  /** The web search the client asked for (a `web_search` tool), as the chat extension carries it. */
  web_search?: WebSearchRequest;
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
  /** What was read and is not carried to a translated target (reported; refused when strict). */
  untranslatable: Drop[];
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

/** A web page the text cites (from the provider's web search); offsets into the output_text's text. */
export interface UrlCitationAnnotation {
  type: 'url_citation';
  start_index: number;
  end_index: number;
  url: string;
  title: string;
}

export interface OutputText {
  type: 'output_text';
  text: string;
  /** The web pages a provider's search found that the text cites; empty otherwise. */
  annotations: UrlCitationAnnotation[];
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
  namespace?: string;
  arguments: string;
  status: ItemStatus;
}

/** A call of a custom tool: its free-text input (the one string argument of the chat function it was). */
export interface CustomToolCallItem {
  type: 'custom_tool_call';
  id: string;
  call_id: string;
  name: string;
  namespace?: string;
  input: string;
  status: ItemStatus;
}

/** The model's reasoning as text (chat's `reasoning_content`), never a summary; its signed form as `encrypted_content` when asked for (reasoning.ts). */
export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  summary: [];
  content: ReasoningText[];
  encrypted_content?: string;
  status: ItemStatus;
}

/** A search the provider's own web search ran (the gateway's `web_search_calls`). */
export interface WebSearchCallItem {
  type: 'web_search_call';
  id: string;
  status: 'in_progress' | 'searching' | 'completed' | 'failed' | 'incomplete';
  action: { type: 'search'; query?: string; queries?: string[]; sources?: Array<{ type: 'url'; url: string }> };
}

/** The model asking the client to search its deferred tools (`execution: client`); the arguments as an object. */
export interface ToolSearchCallItem {
  type: 'tool_search_call';
  id: string;
  call_id: string;
  execution: 'client';
  arguments: unknown;
  status: ItemStatus;
}

export type OutputItem = MessageItem | FunctionCallItem | CustomToolCallItem | ToolSearchCallItem | ReasoningItem | WebSearchCallItem;

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
  tools: Array<
    (ResponsesFunctionTool & { strict: boolean | null; parameters: Record<string, unknown> | null }) | ResponsesCustomTool | ResponsesNamespaceTool | ResponsesToolSearchTool | ResponsesWebSearchTool
  >;
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
  | ({ type: 'response.output_text.annotation.added'; annotation_index: number; annotation: UrlCitationAnnotation } & PartScoped)
  | ({ type: 'response.web_search_call.in_progress' | 'response.web_search_call.searching' | 'response.web_search_call.completed' } & ItemScoped)
  | ({ type: 'response.refusal.delta'; delta: string } & PartScoped)
  | ({ type: 'response.refusal.done'; refusal: string } & PartScoped)
  | ({ type: 'response.reasoning_text.delta'; delta: string } & PartScoped)
  | ({ type: 'response.reasoning_text.done'; text: string } & PartScoped)
  | ({ type: 'response.function_call_arguments.delta'; delta: string } & ItemScoped)
  | ({ type: 'response.function_call_arguments.done'; name: string; arguments: string } & ItemScoped)
  | ({ type: 'response.custom_tool_call_input.delta'; delta: string } & ItemScoped)
  | ({ type: 'response.custom_tool_call_input.done'; input: string } & ItemScoped)
  | ({ type: 'error'; code: string; message: string; param: string | null; error: { type: string; code: string; message: string; param: string | null } } & Sequenced);
