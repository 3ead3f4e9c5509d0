/** Gemini generateContent as the scripted model speaks it: a `functionCall` part or text, plain or as `alt=sse` chunks. */
import type { ScriptedResponse } from '../../../src/kit/testing/index.ts';
import type { Decision, OfferedTool, TurnView } from './model.ts';
import { sse, usage } from './wire-util.ts';

// biome-ignore lint/suspicious/noExplicitAny: a client's request body, read field by field
export function readGemini(body: any, raw: string): TurnView {
  const tools: OfferedTool[] = [];
  for (const group of body.tools ?? []) {
    for (const f of group.functionDeclarations ?? []) tools.push({ name: f.name, kind: 'function', parameters: f.parametersJsonSchema ?? f.parameters });
  }
  const toolResults: string[] = [];
  for (const content of body.contents ?? []) {
    for (const part of content.parts ?? []) if (part.functionResponse) toolResults.push(JSON.stringify(part.functionResponse.response ?? {}));
  }
  const config = body.generationConfig ?? {};
  return { tools, toolResults, raw, jsonSchema: config.responseJsonSchema ?? config.responseSchema };
}

export function answerGemini(decision: Decision, model: string, stream: boolean): ScriptedResponse {
  const part =
    decision.kind === 'tool'
      ? { functionCall: { id: decision.callId, name: decision.tool.name, args: typeof decision.input === 'string' ? { input: decision.input } : decision.input } }
      : { text: decision.text };
  const body = { candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }], usageMetadata: usage.gemini, modelVersion: model, responseId: `sy${Date.now()}` };
  if (!stream) return { status: 200, body };
  return sse([{ data: body }]);
}
