/**
 * A Gemini `generateContent` body → the gateway's chat request
 * (https://ai.google.dev/api/generate-content#request-body). Turns are translated in contents.ts;
 * this file maps what is around them:
 *
 *   generationConfig.temperature, topP, topK      temperature, top_p, top_k (the extra field the gemini and anthropic providers read)
 *   maxOutputTokens, stopSequences, seed          max_completion_tokens, stop, seed
 *   candidateCount                                n
 *   presencePenalty, frequencyPenalty             presence_penalty, frequency_penalty
 *   responseLogprobs, logprobs                    logprobs, top_logprobs
 *   responseMimeType application/json             response_format json_object, or json_schema with
 *     + responseJsonSchema | responseSchema       the schema (Gemini's OpenAPI subset converted)
 *   thinkingConfig.thinkingLevel | thinkingBudget reasoning_effort (a budget by the thresholds of the
 *                                                 Messages way in; 0 → none; -1, dynamic → left out)
 *   thinkingConfig.includeThoughts                the answer's reasoning comes back as thought parts
 *   tools[].functionDeclarations                  function tools (`parameters` converted, `parametersJsonSchema` as is)
 *   toolConfig.functionCallingConfig              tool_choice: AUTO/VALIDATED auto, NONE none, ANY required
 *                                                 (one allowed name: that function; several: only those tools)
 *   tools[].googleSearch, googleSearchRetrieval   web_search, the gateway's extension (search.ts): the
 *                                                 target's own search where it has one, else reported
 *
 * The native pass-through to a gemini target keeps everything. On a translated attempt, listed in
 * `drops` (dropped and reported): other hosted tools (codeExecution, urlContext, ...),
 * safetySettings, generationConfig fields chat has no word for (speechConfig, mediaResolution,
 * ...) and any top-level field this file does not know; in `unservable` (refused, since the
 * question would change): cachedContent, responseModalities other than text, and a fileData
 * part that is not an image link.
 */
import { GatewayError } from '../../errors.ts';
import type { ChatCompletionRequest, FunctionTool } from '../../openai-types.ts';
import { effortOfBudget } from '../messages/request.ts';
import { chatMessagesOf } from './contents.ts';
import { Drops, type Drop } from './drops.ts';
import { arrayAt, integerAt, invalid, isObject, type Json, numberAt, objectAt, stringAt } from './fields.ts';
import { jsonSchemaOf } from './schema.ts';
import { SEARCH_TOOLS, webSearchOfTool } from './search.ts';

export interface GenerateTranslation {
  /** The chat request the pipeline runs. */
  chat: ChatCompletionRequest;
  /** What the chat request leaves out (sent on the native pass-through, dropped elsewhere). */
  drops: Drop[];
  /** What it cannot leave out without changing the question (sent on the pass-through, refused elsewhere). */
  unservable: Drop[];
  /** `thinkingConfig.includeThoughts`: reasoning goes back as `thought: true` parts. */
  includeThoughts: boolean;
}

/** Top-level fields translated here. */
const KNOWN = new Set(['model', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent', 'labels']);

/** generationConfig fields translated here (or with no effect on the answer's text: `responseModalities: ["TEXT"]`). */
const GENERATION_KNOWN = new Set([
  'temperature',
  'topP',
  'topK',
  'maxOutputTokens',
  'stopSequences',
  'seed',
  'candidateCount',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'thinkingConfig',
  'responseModalities',
]);

/** Gemini 3's `thinkingLevel` → chat's effort scale. */
const LEVEL: Record<string, string> = { MINIMAL: 'minimal', LOW: 'low', MEDIUM: 'medium', HIGH: 'high' };

/** Why a field has no chat form, by name (anything else: "no chat equivalent"). */
const HOSTED_TOOL = 'a tool Gemini runs itself; the target has none';

export function translateGenerateContent(body: unknown, model: string, stream: boolean): GenerateTranslation {
  if (!isObject(body)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  if (body.contents === undefined) throw new GatewayError('missing_required_parameter', "Missing required parameter: 'contents'.", { param: 'contents' });
  const drops = new Drops();
  const chat: ChatCompletionRequest = { model, messages: chatMessagesOf(body.systemInstruction, body.contents, drops) };
  if (stream) {
    chat.stream = true;
    // The last event carries usageMetadata: ask every provider for chat's usage chunk.
    chat.stream_options = { include_usage: true };
  }
  addTools(chat, body, drops);
  const includeThoughts = body.generationConfig != null && addGeneration(chat, objectAt(body.generationConfig, 'generationConfig'), drops);
  if (body.safetySettings != null) drops.add('safetySettings', 'chat targets apply their own safety policy');
  if (body.cachedContent != null) drops.refuse('cachedContent', 'a Gemini context cache; chat targets cannot read it');
  for (const name of Object.keys(body)) if (!KNOWN.has(name) && body[name] != null) drops.add(name, 'no chat equivalent');
  return { chat, drops: drops.list, unservable: drops.unservable, includeThoughts };
}

function addGeneration(chat: ChatCompletionRequest, g: Json, drops: Drops): boolean {
  const at = (name: string) => `generationConfig.${name}`;
  if (g.temperature != null) chat.temperature = numberAt(g.temperature, at('temperature'));
  if (g.topP != null) chat.top_p = numberAt(g.topP, at('topP'));
  if (g.topK != null) chat.top_k = integerAt(g.topK, at('topK'));
  if (g.maxOutputTokens != null) chat.max_completion_tokens = integerAt(g.maxOutputTokens, at('maxOutputTokens'));
  if (g.stopSequences != null) {
    const stops = arrayAt(g.stopSequences, at('stopSequences')).map((s, i) => stringAt(s, `${at('stopSequences')}[${i}]`));
    if (stops.length) chat.stop = stops;
  }
  if (g.seed != null) chat.seed = integerAt(g.seed, at('seed'));
  if (g.candidateCount != null) {
    const n = integerAt(g.candidateCount, at('candidateCount'));
    if (n > 1) chat.n = n;
  }
  if (g.presencePenalty != null) chat.presence_penalty = numberAt(g.presencePenalty, at('presencePenalty'));
  if (g.frequencyPenalty != null) chat.frequency_penalty = numberAt(g.frequencyPenalty, at('frequencyPenalty'));
  if (g.responseLogprobs === true) {
    chat.logprobs = true;
    if (g.logprobs != null) chat.top_logprobs = integerAt(g.logprobs, at('logprobs'));
  }
  addFormat(chat, g);
  if (Array.isArray(g.responseModalities) && g.responseModalities.some((m) => String(m).toUpperCase() !== 'TEXT')) {
    drops.refuse(at('responseModalities'), 'chat targets answer text only', JSON.stringify(g.responseModalities));
  }
  for (const name of Object.keys(g)) if (!GENERATION_KNOWN.has(name) && g[name] != null) drops.add(at(name), 'no chat equivalent');
  return g.thinkingConfig != null && addThinking(chat, objectAt(g.thinkingConfig, at('thinkingConfig')));
}

function addFormat(chat: ChatCompletionRequest, g: Json): void {
  const mime = g.responseMimeType == null ? undefined : stringAt(g.responseMimeType, 'generationConfig.responseMimeType');
  const schema =
    g.responseJsonSchema != null
      ? objectAt(g.responseJsonSchema, 'generationConfig.responseJsonSchema')
      : g.responseSchema != null
        ? jsonSchemaOf(objectAt(g.responseSchema, 'generationConfig.responseSchema'))
        : undefined;
  if (schema) chat.response_format = { type: 'json_schema', json_schema: { name: 'response', schema } };
  else if (mime === 'application/json') chat.response_format = { type: 'json_object' };
}

/** The effort asked for; returns includeThoughts. */
function addThinking(chat: ChatCompletionRequest, t: Json): boolean {
  if (t.thinkingLevel != null) {
    const level = stringAt(t.thinkingLevel, 'generationConfig.thinkingConfig.thinkingLevel').toUpperCase();
    if (LEVEL[level]) chat.reasoning_effort = LEVEL[level];
  } else if (t.thinkingBudget != null) {
    const budget = integerAt(t.thinkingBudget, 'generationConfig.thinkingConfig.thinkingBudget');
    // -1 asks Gemini to decide: chat's default is the same.
    if (budget === 0) chat.reasoning_effort = 'none';
    else if (budget > 0) chat.reasoning_effort = effortOfBudget(budget);
  }
  return t.includeThoughts === true;
}

// ---------------------------------------------------------------- tools

function addTools(chat: ChatCompletionRequest, body: Json, drops: Drops): void {
  let tools: FunctionTool[] = [];
  if (body.tools != null) {
    arrayAt(body.tools, 'tools').forEach((raw, i) => {
      const tool = objectAt(raw, `tools[${i}]`);
      for (const [key, value] of Object.entries(tool)) {
        if (value == null) continue;
        if (SEARCH_TOOLS.has(key)) {
          if (chat.web_search) drops.add(`tools[${i}].${key}`, `the request already asks for web search (${chat.web_search.field})`);
          else chat.web_search = webSearchOfTool(key, value, `tools[${i}]`, drops);
          continue;
        }
        if (key !== 'functionDeclarations') {
          drops.add(`tools[${i}].${key}`, HOSTED_TOOL);
          continue;
        }
        arrayAt(value, `tools[${i}].functionDeclarations`).forEach((d, j) => tools.push(functionTool(objectAt(d, `tools[${i}].functionDeclarations[${j}]`), `tools[${i}].functionDeclarations[${j}]`)));
      }
    });
  }
  const config = body.toolConfig == null ? undefined : objectAt(body.toolConfig, 'toolConfig');
  const calling = config?.functionCallingConfig == null ? undefined : objectAt(config.functionCallingConfig, 'toolConfig.functionCallingConfig');
  if (calling && tools.length) {
    const mode = calling.mode == null ? 'AUTO' : stringAt(calling.mode, 'toolConfig.functionCallingConfig.mode').toUpperCase();
    const allowed =
      calling.allowedFunctionNames == null
        ? []
        : arrayAt(calling.allowedFunctionNames, 'toolConfig.functionCallingConfig.allowedFunctionNames').map((n, i) => stringAt(n, `toolConfig.functionCallingConfig.allowedFunctionNames[${i}]`));
    if (mode === 'NONE') chat.tool_choice = 'none';
    else if (mode === 'ANY') {
      if (allowed.length === 1) chat.tool_choice = { type: 'function', function: { name: allowed[0] } };
      else {
        // Several allowed names: the model may call only those, so only those are offered.
        if (allowed.length) tools = tools.filter((t) => allowed.includes(t.function.name));
        chat.tool_choice = 'required';
      }
    } else if (mode === 'AUTO' || mode === 'VALIDATED' || mode === 'MODE_UNSPECIFIED') chat.tool_choice = 'auto';
    else throw invalid('toolConfig.functionCallingConfig.mode', 'expected AUTO, ANY, NONE or VALIDATED');
  }
  if (tools.length) chat.tools = tools;
  for (const key of Object.keys(config ?? {})) if (key !== 'functionCallingConfig' && config?.[key] != null) drops.add(`toolConfig.${key}`, 'no chat equivalent');
}

function functionTool(d: Json, param: string): FunctionTool {
  const fn: FunctionTool['function'] = { name: stringAt(d.name, `${param}.name`) };
  if (d.description != null) fn.description = stringAt(d.description, `${param}.description`);
  if (d.parametersJsonSchema != null) fn.parameters = objectAt(d.parametersJsonSchema, `${param}.parametersJsonSchema`);
  else if (d.parameters != null) fn.parameters = jsonSchemaOf(objectAt(d.parameters, `${param}.parameters`));
  // Chat requires an object schema; a declaration without parameters takes none.
  else fn.parameters = { type: 'object', properties: {} };
  return { type: 'function', function: fn };
}
