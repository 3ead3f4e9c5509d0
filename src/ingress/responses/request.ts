/**
 * A `POST /v1/responses` body → the chat request the pipeline runs, for any provider. The
 * translation is stateless: everything the model sees is in the request.
 *
 *   model                            model
 *   input, instructions              messages (input.ts)
 *   tools (function)                 tools, nested under `function`; any other tool type → 400
 *   tool_choice                      tool_choice; `allowed_tools` → the tools narrowed to those named,
 *                                    tool_choice its mode (what allowed_tools means, said the chat way)
 *   parallel_tool_calls              parallel_tool_calls
 *   text.format                      response_format (json_schema's flat fields nested; text → none)
 *   text.verbosity                   verbosity
 *   max_output_tokens                max_completion_tokens
 *   temperature, top_p               the same
 *   top_logprobs, include            logprobs (and top_logprobs) when top_logprobs is set or include
 *                                    names `message.output_text.logprobs`
 *   reasoning.effort                 reasoning_effort
 *   metadata, user, safety_identifier, prompt_cache_key, prompt_cache_retention, service_tier: the same
 *   stream                           stream, with stream_options.include_usage (the completed event
 *                                    carries usage)
 *
 * Read and dropped: `reasoning.summary` (chat has no summaries; reasoning the provider returns
 * comes back as reasoning text), `stream_options` (obfuscation is OpenAI's), `prompt_cache_options`
 * (a hint), `max_tool_calls` (it caps built-in tool calls, and those are refused), and the other
 * `include` values: `reasoning.encrypted_content` is asked by every stateless client (store: false)
 * and the gateway has no encrypted reasoning to give, so its reasoning items simply carry none; the
 * rest name outputs of hosted tools, which are refused.
 *
 * `store` (default true), `previous_response_id` and `conversation` are the stored Responses'
 * (stored.ts): the chain or conversation and any `item_reference` are expanded into `input` before
 * this translation runs.
 *
 * Refused with 400 unsupported_parameter, naming the field: what needs state the gateway does not
 * keep (`background: true`, `prompt`),
 * `truncation: auto`, `context_management` and `moderation` (server-side features), and tools and
 * input items other than function ones. Unknown fields are 400 as OpenAI answers them.
 */
import type { ChatCompletionRequest, FunctionTool, ResponseFormat, ToolChoice } from '../../openai-types.ts';
import { GatewayError } from '../../errors.ts';
import { invalidParam, unsupportedParam } from './errors.ts';
import { inputToMessages } from './input.ts';
import type { ResponsesFunctionTool, ResponsesRequest, ResponsesToolChoice, TextFormat } from './types.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The request as a chat request (the body checked first, see readResponsesRequest). */
export function responsesToChat(body: unknown): ChatCompletionRequest {
  return chatRequestOf(readResponsesRequest(body));
}

/** The checked request → chat. */
export function chatRequestOf(r: ResponsesRequest): ChatCompletionRequest {
  const chat: ChatCompletionRequest = { model: r.model, messages: inputToMessages(r.input, r.instructions) };
  if (r.tools.length) chat.tools = r.tools.map(chatToolOf);
  if (r.tool_choice !== undefined) {
    const { tools, choice } = chatToolChoiceOf(r.tool_choice, chat.tools ?? []);
    chat.tool_choice = choice;
    if (tools) chat.tools = tools;
  }
  if (r.parallel_tool_calls !== undefined) chat.parallel_tool_calls = r.parallel_tool_calls;
  const format = r.text?.format && responseFormatOf(r.text.format);
  if (format) chat.response_format = format;
  if (r.text?.verbosity !== undefined) chat.verbosity = r.text.verbosity;
  if (r.max_output_tokens !== undefined) chat.max_completion_tokens = r.max_output_tokens;
  if (r.temperature !== undefined) chat.temperature = r.temperature;
  if (r.top_p !== undefined) chat.top_p = r.top_p;
  if (r.top_logprobs !== undefined || r.include.includes('message.output_text.logprobs')) chat.logprobs = true;
  if (r.top_logprobs !== undefined) chat.top_logprobs = r.top_logprobs;
  if (r.reasoning?.effort !== undefined) chat.reasoning_effort = r.reasoning.effort;
  if (r.metadata !== undefined) chat.metadata = r.metadata;
  for (const key of ['user', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'service_tier'] as const) {
    if (r[key] !== undefined) chat[key] = r[key];
  }
  if (r.stream) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

function chatToolOf(t: ResponsesFunctionTool): FunctionTool {
  const fn: FunctionTool['function'] = { name: t.name };
  if (t.description != null) fn.description = t.description;
  if (t.parameters != null) fn.parameters = t.parameters;
  if (t.strict != null) fn.strict = t.strict;
  return { type: 'function', function: fn };
}

function chatToolChoiceOf(choice: ResponsesToolChoice, tools: FunctionTool[]): { choice: ToolChoice; tools?: FunctionTool[] } {
  if (typeof choice === 'string') return { choice };
  if (choice.type === 'function') return { choice: { type: 'function', function: { name: choice.name } } };
  const allowed = new Set(choice.tools.map((t) => t.name));
  choice.tools.forEach((t, i) => {
    if (!tools.some((tool) => tool.function.name === t.name)) throw invalidParam(`tool_choice.tools[${i}].name`, `no function named ${JSON.stringify(t.name)} in tools`);
  });
  return { choice: choice.mode, tools: tools.filter((t) => allowed.has(t.function.name)) };
}

function responseFormatOf(format: TextFormat): ResponseFormat | undefined {
  if (format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const json_schema: Extract<ResponseFormat, { type: 'json_schema' }>['json_schema'] = { name: format.name, schema: format.schema };
  if (format.strict != null) json_schema.strict = format.strict;
  if (format.description !== undefined) json_schema.description = format.description;
  return { type: 'json_schema', json_schema };
}

// ------------------------------------------------------------------ reading the body

/** Fields the translation reads (see the table above). */
const TRANSLATED = new Set([
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'text',
  'max_output_tokens',
  'temperature',
  'top_p',
  'top_logprobs',
  'reasoning',
  'metadata',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'service_tier',
  'include',
  'stream',
  'store',
  'previous_response_id',
  'conversation',
]);
/** CreateResponse fields read and dropped, or accepted at the value that means "off". */
const TOLERATED = new Set(['stream_options', 'prompt_cache_options', 'max_tool_calls', 'conversation', 'background', 'prompt', 'truncation', 'context_management', 'moderation']);

/** Checks the body's shape (what the translation relies on) and refuses what it cannot honour. */
export function readResponsesRequest(body: unknown): ResponsesRequest {
  if (!isObject(body)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  for (const key of Object.keys(body)) {
    if (!TRANSLATED.has(key) && !TOLERATED.has(key)) throw new GatewayError('invalid_request', `Unknown parameter: '${key}'.`, { param: key });
  }
  refuseStateful(body);
  if (body.model === undefined) throw new GatewayError('missing_required_parameter', "Missing required parameter: 'model'.", { param: 'model' });
  if (typeof body.model !== 'string' || !body.model) throw invalidParam('model', 'expected a non-empty string');
  if (body.input === undefined || body.input === null) throw new GatewayError('missing_required_parameter', "Missing required parameter: 'input'.", { param: 'input' });
  if (typeof body.input !== 'string' && !Array.isArray(body.input)) throw invalidParam('input', 'expected a string or an array of items');

  const r: ResponsesRequest = { model: body.model, input: body.input, tools: toolsOf(body.tools), include: includeOf(body.include), stream: optional(body, 'stream', 'boolean') ?? false };
  const instructions = optional(body, 'instructions', 'string');
  if (instructions !== undefined) r.instructions = instructions;
  if (body.tool_choice != null) r.tool_choice = toolChoiceOf(body.tool_choice);
  setIf(r, 'parallel_tool_calls', optional(body, 'parallel_tool_calls', 'boolean'));
  if (body.text != null) r.text = textOf(body.text);
  setIf(r, 'max_output_tokens', integer(body, 'max_output_tokens', 1));
  setIf(r, 'temperature', optional(body, 'temperature', 'number'));
  setIf(r, 'top_p', optional(body, 'top_p', 'number'));
  setIf(r, 'top_logprobs', integer(body, 'top_logprobs', 0, 20));
  if (body.reasoning != null) r.reasoning = reasoningOf(body.reasoning);
  if (body.metadata != null) r.metadata = metadataOf(body.metadata);
  for (const key of ['user', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'service_tier'] as const) setIf(r, key, optional(body, key, 'string'));
  integer(body, 'max_tool_calls', 0);
  // Stored responses (src/ingress/responses/stored.ts): `store` defaults to true, as OpenAI's.
  r.store = body.store !== false;
  setIf(r, 'previous_response_id', optional(body, 'previous_response_id', 'string') || undefined);
  setIf(r, 'conversation', conversationOf(body.conversation));
  if (r.conversation !== undefined && r.previous_response_id !== undefined) {
    throw new GatewayError('invalid_request', "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'.", { param: 'conversation' });
  }
  return r;
}

function refuseStateful(body: Json): void {
  if (body.store != null && typeof body.store !== 'boolean') throw invalidParam('store', 'expected a boolean');
  if (body.prompt != null) throw unsupportedParam('prompt', "'prompt' is not supported: the gateway keeps no prompts; send the instructions and input themselves.");
  if (body.background != null && body.background !== false)
    throw unsupportedParam('background', "'background' is not supported: the gateway runs no responses in the background; stream the response instead.");
  if (body.truncation != null && body.truncation !== 'disabled') throw unsupportedParam('truncation', "Only 'truncation: disabled' is supported through the gateway's translation to chat.");
  for (const key of ['context_management', 'moderation'] as const) {
    if (body[key] != null) throw unsupportedParam(key, `'${key}' is not supported through the gateway's translation to chat.`);
  }
}

function setIf<K extends keyof ResponsesRequest>(r: ResponsesRequest, key: K, value: ResponsesRequest[K] | undefined): void {
  if (value !== undefined) r[key] = value;
}

function optional(body: Json, key: string, type: 'string'): string | undefined;
function optional(body: Json, key: string, type: 'number'): number | undefined;
function optional(body: Json, key: string, type: 'boolean'): boolean | undefined;
function optional(body: Json, key: string, type: 'string' | 'number' | 'boolean'): unknown {
  const value = body[key];
  if (value == null) return undefined;
  if (typeof value !== type || (type === 'number' && !Number.isFinite(value))) throw invalidParam(key, `expected a ${type}`);
  return value;
}

function integer(body: Json, key: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const value = body[key];
  if (value == null) return undefined;
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) throw invalidParam(key, `expected an integer from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}`);
  return value as number;
}

function toolsOf(tools: unknown): ResponsesFunctionTool[] {
  if (tools == null) return [];
  if (!Array.isArray(tools)) throw invalidParam('tools', 'expected an array');
  return tools.map((tool, i) => {
    const param = `tools[${i}]`;
    if (!isObject(tool)) throw invalidParam(param, 'expected an object');
    if (tool.type !== 'function') {
      throw unsupportedParam(param, `Tools of type ${JSON.stringify(tool.type)} are not supported: only function tools are supported through the gateway's translation to chat.`);
    }
    if (typeof tool.name !== 'string' || !tool.name) throw invalidParam(`${param}.name`, 'expected a non-empty string');
    const out: ResponsesFunctionTool = { type: 'function', name: tool.name };
    if (tool.description != null) {
      if (typeof tool.description !== 'string') throw invalidParam(`${param}.description`, 'expected a string');
      out.description = tool.description;
    }
    if (tool.parameters != null) {
      if (!isObject(tool.parameters)) throw invalidParam(`${param}.parameters`, 'expected a JSON Schema object');
      out.parameters = tool.parameters;
    }
    if (tool.strict != null) {
      if (typeof tool.strict !== 'boolean') throw invalidParam(`${param}.strict`, 'expected a boolean');
      out.strict = tool.strict;
    }
    return out;
  });
}

function toolChoiceOf(choice: unknown): ResponsesToolChoice {
  if (choice === 'none' || choice === 'auto' || choice === 'required') return choice;
  if (!isObject(choice)) throw invalidParam('tool_choice', "expected 'none', 'auto', 'required' or an object");
  if (choice.type === 'function') {
    if (typeof choice.name !== 'string' || !choice.name) throw invalidParam('tool_choice.name', 'expected a non-empty string');
    return { type: 'function', name: choice.name };
  }
  if (choice.type === 'allowed_tools') {
    if (choice.mode !== 'auto' && choice.mode !== 'required') throw invalidParam('tool_choice.mode', "expected 'auto' or 'required'");
    if (!Array.isArray(choice.tools)) throw invalidParam('tool_choice.tools', 'expected an array');
    const tools = choice.tools.map((t, i) => {
      if (!isObject(t)) throw invalidParam(`tool_choice.tools[${i}]`, 'expected an object');
      if (t.type !== 'function') throw unsupportedParam(`tool_choice.tools[${i}]`, "Only function tools are supported through the gateway's translation to chat.");
      if (typeof t.name !== 'string' || !t.name) throw invalidParam(`tool_choice.tools[${i}].name`, 'expected a non-empty string');
      return { type: 'function' as const, name: t.name };
    });
    return { type: 'allowed_tools', mode: choice.mode, tools };
  }
  throw unsupportedParam('tool_choice', `A tool_choice of type ${JSON.stringify(choice.type)} is not supported: only function tools are supported through the gateway's translation to chat.`);
}

function textOf(text: unknown): NonNullable<ResponsesRequest['text']> {
  if (!isObject(text)) throw invalidParam('text', 'expected an object');
  const out: NonNullable<ResponsesRequest['text']> = {};
  if (text.format != null) out.format = formatOf(text.format);
  if (text.verbosity != null) {
    if (text.verbosity !== 'low' && text.verbosity !== 'medium' && text.verbosity !== 'high') throw invalidParam('text.verbosity', "expected 'low', 'medium' or 'high'");
    out.verbosity = text.verbosity;
  }
  return out;
}

function formatOf(format: unknown): TextFormat {
  if (!isObject(format)) throw invalidParam('text.format', 'expected an object');
  if (format.type === 'text' || format.type === 'json_object') return { type: format.type };
  if (format.type !== 'json_schema') throw invalidParam('text.format.type', "expected 'text', 'json_object' or 'json_schema'");
  if (typeof format.name !== 'string' || !format.name) throw invalidParam('text.format.name', 'expected a non-empty string');
  if (!isObject(format.schema)) throw invalidParam('text.format.schema', 'expected a JSON Schema object');
  const out: TextFormat = { type: 'json_schema', name: format.name, schema: format.schema };
  if (format.strict != null) {
    if (typeof format.strict !== 'boolean') throw invalidParam('text.format.strict', 'expected a boolean');
    out.strict = format.strict;
  }
  if (format.description != null) {
    if (typeof format.description !== 'string') throw invalidParam('text.format.description', 'expected a string');
    out.description = format.description;
  }
  return out;
}

function reasoningOf(reasoning: unknown): NonNullable<ResponsesRequest['reasoning']> {
  if (!isObject(reasoning)) throw invalidParam('reasoning', 'expected an object');
  const out: NonNullable<ResponsesRequest['reasoning']> = {};
  for (const key of ['effort', 'summary'] as const) {
    const value = reasoning[key];
    if (value == null) continue;
    if (typeof value !== 'string') throw invalidParam(`reasoning.${key}`, 'expected a string');
    out[key] = value;
  }
  return out;
}

function metadataOf(metadata: unknown): Record<string, string> {
  if (!isObject(metadata)) throw invalidParam('metadata', 'expected an object of strings');
  for (const [key, value] of Object.entries(metadata)) if (typeof value !== 'string') throw invalidParam(`metadata.${key}`, 'expected a string');
  return metadata as Record<string, string>;
}

/** `conversation`: its id, as a string or `{ id }`. */
function conversationOf(conversation: unknown): string | undefined {
  if (conversation == null) return undefined;
  const id = isObject(conversation) ? conversation.id : conversation;
  if (typeof id !== 'string' || !id) throw invalidParam('conversation', 'expected a conversation id or { id }');
  return id;
}

function includeOf(include: unknown): string[] {
  if (include == null) return [];
  if (!Array.isArray(include) || include.some((v) => typeof v !== 'string')) throw invalidParam('include', 'expected an array of strings');
  return include;
}
