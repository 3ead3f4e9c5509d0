/**
 * OpenAI chat request → Gemini `generateContent` request
 * (https://ai.google.dev/api/generate-content). Roles become `user`/`model`, system and
 * developer messages `systemInstruction`, parameters `generationConfig`, tools
 * `functionDeclarations`; tool results become `functionResponse` parts named after the call
 * they answer. Consecutive turns of one role are merged.
 */
import type { ChatMessage } from '../../src/openai-types.ts';
import type { ProviderCall } from '../../src/plugin-api.ts';
import { GatewayError } from '../../src/errors.ts';
import { checkUnsupported, unsupportedParam } from '../../src/providers/params.ts';
import { parseArguments, parseDataUrl, partsOf, textOf } from '../../src/protocol/content.ts';

type Part = Record<string, unknown>;
export interface GeminiContent {
  role: 'user' | 'model';
  parts: Part[];
}

const UNSUPPORTED = ['logprobs', 'top_logprobs', 'logit_bias', 'audio', 'modalities', 'prediction'];

export function buildGenerateRequest(call: ProviderCall): Record<string, unknown> {
  const r = call.request;
  checkUnsupported(call, UNSUPPORTED);
  const system: Part[] = [];
  const contents: GeminiContent[] = [];
  const toolNames = new Map<string, string>(); // tool call id → function name, for functionResponse
  r.messages.forEach((m, i) => {
    if (m.role === 'system' || m.role === 'developer') system.push({ text: textOf(m.content) });
    else push(contents, translate(m, i, call, toolNames));
  });

  const body: Record<string, unknown> = { contents };
  if (system.length) body.systemInstruction = { parts: system };
  const config = generationConfig(call);
  if (Object.keys(config).length) body.generationConfig = config;
  if (r.tools?.length) {
    body.tools = [
      {
        functionDeclarations: r.tools.map((tool) => {
          if (tool.type !== 'function') unsupportedParam(call, 'tools', `of type "${tool.type}" are not supported`);
          const f = tool.function;
          return { name: f.name, ...(f.description ? { description: f.description } : {}), ...(f.parameters ? { parametersJsonSchema: f.parameters } : {}) };
        }),
      },
    ];
  }
  const c = r.tool_choice;
  if (c === 'auto') body.toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
  else if (c === 'none') body.toolConfig = { functionCallingConfig: { mode: 'NONE' } };
  else if (c === 'required') body.toolConfig = { functionCallingConfig: { mode: 'ANY' } };
  else if (c && typeof c === 'object') body.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [c.function.name] } };
  return body;
}

function generationConfig(call: ProviderCall): Record<string, unknown> {
  const r = call.request;
  const g: Record<string, unknown> = {};
  if (r.temperature != null) g.temperature = r.temperature;
  if (r.top_p != null) g.topP = r.top_p;
  const max = r.max_completion_tokens ?? r.max_tokens;
  if (max != null) g.maxOutputTokens = max;
  if (r.stop != null) g.stopSequences = Array.isArray(r.stop) ? r.stop : [r.stop];
  if (r.seed != null) g.seed = r.seed;
  if (r.n != null && r.n !== 1) g.candidateCount = r.n;
  if (r.presence_penalty != null) g.presencePenalty = r.presence_penalty;
  if (r.frequency_penalty != null) g.frequencyPenalty = r.frequency_penalty;
  const format = r.response_format;
  if (format?.type === 'json_object') g.responseMimeType = 'application/json';
  else if (format?.type === 'json_schema') {
    g.responseMimeType = 'application/json';
    if (format.json_schema.schema) g.responseJsonSchema = format.json_schema.schema;
  }
  return g;
}

function translate(m: ChatMessage, i: number, call: ProviderCall, toolNames: Map<string, string>): GeminiContent {
  switch (m.role) {
    case 'user':
      return { role: 'user', parts: partsOf(m.content).map((p, j) => userPart(p, `messages[${i}].content[${j}]`, call)) };
    case 'assistant': {
      const parts: Part[] = [];
      const text = textOf(m.content);
      if (text) parts.push({ text });
      (m.tool_calls ?? []).forEach((tc, j) => {
        toolNames.set(tc.id, tc.function.name);
        let args: Record<string, unknown>;
        try {
          args = parseArguments(tc.function.arguments);
        } catch {
          throw new GatewayError('invalid_request', `messages[${i}].tool_calls[${j}].function.arguments is not valid JSON.`, { param: `messages[${i}].tool_calls[${j}].function.arguments` });
        }
        parts.push({ functionCall: { name: tc.function.name, args } });
      });
      return { role: 'model', parts };
    }
    case 'tool': {
      const name = toolNames.get(m.tool_call_id ?? '') ?? m.name ?? m.tool_call_id ?? '';
      return { role: 'user', parts: [{ functionResponse: { name, response: asObject(textOf(m.content)) } }] };
    }
    default:
      unsupportedParam(call, `messages[${i}].role`, `"${m.role}" is not supported`);
      return { role: 'user', parts: [] };
  }
}

/** Gemini wants the function response as an object: JSON objects as they are, anything else wrapped. */
function asObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    return { result: value };
  } catch {
    return { result: text };
  }
}

function userPart(part: ReturnType<typeof partsOf>[number], param: string, call: ProviderCall): Part {
  if (part.type === 'text') return { text: part.text };
  if (part.type === 'image_url') {
    const url = part.image_url.url;
    const data = parseDataUrl(url);
    return data ? { inlineData: { mimeType: data.mediaType, data: data.data } } : { fileData: { fileUri: url } };
  }
  unsupportedParam(call, param, `(a ${part.type} part) is not supported`);
  return { text: '' };
}

function push(contents: GeminiContent[], next: GeminiContent): void {
  const last = contents.at(-1);
  if (last && last.role === next.role) last.parts.push(...next.parts);
  else contents.push(next);
}
