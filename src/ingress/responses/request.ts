/**
 * A `POST /v1/responses` body → the chat request the pipeline runs, for any provider. The
 * translation is stateless: everything the model sees is in the request.
 *
 *   model                            model
 *   input, instructions              messages (input.ts; an empty `instructions` adds nothing)
 *   tools, additional_tools items    tools, nested under `function` (tools.ts): function tools as
 *                                    they are, custom (freeform) tools as a function of one string
 *                                    `input`, namespaces flattened to `<namespace>__<name>`, client
 *                                    tool search as a `tool_search` function; the calls map back to
 *                                    custom_tool_call, tool_search_call items and namespaced names
 *   web_search tools (+ max_tool_calls)  web_search, the gateway's extension (tools.ts): the target's
 *                                    own search, `max_tool_calls` as its most uses
 *   tool_choice                      tool_choice (a function or custom tool by its chat name);
 *                                    `allowed_tools` → the tools narrowed to those named, tool_choice
 *                                    its mode (what allowed_tools means, said the chat way)
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
 * Read and dropped without a word: `reasoning.summary` (chat has no summaries; reasoning the
 * provider returns comes back as reasoning text), `stream_options` (obfuscation is OpenAI's),
 * `prompt_cache_options` (a hint), `max_tool_calls` without a web search (it caps built-in tool
 * calls, and the others are dropped), and the other `include` values but two:
 * `reasoning.encrypted_content` puts the provider's signed reasoning in the reasoning items
 * (reasoning.ts), and `web_search_call.action.sources` the pages a search found.
 *
 * Dropped and reported (`untranslatable`: the `x-switchyard-dropped` header, the log line, a 400
 * when strict), carried unchanged by a native pass-through to a target that speaks Responses:
 * `client_metadata` (Codex's session and turn ids, for OpenAI's own logs), `truncation: auto`,
 * `context_management` and `moderation` (server-side features), hosted tools and their past
 * items in `input` (tools.ts, input.ts), and any top-level field this table does not know: a
 * client release newer than the gateway is never refused for it.
 *
 * `store` (default true), `previous_response_id` and `conversation` are the stored Responses'
 * (stored.ts): the chain or conversation and any `item_reference` are expanded into `input` before
 * this translation runs.
 *
 * Refused with 400 unsupported_parameter, naming the field: what needs state the gateway does not
 * keep (`background: true`, `prompt`).
 */
import type { Drop } from '../../contract/dropped.ts';
import type { ChatCompletionRequest, FunctionTool, ResponseFormat, ToolChoice } from '../../openai-types.ts';
import { GatewayError } from '../../errors.ts';
import { invalidParam, unsupportedParam } from './errors.ts';
import { inputToMessages, readInputItems } from './input.ts';
import { chatNameOf, ToolReading } from './tools.ts';
import type { Callable, NamedTool, ResponsesRequest, ResponsesToolChoice, TextFormat } from './types.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The request as a chat request (the body checked first, see readResponsesRequest). */
export function responsesToChat(body: unknown): ChatCompletionRequest {
  return chatRequestOf(readResponsesRequest(body));
}

/** The checked request → chat. */
export function chatRequestOf(r: ResponsesRequest): ChatCompletionRequest {
  const chat: ChatCompletionRequest = { model: r.model, messages: inputToMessages(r.input, r.instructions, r.callables) };
  if (r.callables.length) chat.tools = r.callables.map((c) => c.tool);
  if (r.web_search) chat.web_search = r.web_search;
  if (r.tool_choice !== undefined) {
    const { tools, choice } = chatToolChoiceOf(r.tool_choice, r.callables);
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

function chatToolChoiceOf(choice: ResponsesToolChoice, callables: readonly Callable[]): { choice: ToolChoice; tools?: FunctionTool[] } {
  if (typeof choice === 'string') return { choice };
  if (choice.type !== 'allowed_tools') return { choice: { type: 'function', function: { name: chatNameOf(callables, choice.name, choice.namespace) } } };
  const allowed = new Set<string>();
  choice.tools.forEach((t, i) => {
    const name = chatNameOf(callables, t.name, t.namespace);
    if (!callables.some((c) => c.chatName === name)) throw invalidParam(`tool_choice.tools[${i}].name`, `no ${t.type} tool named ${JSON.stringify(t.name)} in tools`);
    allowed.add(name);
  });
  return { choice: choice.mode, tools: callables.filter((c) => allowed.has(c.chatName)).map((c) => c.tool) };
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
const TOLERATED = new Set(['stream_options', 'prompt_cache_options', 'max_tool_calls', 'background', 'prompt', 'truncation', 'context_management', 'moderation']);

/** Fields the translation understands and does not carry: dropped and reported. */
const REPORTED: Readonly<Record<string, string>> = {
  client_metadata: "client metadata is for OpenAI's own records; chat has no field for it",
};

/** Checks the body's shape (what the translation relies on), refuses what it cannot honour, and lists what it drops. */
export function readResponsesRequest(body: unknown): ResponsesRequest {
  if (!isObject(body)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  const drops: Drop[] = [];
  for (const key of Object.keys(body)) {
    if (TRANSLATED.has(key) || TOLERATED.has(key) || body[key] == null) continue;
    // Own keys only: a field named like an Object method is as unknown as any other.
    const reason = Object.hasOwn(REPORTED, key) ? REPORTED[key] : `'${key}' is not a field the translation to chat knows`;
    drops.push({ field: key, reason });
  }
  refuseStateful(body);
  drops.push(...serverSideDrops(body));
  if (body.model === undefined) throw new GatewayError('missing_required_parameter', "Missing required parameter: 'model'.", { param: 'model' });
  if (typeof body.model !== 'string' || !body.model) throw invalidParam('model', 'expected a non-empty string');
  if (body.input === undefined || body.input === null) throw new GatewayError('missing_required_parameter', "Missing required parameter: 'input'.", { param: 'input' });
  if (typeof body.input !== 'string' && !Array.isArray(body.input)) throw invalidParam('input', 'expected a string or an array of items');

  const tools = new ToolReading();
  tools.read(body.tools, 'tools');
  readInputItems(body.input, tools);
  const r: ResponsesRequest = {
    model: body.model,
    input: body.input,
    tools: tools.tools,
    callables: tools.callables,
    include: includeOf(body.include),
    stream: optional(body, 'stream', 'boolean') ?? false,
    untranslatable: [...drops, ...tools.drops],
  };
  const instructions = optional(body, 'instructions', 'string');
  if (instructions !== undefined) r.instructions = instructions;
  if (body.tool_choice != null) setIf(r, 'tool_choice', toolChoiceOf(body.tool_choice, r.untranslatable));
  setIf(r, 'parallel_tool_calls', optional(body, 'parallel_tool_calls', 'boolean'));
  if (body.text != null) r.text = textOf(body.text);
  setIf(r, 'max_output_tokens', integer(body, 'max_output_tokens', 1));
  setIf(r, 'temperature', optional(body, 'temperature', 'number'));
  setIf(r, 'top_p', optional(body, 'top_p', 'number'));
  setIf(r, 'top_logprobs', integer(body, 'top_logprobs', 0, 20));
  if (body.reasoning != null) r.reasoning = reasoningOf(body.reasoning);
  if (body.metadata != null) r.metadata = metadataOf(body.metadata);
  for (const key of ['user', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'service_tier'] as const) setIf(r, key, optional(body, key, 'string'));
  const maxToolCalls = integer(body, 'max_tool_calls', 0);
  if (tools.webSearch) r.web_search = !maxToolCalls ? tools.webSearch : { ...tools.webSearch, max_uses: maxToolCalls };
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
}

/** Server-side features: understood, not carried to chat. */
function serverSideDrops(body: Json): Drop[] {
  const drops: Drop[] = [];
  if (body.truncation != null && body.truncation !== 'disabled') {
    drops.push({ field: 'truncation', what: `truncation: ${String(body.truncation)}`, reason: 'the gateway does not truncate a conversation to fit the context window' });
  }
  for (const key of ['context_management', 'moderation'] as const) {
    if (body[key] != null) drops.push({ field: key, reason: `'${key}' is a feature of OpenAI's servers that the translation to chat has no equivalent for` });
  }
  return drops;
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

/** tool_choice, as the response echoes it; a choice of a hosted tool (dropped with its tool) is dropped too. */
function toolChoiceOf(choice: unknown, drops: Drop[]): ResponsesToolChoice | undefined {
  if (choice === 'none' || choice === 'auto' || choice === 'required') return choice;
  if (!isObject(choice)) throw invalidParam('tool_choice', "expected 'none', 'auto', 'required' or an object");
  if (choice.type === 'function' || choice.type === 'custom') return namedToolOf(choice, 'tool_choice');
  if (choice.type === 'allowed_tools') {
    if (choice.mode !== 'auto' && choice.mode !== 'required') throw invalidParam('tool_choice.mode', "expected 'auto' or 'required'");
    if (!Array.isArray(choice.tools)) throw invalidParam('tool_choice.tools', 'expected an array');
    const tools: NamedTool[] = [];
    choice.tools.forEach((t, i) => {
      const param = `tool_choice.tools[${i}]`;
      if (!isObject(t)) throw invalidParam(param, 'expected an object');
      if (t.type === 'function' || t.type === 'custom') tools.push(namedToolOf(t, param));
      else drops.push({ field: param, what: typeof t.type === 'string' ? t.type : 'tool', reason: 'only function and custom tools cross the translation to chat' });
    });
    return { type: 'allowed_tools', mode: choice.mode, tools };
  }
  drops.push({ field: 'tool_choice', what: typeof choice.type === 'string' ? choice.type : 'tool_choice', reason: 'only function and custom tools cross the translation to chat; the model chooses' });
  return undefined;
}

function namedToolOf(choice: Json, param: string): NamedTool {
  if (typeof choice.name !== 'string' || !choice.name) throw invalidParam(`${param}.name`, 'expected a non-empty string');
  const named: NamedTool = { type: choice.type as NamedTool['type'], name: choice.name };
  if (typeof choice.namespace === 'string' && choice.namespace) named.namespace = choice.namespace;
  return named;
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
