/**
 * OpenAI chat request → Gemini `generateContent` request body
 * (https://ai.google.dev/api/generate-content). Messages are translated in contents.ts; this
 * file maps the parameters around them:
 *
 *   temperature, top_p, top_k       generationConfig.temperature / topP / topK
 *   max_completion_tokens ?? max_tokens   generationConfig.maxOutputTokens
 *   stop, seed, n (> 1)             stopSequences, seed, candidateCount
 *   presence/frequency_penalty      presencePenalty / frequencyPenalty
 *   response_format                 json_object → responseMimeType application/json;
 *                                   json_schema → that plus responseJsonSchema
 *   logprobs, top_logprobs          responseLogprobs, logprobs (the number of alternatives)
 *   reasoning_effort                thinkingConfig: thinkingLevel on Gemini 3+, else a thinkingBudget
 *   tools, tool_choice              tools[].functionDeclarations, toolConfig.functionCallingConfig
 *   web_search (the gateway's)      a `googleSearch` tool (grounding.ts)
 *   google.thinking_config,         Google's OpenAI-endpoint extension block (top level or under
 *   google.cached_content           `extra_body`), for clients written against it
 *
 * `user` and `metadata` have no Gemini field and are left out. Parameters Gemini cannot honour
 * are rejected with a 400 naming them (or dropped with `dropUnsupportedParams`); a parameter at
 * its no-op value (`n: 1`, `logprobs: false`, an empty `logit_bias`) is accepted and left out.
 */
import type { FunctionTool } from '../../openai-types.ts';
import type { ProviderCall, ProviderCapabilities } from '../../plugin-api.ts';
import { reportDrop } from '../../providers/drops.ts';
import { functionOf, unsupportedParam } from '../../providers/params.ts';
import { geminiSignatureOf, reportCacheMarkersLeftOut, reportThinkingLeftOut } from '../chat/thinking.ts';
import { translateMessages } from './contents.ts';
import { generationOf } from './model.ts';
import { googleSearchOf } from './grounding.ts';

export interface GeminiRequestSettings {
  /** `safetySettings` sent with every request (the provider's `safetySettings` option). */
  safetySettings?: Array<Record<string, unknown>>;
}

/**
 * What this translation carries, for the `capabilities` of a provider that uses it (spread it
 * and add your own, e.g. `nativeProtocols`). `unsupportedParams` have no Gemini equivalent at
 * any value: the core refuses them with a 400, or drops them with `dropUnsupportedParams`.
 */
export const GEMINI_CAPABILITIES: Readonly<ProviderCapabilities> = Object.freeze({
  streaming: true,
  tools: true,
  images: true,
  responseFormat: true,
  unsupportedParams: Object.freeze(['audio', 'prediction', 'web_search_options', 'functions', 'function_call', 'verbosity']),
});

/** `reasoning_effort` → Gemini 3 `thinkingLevel` (it cannot switch thinking off: `none` is the least). */
const LEVEL: Record<string, string> = { none: 'minimal', minimal: 'minimal', low: 'low', medium: 'medium', high: 'high', xhigh: 'high' };
/** `reasoning_effort` → Gemini 2.5 `thinkingBudget` (the budgets Google's own OpenAI endpoint uses). */
const BUDGET: Record<string, number> = { none: 0, minimal: 1024, low: 1024, medium: 8192, high: 24576, xhigh: 24576 };

export function buildGeminiRequest(call: ProviderCall, settings: GeminiRequestSettings = {}): Record<string, unknown> {
  checkParams(call);
  reportCacheMarkersLeftOut(call, 'Gemini caches repeated prefixes by itself (implicit caching) and takes no markers');
  reportThinkingLeftOut(call, (b) => geminiSignatureOf(b) !== undefined, 'Gemini takes back only the thought signatures it made (other thinking it cannot read)');
  const { systemInstruction, contents } = translateMessages(call);
  const body: Record<string, unknown> = { contents };
  if (systemInstruction) body.systemInstruction = systemInstruction;
  const declarations = (call.request.tools ?? []).map((tool, i) => declarationOf(tool, i, call)).filter((d) => d !== undefined);
  const search = googleSearchOf(call, declarations.length > 0);
  if (declarations.length || search) body.tools = [...(declarations.length ? [{ functionDeclarations: declarations }] : []), ...(search ? [search] : [])];
  if (declarations.length) {
    const config = functionCallingConfig(call);
    if (config) body.toolConfig = { functionCallingConfig: config };
  }
  if (settings.safetySettings?.length) body.safetySettings = settings.safetySettings;
  const generation = generationConfig(call);
  if (Object.keys(generation).length) body.generationConfig = generation;
  const cached = extensionOf(call).cached_content;
  if (typeof cached === 'string' && cached) body.cachedContent = cached;
  return body;
}

/** Rejects (or logs dropping) every parameter Gemini cannot honour. */
function checkParams(call: ProviderCall): void {
  const r = call.request;
  const bias = r.logit_bias;
  if (bias && typeof bias === 'object' && Object.keys(bias).length) unsupportedParam(call, 'logit_bias');
  const modalities = r.modalities;
  if (Array.isArray(modalities) && modalities.some((m) => m !== 'text')) unsupportedParam(call, 'modalities', 'other than ["text"] are not supported');
  // Gemini decides alone whether to call several functions at once: a hint it cannot take (Codex sends it on every turn), reported, not refused.
  if (r.parallel_tool_calls === false && r.tools?.length)
    reportDrop(call, { field: 'parallel_tool_calls', what: 'false', reason: `gemini model ${call.model} decides alone whether to call several functions at once` });
  const tier = r.service_tier;
  if (tier != null && tier !== 'auto' && tier !== 'default') unsupportedParam(call, 'service_tier', `with the value ${JSON.stringify(tier)} is not supported`);
}

function generationConfig(call: ProviderCall): Record<string, unknown> {
  const r = call.request;
  const g: Record<string, unknown> = {};
  if (r.temperature != null) g.temperature = r.temperature;
  if (r.top_p != null) g.topP = r.top_p;
  // Not an OpenAI parameter, but vLLM-style clients send it and Gemini has it.
  if (typeof r.top_k === 'number') g.topK = r.top_k;
  const max = r.max_completion_tokens ?? r.max_tokens;
  if (max != null) g.maxOutputTokens = max;
  if (r.stop != null) {
    const stops = (Array.isArray(r.stop) ? r.stop : [r.stop]).filter((s) => s !== '');
    if (stops.length) g.stopSequences = stops;
  }
  if (r.seed != null) g.seed = r.seed;
  if (r.n != null && r.n > 1) g.candidateCount = r.n;
  if (r.presence_penalty != null) g.presencePenalty = r.presence_penalty;
  if (r.frequency_penalty != null) g.frequencyPenalty = r.frequency_penalty;
  const format = r.response_format;
  if (format?.type === 'json_object') g.responseMimeType = 'application/json';
  else if (format?.type === 'json_schema') {
    g.responseMimeType = 'application/json';
    const schema = format.json_schema?.schema;
    if (schema && typeof schema === 'object') g.responseJsonSchema = schema;
  }
  if (r.logprobs === true) {
    g.responseLogprobs = true;
    if (typeof r.top_logprobs === 'number' && r.top_logprobs > 0) g.logprobs = r.top_logprobs;
  }
  const thinking = thinkingConfig(call);
  if (thinking) g.thinkingConfig = thinking;
  return g;
}

/** `reasoning_effort`, then the client's own `google.thinking_config` on top (it wins). */
function thinkingConfig(call: ProviderCall): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  const effort = call.request.reasoning_effort;
  if (effort != null) {
    const key = typeof effort === 'string' ? effort : '';
    if ((generationOf(call.model) ?? 0) >= 3) {
      if (LEVEL[key]) out.thinkingLevel = LEVEL[key];
    } else if (BUDGET[key] !== undefined) out.thinkingBudget = BUDGET[key];
    if (!Object.keys(out).length) unsupportedParam(call, 'reasoning_effort', `with the value ${JSON.stringify(effort)} is not supported`);
  }
  const native = extensionOf(call).thinking_config;
  if (native && typeof native === 'object' && !Array.isArray(native)) {
    const given = camelKeys(native as Record<string, unknown>);
    // Gemini refuses a level and a budget together: the client's choice replaces ours.
    if ('thinkingBudget' in given || 'thinkingLevel' in given) {
      delete out.thinkingBudget;
      delete out.thinkingLevel;
    }
    Object.assign(out, given);
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * Google's OpenAI-compatible endpoint takes Gemini-only settings in a `google` object; the
 * openai SDK's `extra_body` option puts it at the top level, Google's docs nest it in `extra_body`.
 */
function extensionOf(call: ProviderCall): Record<string, unknown> {
  const r = call.request;
  const nested = r.extra_body && typeof r.extra_body === 'object' ? (r.extra_body as Record<string, unknown>).google : undefined;
  const google = r.google ?? nested;
  return google && typeof google === 'object' && !Array.isArray(google) ? (google as Record<string, unknown>) : {};
}

function camelKeys(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())] = v;
  return out;
}

function declarationOf(tool: FunctionTool, i: number, call: ProviderCall): Record<string, unknown> | undefined {
  const f = functionOf(tool, i, call);
  if (!f) return undefined;
  const out: Record<string, unknown> = { name: f.name };
  if (f.description) out.description = f.description;
  // JSON Schema as is (`parametersJsonSchema`), not Gemini's OpenAPI subset (`parameters`).
  if (f.parameters) out.parametersJsonSchema = f.parameters;
  return out;
}

function functionCallingConfig(call: ProviderCall): Record<string, unknown> | undefined {
  const c = call.request.tool_choice;
  if (c === undefined || c === null) return undefined;
  if (c === 'auto') return { mode: 'AUTO' };
  if (c === 'none') return { mode: 'NONE' };
  if (c === 'required') return { mode: 'ANY' };
  if (typeof c === 'object' && c.type === 'function' && c.function?.name) return { mode: 'ANY', allowedFunctionNames: [c.function.name] };
  unsupportedParam(call, 'tool_choice', `with the value ${JSON.stringify(c)} is not supported`);
  return undefined;
}
