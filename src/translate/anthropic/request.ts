/**
 * OpenAI chat request → Anthropic Messages request body (https://docs.anthropic.com/en/api/messages).
 * Messages are translated in messages.ts; this file maps the parameters around them.
 *
 * Parameters the Messages API has no equivalent for are rejected with a 400 naming them (or
 * dropped with `dropUnsupportedParams`); a parameter set to its no-op value (`n: 1`,
 * `logprobs: false`, a zero penalty, an empty `logit_bias`) is accepted and left out.
 */
import type { ChatCompletionRequest, FunctionTool } from '../../openai-types.ts';
import type { ProviderCall, ProviderCapabilities } from '../../plugin-api.ts';
import { functionOf, jsonSchemaFormat, unsupportedParam } from '../../providers/params.ts';
import { CLAUDE_LEAVES_OUT, isClaudeThinking, reportThinkingLeftOut } from '../chat/thinking.ts';
import { translateMessages } from './messages.ts';
import { searchToolOf } from './web-search.ts';

export interface AnthropicRequestSettings {
  /** `max_tokens` when the client sets none (the Messages API requires one). */
  maxTokens: number;
  /** Adds a top-level `cache_control` (Anthropic's automatic prompt caching) to every request. */
  promptCaching?: false | '5m' | '1h';
}

/**
 * What this translation carries, for the `capabilities` of a provider that uses it (spread it
 * and add your own, e.g. `nativeProtocols`). `unsupportedParams` have no Anthropic equivalent at
 * any value: the core refuses them with a 400, or drops them with `dropUnsupportedParams`.
 */
export const ANTHROPIC_CAPABILITIES: Readonly<ProviderCapabilities> = Object.freeze({
  streaming: true,
  tools: true,
  images: true,
  responseFormat: true,
  samplingExtras: false,
  unsupportedParams: Object.freeze(['seed', 'audio', 'prediction', 'web_search_options', 'functions', 'function_call', 'verbosity']),
});

/** OpenAI `reasoning_effort` → Anthropic `output_config.effort` (no `minimal` there: `low` is nearest). */
const EFFORT: Record<string, string> = { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'max' };

/** OpenAI `service_tier` → Anthropic's (`standard_only` keeps off priority capacity). */
const SERVICE_TIER: Record<string, string> = { auto: 'auto', default: 'standard_only' };

export function buildAnthropicRequest(call: ProviderCall, settings: AnthropicRequestSettings): Record<string, unknown> {
  const r = call.request;
  reportThinkingLeftOut(call, isClaudeThinking, CLAUDE_LEAVES_OUT);
  const { system, messages } = translateMessages(call);

  const body: Record<string, unknown> = {
    model: call.model,
    max_tokens: r.max_completion_tokens ?? r.max_tokens ?? settings.maxTokens,
    messages,
  };
  if (system !== undefined) body.system = system;
  if (r.temperature != null) body.temperature = r.temperature;
  if (r.top_p != null) body.top_p = r.top_p;
  // Not an OpenAI parameter, but vLLM-style clients send it and Anthropic has it.
  if (typeof r.top_k === 'number') body.top_k = r.top_k;
  if (r.stop != null) {
    const stops = (Array.isArray(r.stop) ? r.stop : [r.stop]).filter((s) => s !== '');
    if (stops.length) body.stop_sequences = stops;
  }
  const userId = r.user ?? stringField(r.safety_identifier) ?? r.metadata?.user_id;
  if (userId) body.metadata = { user_id: userId };
  const tools = (r.tools ?? []).map((tool, i) => toolOf(tool, i, call)).filter((t) => t !== undefined);
  // The gateway's web search extension: Anthropic's own server tool (web-search.ts).
  const search = searchToolOf(
    call,
    tools.map((t) => String(t.name)),
  );
  if (search) tools.push(search);
  if (tools.length) {
    body.tools = tools;
    const choice = toolChoice(r);
    if (choice) body.tool_choice = choice;
  }

  const outputConfig: Record<string, unknown> = {};
  const format = outputFormat(call);
  if (format) outputConfig.format = format;
  const effort = effortOf(call);
  if (effort) outputConfig.effort = effort;
  if (Object.keys(outputConfig).length) body.output_config = outputConfig;

  const tier = serviceTier(call);
  if (tier) body.service_tier = tier;
  // Anthropic's own extended-thinking switch passes through for clients that know it.
  if (r.thinking && typeof r.thinking === 'object') body.thinking = r.thinking;
  if (settings.promptCaching) body.cache_control = settings.promptCaching === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
  if (call.stream) body.stream = true;
  return body;
}

function toolOf(tool: FunctionTool, i: number, call: ProviderCall): Record<string, unknown> | undefined {
  const f = functionOf(tool, i, call);
  if (!f) return undefined;
  const out: Record<string, unknown> = { name: f.name };
  if (f.description) out.description = f.description;
  out.input_schema = f.parameters ?? { type: 'object', properties: {} };
  if (f.strict === true) out.strict = true;
  // The gateway's cache marker: the cached prefix ends with the tools.
  if (tool.cache_control) out.cache_control = tool.cache_control;
  return out;
}

function toolChoice(r: ChatCompletionRequest): Record<string, unknown> | undefined {
  const c = r.tool_choice;
  let choice: Record<string, unknown> | undefined;
  if (c === 'auto') choice = { type: 'auto' };
  else if (c === 'required') choice = { type: 'any' };
  else if (c === 'none') return { type: 'none' };
  else if (c && typeof c === 'object' && c.function?.name) choice = { type: 'tool', name: c.function.name };
  if (r.parallel_tool_calls === false) choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return choice;
}

/**
 * `json_schema` is Anthropic's structured output (`output_config.format`; the schema goes as is,
 * Anthropic answers 400 for features it does not support). It has no schema-less JSON mode.
 */
function outputFormat(call: ProviderCall): Record<string, unknown> | undefined {
  const format = jsonSchemaFormat(call);
  return format && { type: 'json_schema', schema: format.schema };
}

function effortOf(call: ProviderCall): string | undefined {
  const value = call.request.reasoning_effort;
  if (value == null) return undefined;
  const effort = typeof value === 'string' ? EFFORT[value] : undefined;
  if (!effort) unsupportedParam(call, 'reasoning_effort', `with the value ${JSON.stringify(value)} is not supported`);
  return effort;
}

function serviceTier(call: ProviderCall): string | undefined {
  const value = call.request.service_tier;
  if (value == null) return undefined;
  const tier = typeof value === 'string' ? SERVICE_TIER[value] : undefined;
  if (!tier) unsupportedParam(call, 'service_tier', `with the value ${JSON.stringify(value)} is not supported`);
  return tier;
}

function stringField(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}
