/**
 * POST /v1/messages body → the gateway's chat request (https://docs.anthropic.com/en/api/messages).
 * Messages and content are translated in content.ts; this file maps the parameters around them:
 *
 *   max_tokens (required)            max_completion_tokens
 *   stop_sequences                   stop
 *   temperature, top_p               the same (Anthropic's 0..1 ranges are checked)
 *   top_k                            kept as the extra field `top_k` (the anthropic plugin and vLLM-style servers read it)
 *   metadata.user_id                 user
 *   stream                           stream, with stream_options.include_usage (message_delta reports usage)
 *   tools (custom, input_schema)     function tools; Anthropic's server tools are native-only,
 *                                    but web search: the gateway's `web_search` (web-search.ts)
 *   tool_choice auto/any/tool/none   auto/required/{function}/none; disable_parallel_tool_use → parallel_tool_calls: false
 *   thinking enabled + budget_tokens reasoning_effort by budget (see effortOfBudget); disabled/adaptive: none
 *   output_config.effort / .format   reasoning_effort / response_format json_schema
 *   service_tier auto/standard_only  auto/default (the anthropic plugin maps them back)
 *   cache_control (top level)        marks the last message (automatic caching: cache-control.ts)
 *
 * What only Anthropic's own API serves is kept for an `anthropic` target (the native
 * pass-through, body as sent). For any other target, one rule decides each part: dropping it must
 * not change what the model is asked to answer. What it can do without is dropped and reported
 * (the `x-switchyard-dropped` header, the log line's `dropped`, the dropped-fields counter; a 400
 * when the request is strict); what it cannot is refused with a 400 naming it:
 *
 *   field                                  on a translated target   why
 *   context_management                     dropped                  server-side context editing: the target gets the context as sent
 *   tools[i] of a server type              dropped (what: its type) web search, code execution... run only on Anthropic's side
 *   tool_choice naming a dropped tool      dropped                  its tool is gone (an `any` with no tool left too)
 *   container, mcp_servers                 dropped                  state and connectors of Anthropic's server tools
 *   inference_geo                          dropped                  where the target runs is the gateway's routing
 *   thinking.type other than the known     dropped                  the model thinks as it would without
 *   any other top-level field (unknown)    dropped                  a client release newer than this table
 *   thread                                 400 thread_unsupported_request   Anthropic holds the thread; the SDK then resends the full history by itself
 *   max_tokens: 0                          400                      warms Anthropic's prompt cache; any other model would generate
 *   content only Anthropic reads           400                      (content.ts) Files API sources, PDF by URL, search results, server tool blocks
 */
import type { ChatCompletionRequest, FunctionTool, ToolChoice } from '../../openai-types.ts';
import { GatewayError } from '../../errors.ts';
import type { Drop } from '../../plugin-api.ts';
import { cacheControlOf } from './cache-control.ts';
import { chatMessagesOf } from './content.ts';
import { WEB_SEARCH_TOOL, webSearchOf } from './web-search.ts';
import { type Json, NativeOnly, arrayAt, invalid, isObject, numberAt, objectAt, stringAt } from './fields.ts';

export interface MessagesTranslation {
  /** The chat request the pipeline runs. */
  chat: ChatCompletionRequest;
  /** What the chat request leaves out and a translated target refuses (the 400s to answer); undefined when nothing. */
  unservable: readonly GatewayError[] | undefined;
  /** What the chat request leaves out and a translated target drops, reported; undefined when nothing. */
  untranslatable: readonly Drop[] | undefined;
}

/** Top-level fields translated here (anything else is native-only). */
const KNOWN = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'metadata',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'service_tier',
  'cache_control',
  'thread',
]);

/** Top-level fields of Anthropic's own that a translated target goes without, and why. */
const DROPPED: Record<string, string> = {
  context_management: "Anthropic's server-side context editing; the target gets the context as sent",
  container: "the container of Anthropic's server tools",
  mcp_servers: "Anthropic's MCP connector; the target cannot reach these servers",
  inference_geo: "the region of Anthropic's API; where the target runs is the gateway's routing",
};
const UNKNOWN = 'a field the chat translation has no equivalent for';
const ONLY_ANTHROPIC = 'only an Anthropic model serves it on /v1/messages';

/** Anthropic `service_tier` → OpenAI's (the inverse of the anthropic plugin's table). */
const SERVICE_TIER: Record<string, string> = { auto: 'auto', standard_only: 'default' };

/** `output_config.effort` → `reasoning_effort`; chat's scale stops at high. */
const EFFORT: Record<string, string> = { low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high' };

/** The translation, with the native-only parts listed rather than thrown. Malformed input throws a 400 naming the field. */
export function translateMessagesRequest(body: unknown): MessagesTranslation {
  if (!isObject(body)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  for (const name of ['model', 'max_tokens', 'messages']) {
    if (body[name] === undefined) throw new GatewayError('missing_required_parameter', `Missing required parameter: '${name}'.`, { param: name });
  }
  const nativeOnly = new NativeOnly();
  const model = stringAt(body.model, 'model');
  if (!model) throw invalid('model', 'expected a non-empty string');
  // Anthropic takes 0 (warm the prompt cache, generate nothing); nothing else has that.
  const maxTokens = numberAt(body.max_tokens, 'max_tokens', { integer: true, min: 0 });
  if (maxTokens === 0) nativeOnly.add('max_tokens', '0, to warm the prompt cache');
  if (body.thread != null) nativeOnly.refuse(threadUnsupported());

  const chat: ChatCompletionRequest = { model, messages: chatMessagesOf(body.system, body.messages, nativeOnly) };
  const automatic = cacheControlOf(body, '');
  const last = chat.messages.at(-1);
  if (automatic && last) last.cache_control ??= automatic;
  if (maxTokens > 0) chat.max_completion_tokens = maxTokens;
  if (body.stop_sequences != null) {
    const stops = arrayAt(body.stop_sequences, 'stop_sequences').map((s, i) => stringAt(s, `stop_sequences[${i}]`));
    if (stops.length) chat.stop = stops;
  }
  if (body.temperature != null) chat.temperature = numberAt(body.temperature, 'temperature', { min: 0, max: 1 });
  if (body.top_p != null) chat.top_p = numberAt(body.top_p, 'top_p', { min: 0, max: 1 });
  if (body.top_k != null) chat.top_k = numberAt(body.top_k, 'top_k', { integer: true, min: 0 });
  if (body.metadata != null) {
    const userId = objectAt(body.metadata, 'metadata').user_id;
    if (userId != null) chat.user = stringAt(userId, 'metadata.user_id');
  }
  if (body.stream != null) {
    if (typeof body.stream !== 'boolean') throw invalid('stream', 'expected a boolean');
    chat.stream = body.stream;
    // message_delta carries the usage: ask every provider for the chat usage chunk.
    if (body.stream) chat.stream_options = { include_usage: true };
  }
  addTools(chat, body, nativeOnly);
  addReasoning(chat, body, nativeOnly);
  if (body.service_tier != null) {
    const tier = SERVICE_TIER[stringAt(body.service_tier, 'service_tier')];
    if (!tier) throw invalid('service_tier', 'expected "auto" or "standard_only"');
    chat.service_tier = tier;
  }
  for (const name of Object.keys(body)) if (!KNOWN.has(name) && body[name] != null) nativeOnly.drop(name, undefined, DROPPED[name] ?? UNKNOWN);

  return { chat, unservable: nativeOnly.unservable, untranslatable: nativeOnly.untranslatable };
}

/** The chat request for a target other than Anthropic's own: a refused part is its 400 (dropped parts are left out). */
export function messagesToChat(body: unknown): ChatCompletionRequest {
  const { chat, unservable } = translateMessagesRequest(body);
  if (unservable) throw unservable[0];
  return chat;
}

/**
 * Anthropic's answer to a request its thread feature cannot take: the Anthropic SDK's message
 * threads (the tool runner's default) read `error.details.error_code` and resend the turn with
 * the full history and no `thread` (unsupportedRequestBehavior: continue_unthreaded).
 */
function threadUnsupported(): GatewayError {
  return new GatewayError(
    'unsupported_parameter',
    "The parameter 'thread' is only supported when an Anthropic model serves /v1/messages (Anthropic holds the thread); this model is served through the chat translation. Send the full history without 'thread'.",
    { param: 'thread', details: { error_code: 'thread_unsupported_request', unsupported: ['thread'] } },
  );
}

// ---------------------------------------------------------------- tools

function addTools(chat: ChatCompletionRequest, body: Json, nativeOnly: NativeOnly): void {
  let serverTools: Set<string> | undefined;
  if (body.tools != null) {
    const tools: FunctionTool[] = [];
    arrayAt(body.tools, 'tools').forEach((raw, i) => {
      const tool = objectAt(raw, `tools[${i}]`);
      // Custom tools have no type or "custom"; every other type is a tool Anthropic runs itself
      // (web_search_*, bash_*, text_editor_*, computer_*, code_execution_*, ...).
      if (typeof tool.type === 'string' && WEB_SEARCH_TOOL.test(tool.type) && !chat.web_search) {
        // The target's own search, where it has one (reported by the translation where not).
        chat.web_search = webSearchOf(tool, `tools[${i}]`);
        (serverTools ??= new Set()).add(typeof tool.name === 'string' ? tool.name : '');
        return;
      }
      if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
        nativeOnly.drop(`tools[${i}]`, typeof tool.type === 'string' ? tool.type : 'server tool', 'a server tool, run only by Anthropic');
        (serverTools ??= new Set()).add(typeof tool.name === 'string' ? tool.name : '');
        return;
      }
      tools.push(functionTool(tool, `tools[${i}]`));
    });
    if (tools.length) chat.tools = tools;
  }
  if (body.tool_choice != null) {
    const choice = objectAt(body.tool_choice, 'tool_choice');
    chat.tool_choice = toolChoice(choice);
    if (choice.disable_parallel_tool_use != null) {
      if (typeof choice.disable_parallel_tool_use !== 'boolean') throw invalid('tool_choice.disable_parallel_tool_use', 'expected a boolean');
      if (choice.disable_parallel_tool_use) chat.parallel_tool_calls = false;
    }
    // A choice only a dropped server tool could meet would be an upstream 400: it goes with its tool (still sent to an anthropic target).
    const named = choice.type === 'tool' && serverTools?.has(String(choice.name));
    if (named || (serverTools && !chat.tools && choice.type === 'any')) {
      nativeOnly.drop('tool_choice', named ? String(choice.name) : 'any', 'it asks for a dropped server tool');
      delete chat.tool_choice;
    }
  }
}

function functionTool(tool: Json, param: string): FunctionTool {
  const fn: FunctionTool['function'] = { name: stringAt(tool.name, `${param}.name`) };
  if (tool.description != null) fn.description = stringAt(tool.description, `${param}.description`);
  fn.parameters = objectAt(tool.input_schema, `${param}.input_schema`);
  if (tool.strict === true) fn.strict = true;
  const control = cacheControlOf(tool, param);
  return control ? { type: 'function', function: fn, cache_control: control } : { type: 'function', function: fn };
}

function toolChoice(choice: Json): ToolChoice {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: stringAt(choice.name, 'tool_choice.name') } };
    default:
      throw invalid('tool_choice.type', 'expected "auto", "any", "tool" or "none"');
  }
}

// ---------------------------------------------------------------- reasoning

/**
 * A thinking budget → OpenAI's effort scale, with the thresholds halfway (geometrically) between
 * the budgets Google's OpenAI-compatible endpoint gives each effort (low 1,024, medium 8,192, high
 * 24,576; see plugins/gemini), so a budget maps back to the effort that would give it:
 * under 4,096 → low, under 16,384 → medium, else high. Anthropic's minimum budget is 1,024.
 */
export function effortOfBudget(budgetTokens: number): 'low' | 'medium' | 'high' {
  if (budgetTokens < 4_096) return 'low';
  if (budgetTokens < 16_384) return 'medium';
  return 'high';
}

function addReasoning(chat: ChatCompletionRequest, body: Json, nativeOnly: NativeOnly): void {
  if (body.thinking != null) {
    const thinking = objectAt(body.thinking, 'thinking');
    const type = stringAt(thinking.type, 'thinking.type');
    if (type === 'enabled') chat.reasoning_effort = effortOfBudget(numberAt(thinking.budget_tokens, 'thinking.budget_tokens', { integer: true, min: 1 }));
    // `disabled` asks for nothing; `adaptive` leaves the amount to the model, as chat does without an effort.
    else if (type !== 'disabled' && type !== 'adaptive') nativeOnly.drop('thinking.type', type, ONLY_ANTHROPIC);
  }
  if (body.output_config != null) {
    const config = objectAt(body.output_config, 'output_config');
    if (config.effort != null) {
      const effort = EFFORT[stringAt(config.effort, 'output_config.effort')];
      if (!effort) throw invalid('output_config.effort', 'expected "low", "medium", "high", "xhigh" or "max"');
      // An explicit effort is the client's own words: it wins over one derived from a budget.
      chat.reasoning_effort = effort;
    }
    if (config.format != null) {
      const format = objectAt(config.format, 'output_config.format');
      if (format.type !== 'json_schema') throw invalid('output_config.format.type', 'expected "json_schema"');
      chat.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: objectAt(format.schema, 'output_config.format.schema'), strict: true } };
    }
  }
}
