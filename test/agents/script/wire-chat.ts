/** OpenAI Chat Completions as the scripted model speaks it: request → TurnView, decision → answer. */
import type { ScriptedResponse } from '../../../src/kit/testing/index.ts';
import type { Decision, OfferedTool, TurnView } from './model.ts';
import { sse, textOf, usage } from './wire-util.ts';

// biome-ignore lint/suspicious/noExplicitAny: a client's request body, read field by field
export function readChat(body: any, raw: string): TurnView {
  const tools: OfferedTool[] = (body.tools ?? [])
    .filter((t: { type?: string }) => t.type === 'function')
    .map((t: { function: { name: string; parameters?: Record<string, unknown> } }) => ({ name: t.function.name, kind: 'function', parameters: t.function.parameters }));
  const toolResults = (body.messages ?? []).filter((m: { role?: string }) => m.role === 'tool').map((m: { content?: unknown }) => textOf(m.content));
  return { tools, toolResults, raw, jsonSchema: body.response_format?.json_schema?.schema };
}

export function answerChat(decision: Decision, model: string, stream: boolean): ScriptedResponse {
  const id = `chatcmpl-sy${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const call =
    decision.kind === 'tool'
      ? {
          id: decision.callId,
          type: 'function',
          function: { name: decision.tool.name, arguments: typeof decision.input === 'string' ? JSON.stringify({ input: decision.input }) : JSON.stringify(decision.input) },
        }
      : undefined;
  const finish = call ? 'tool_calls' : 'stop';
  if (!stream) {
    const message = call ? { role: 'assistant', content: null, tool_calls: [call] } : { role: 'assistant', content: decision.kind === 'text' ? decision.text : '' };
    return { status: 200, body: { id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish }], usage: usage.chat } };
  }
  const chunk = (delta: object, finish_reason: string | null, extra: object = {}) => ({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason }], ...extra });
  const events: unknown[] = [chunk({ role: 'assistant', content: '' }, null)];
  if (call) {
    events.push(chunk({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }, null));
    events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: call.function.arguments } }] }, null));
  } else if (decision.kind === 'text') {
    events.push(chunk({ content: decision.text }, null));
  }
  events.push(chunk({}, finish));
  events.push({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usage.chat });
  return sse([...events.map((data) => ({ data })), { data: '[DONE]' }]);
}
