/**
 * OpenAI chat request → Bedrock Converse / ConverseStream request
 * (`POST /model/{modelId}/converse` or `/converse-stream`; the model id rides the path, URL-encoded,
 * so ARNs and `:` versions survive). Messages are translated in messages.ts; this file maps the
 * parameters around them:
 *
 *   max_completion_tokens / max_tokens → inferenceConfig.maxTokens (else the provider's maxTokens)
 *   temperature, top_p, stop           → inferenceConfig.temperature, topP, stopSequences
 *   tools (strict too), tool_choice    → toolConfig.tools[].toolSpec, toolConfig.toolChoice
 *   response_format json_schema        → outputConfig.textFormat (Bedrock structured output)
 *   metadata, user                     → requestMetadata (tags in Bedrock's invocation logs)
 *   thinking (Anthropic's switch)      → additionalModelRequestFields.thinking
 *   reasoning_effort (Claude models)   → the same, with the budget of the effort (see THINKING_BUDGET);
 *                                        other models have no switch Converse knows: unsupported
 *   cache_control on a tool            → a cachePoint after it in toolConfig.tools
 *
 * Parameters Converse has no equivalent for are rejected with a 400 naming them (or dropped with
 * `dropUnsupportedParams`); a parameter set to its no-op value (`n: 1`, `logprobs: false`, a zero
 * penalty, an empty `logit_bias`) is accepted and left out. `parallel_tool_calls` is ignored:
 * Converse has no switch for it.
 */
import type { ChatCompletionRequest, FunctionTool } from '../../openai-types.ts';
import type { ProviderCall, ProviderCapabilities } from '../../plugin-api.ts';
import type { HttpRequestSpec } from '../../providers/http-provider.ts';
import { functionOf, jsonSchemaFormat, unsupportedParam } from '../../providers/params.ts';
import { reportWebSearchLeftOut } from '../chat/web-search.ts';
import { CLAUDE_LEAVES_OUT, isClaudeThinking, reportThinkingLeftOut } from '../chat/thinking.ts';
import { CACHE_POINT, translateMessages, type TranslatedMessages } from './messages.ts';

export interface ConverseRequestSettings {
  /** `inferenceConfig.maxTokens` when the request sets none (else the model's default applies). */
  maxTokens?: number;
  /** A Bedrock guardrail applied to every request. */
  guardrail?: { identifier: string; version: string; trace?: 'enabled' | 'disabled' | 'enabled_full' };
}

/**
 * What this translation carries, for the `capabilities` of a provider that uses it (spread it
 * and add your own, e.g. `nativeProtocols`). `unsupportedParams` have no Converse equivalent at
 * any value: the core refuses them with a 400, or drops them with `dropUnsupportedParams`.
 */
export const CONVERSE_CAPABILITIES: Readonly<ProviderCapabilities> = Object.freeze({
  streaming: true,
  tools: true,
  images: true,
  responseFormat: true,
  samplingExtras: false,
  unsupportedParams: Object.freeze(['seed', 'audio', 'prediction', 'web_search_options', 'functions', 'function_call', 'verbosity']),
});

/**
 * `reasoning_effort` → Claude's `thinking.budget_tokens`: the budgets Google's OpenAI-compatible
 * endpoint gives each effort, which the /v1/messages ingress maps budgets back from (effortOfBudget).
 */
const THINKING_BUDGET: Record<string, number> = { minimal: 1_024, low: 1_024, medium: 8_192, high: 24_576, xhigh: 24_576, max: 24_576 };
/** Claude's least thinking budget. */
const MIN_THINKING_BUDGET = 1_024;

/** The path for one attempt: the model id is one path segment, so it is fully encoded. */
export function conversePath(model: string, stream: boolean): string {
  return `/model/${encodeURIComponent(model)}/${stream ? 'converse-stream' : 'converse'}`;
}

export function buildConverseRequest(call: ProviderCall, settings: ConverseRequestSettings = {}): HttpRequestSpec {
  return { path: conversePath(call.model, call.stream), body: buildConverseBody(call, settings) };
}

export function buildConverseBody(call: ProviderCall, settings: ConverseRequestSettings = {}): Record<string, unknown> {
  const r = call.request;
  checkParams(call);
  reportThinkingLeftOut(call, isClaudeThinking, CLAUDE_LEAVES_OUT);
  reportWebSearchLeftOut(call, "Bedrock's Converse API runs no web search of its own");
  const translated = translateMessages(call);
  const body: Record<string, unknown> = { messages: translated.messages };
  if (translated.system.length) body.system = translated.system;

  const inference: Record<string, unknown> = {};
  const maxTokens = r.max_completion_tokens ?? r.max_tokens ?? settings.maxTokens;
  if (maxTokens != null) inference.maxTokens = maxTokens;
  if (r.temperature != null) inference.temperature = r.temperature;
  if (r.top_p != null) inference.topP = r.top_p;
  if (r.stop != null) {
    const stops = (Array.isArray(r.stop) ? r.stop : [r.stop]).filter((s) => typeof s === 'string' && s !== '');
    if (stops.length) inference.stopSequences = stops;
  }
  if (Object.keys(inference).length) body.inferenceConfig = inference;

  const toolConfig = toolConfigOf(call, translated);
  if (toolConfig) body.toolConfig = toolConfig;

  const textFormat = outputFormat(call);
  if (textFormat) body.outputConfig = { textFormat };

  const metadata = requestMetadata(r);
  if (metadata) body.requestMetadata = metadata;

  // Anthropic's extended-thinking switch, for Claude models, in the place Bedrock takes it.
  const thinking = r.thinking && typeof r.thinking === 'object' ? r.thinking : thinkingOfEffort(call, maxTokens);
  if (thinking) body.additionalModelRequestFields = { thinking };

  if (settings.guardrail) {
    const g = settings.guardrail;
    body.guardrailConfig = { guardrailIdentifier: g.identifier, guardrailVersion: g.version, ...(g.trace ? { trace: g.trace } : {}) };
  }
  return body;
}

/**
 * `reasoning_effort` as Claude's thinking switch (Claude models only: the model id names
 * `anthropic.claude`, with or without an inference-profile prefix). The budget stays under
 * `maxTokens`, as Claude requires; too few tokens to think in, or `none`, and thinking stays off.
 */
function thinkingOfEffort(call: ProviderCall, maxTokens: number | null | undefined): Record<string, unknown> | undefined {
  const effort = call.request.reasoning_effort;
  if (effort == null) return undefined;
  if (!/anthropic\.claude/.test(call.model)) {
    unsupportedParam(call, 'reasoning_effort', 'is not supported by this model on Bedrock');
    return undefined;
  }
  if (effort === 'none') return undefined;
  let budget = typeof effort === 'string' ? THINKING_BUDGET[effort] : undefined;
  if (budget === undefined) {
    unsupportedParam(call, 'reasoning_effort', `with the value ${JSON.stringify(effort)} is not supported`);
    return undefined;
  }
  if (maxTokens != null) budget = Math.min(budget, maxTokens - 1);
  return budget >= MIN_THINKING_BUDGET ? { type: 'enabled', budget_tokens: budget } : undefined;
}

/** Rejects (or logs dropping) every parameter Converse cannot honour. */
function checkParams(call: ProviderCall): void {
  const r = call.request;
  const tier = r.service_tier;
  if (tier != null && tier !== 'auto' && tier !== 'default') unsupportedParam(call, 'service_tier', `with the value ${JSON.stringify(tier)} is not supported`);
}

/**
 * `tool_choice: "none"` withholds the tools (Converse's toolChoice has no "none"). But Converse
 * refuses toolUse/toolResult blocks without a toolConfig, so a conversation that already holds
 * them keeps its tools (without toolChoice) — or, when the request has no tools at all, declares
 * the tools it called with an open schema, so the follow-up OpenAI accepts works here too.
 */
function toolConfigOf(call: ProviderCall, translated: TranslatedMessages): Record<string, unknown> | undefined {
  const r = call.request;
  const tools: Array<Record<string, unknown>> = [];
  (r.tools ?? []).forEach((tool, i) => {
    const spec = toolSpecOf(tool, i, call);
    if (spec) tools.push(spec);
    if (spec && tool.cache_control) tools.push(CACHE_POINT);
  });
  const choice = r.tool_choice;
  if (!tools.length || choice === 'none') {
    if (!translated.hasToolBlocks) return undefined;
    if (tools.length) return { tools };
    if (!translated.calledTools.length) return undefined;
    return { tools: translated.calledTools.map((name) => ({ toolSpec: { name, inputSchema: { json: { type: 'object' } } } })) };
  }
  const config: Record<string, unknown> = { tools };
  if (choice === 'auto') config.toolChoice = { auto: {} };
  else if (choice === 'required') config.toolChoice = { any: {} };
  else if (choice && typeof choice === 'object' && choice.function?.name) config.toolChoice = { tool: { name: choice.function.name } };
  return config;
}

function toolSpecOf(tool: FunctionTool, i: number, call: ProviderCall): Record<string, unknown> | undefined {
  const f = functionOf(tool, i, call);
  if (!f) return undefined;
  const spec: Record<string, unknown> = { name: f.name };
  // Bedrock rejects an empty description: leave it out.
  if (f.description?.trim()) spec.description = f.description;
  spec.inputSchema = { json: f.parameters ?? { type: 'object', properties: {} } };
  // Strict tool use: Bedrock holds the call's input to the schema (where the model supports it).
  if (f.strict === true) spec.strict = true;
  return { toolSpec: spec };
}

/**
 * `json_schema` is Bedrock's structured output (`outputConfig.textFormat`, the schema as a JSON
 * string; models without it answer 400). Converse has no schema-less JSON mode.
 */
function outputFormat(call: ProviderCall): Record<string, unknown> | undefined {
  const format = jsonSchemaFormat(call);
  if (!format) return undefined;
  const jsonSchema: Record<string, unknown> = { schema: JSON.stringify(format.schema) };
  if (format.name) jsonSchema.name = format.name;
  if (format.description) jsonSchema.description = format.description;
  return { type: 'json_schema', structure: { jsonSchema } };
}

/** OpenAI `metadata` (string pairs) and `user` → Converse `requestMetadata`. */
function requestMetadata(r: ChatCompletionRequest): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  if (r.metadata && typeof r.metadata === 'object') {
    for (const [k, v] of Object.entries(r.metadata)) if (typeof v === 'string') out[k] = v;
  }
  if (typeof r.user === 'string' && r.user && !('user' in out)) out.user = r.user;
  return Object.keys(out).length ? out : undefined;
}
