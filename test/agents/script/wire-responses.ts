/**
 * OpenAI Responses as the scripted model speaks it (what an upstream sees once the gateway passes
 * Responses through to an openai target): function, custom and namespace tools, in `tools` or in
 * an `additional_tools` input item (Codex), answered as a `function_call`, `custom_tool_call` or
 * `message` output item, plain or as the event stream.
 */
import type { ScriptedResponse } from '../../../src/kit/testing/index.ts';
import type { Decision, OfferedTool, TurnView } from './model.ts';
import { sse, textOf, usage } from './wire-util.ts';

// biome-ignore lint/suspicious/noExplicitAny: Responses tools as a client wrote them
function flatten(tools: any[], namespace?: string): OfferedTool[] {
  const out: OfferedTool[] = [];
  for (const t of tools ?? []) {
    if (t.type === 'namespace') out.push(...flatten(t.tools, t.name));
    else if (t.type === 'function') out.push({ name: t.name, kind: 'function', parameters: t.parameters, namespace });
    else if (t.type === 'custom') out.push({ name: t.name, kind: 'custom', namespace });
  }
  return out;
}

// biome-ignore lint/suspicious/noExplicitAny: a client's request body, read field by field
export function readResponses(body: any, raw: string): TurnView {
  const input = Array.isArray(body.input) ? body.input : [];
  const tools = flatten(body.tools).concat(...input.filter((i: { type?: string }) => i.type === 'additional_tools').map((i: { tools: unknown[] }) => flatten(i.tools)));
  const toolResults = input.filter((i: { type?: string }) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output').map((i: { output?: unknown }) => textOf(i.output));
  return { tools, toolResults, raw, jsonSchema: body.text?.format?.type === 'json_schema' ? body.text.format.schema : undefined };
}

function outputItem(decision: Decision, id: string): Record<string, unknown> {
  if (decision.kind === 'text') return { type: 'message', id: `msg_${id}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: decision.text, annotations: [] }] };
  const ns = decision.tool.namespace ? { namespace: decision.tool.namespace } : {};
  if (typeof decision.input === 'string') return { type: 'custom_tool_call', id: `ctc_${id}`, status: 'completed', call_id: decision.callId, name: decision.tool.name, input: decision.input, ...ns };
  return { type: 'function_call', id: `fc_${id}`, status: 'completed', call_id: decision.callId, name: decision.tool.name, arguments: JSON.stringify(decision.input), ...ns };
}

export function answerResponses(decision: Decision, model: string, stream: boolean): ScriptedResponse {
  const id = `sy${Date.now()}`;
  const item = outputItem(decision, id);
  const base = { id: `resp_${id}`, object: 'response', created_at: Math.floor(Date.now() / 1000), model, error: null, incomplete_details: null, tools: [], parallel_tool_calls: true };
  const done = { ...base, status: 'completed', output: [item], usage: usage.responses };
  if (!stream) return { status: 200, body: done };
  let seq = 0;
  const ev = (type: string, fields: object) => ({ event: type, data: { type, sequence_number: seq++, ...fields } });
  const events = [ev('response.created', { response: { ...base, status: 'in_progress', output: [] } }), ev('response.in_progress', { response: { ...base, status: 'in_progress', output: [] } })];
  if (item.type === 'message') {
    const text = decision.kind === 'text' ? decision.text : '';
    const part = { type: 'output_text', text: '', annotations: [] };
    events.push(ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } }));
    events.push(ev('response.content_part.added', { output_index: 0, item_id: item.id, content_index: 0, part }));
    events.push(ev('response.output_text.delta', { output_index: 0, item_id: item.id, content_index: 0, delta: text }));
    events.push(ev('response.output_text.done', { output_index: 0, item_id: item.id, content_index: 0, text }));
    events.push(ev('response.content_part.done', { output_index: 0, item_id: item.id, content_index: 0, part: { ...part, text } }));
  } else if (item.type === 'function_call') {
    events.push(ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } }));
    events.push(ev('response.function_call_arguments.delta', { output_index: 0, item_id: item.id, delta: item.arguments }));
    events.push(ev('response.function_call_arguments.done', { output_index: 0, item_id: item.id, arguments: item.arguments }));
  } else {
    events.push(ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', input: '' } }));
    events.push(ev('response.custom_tool_call_input.delta', { output_index: 0, item_id: item.id, delta: item.input }));
    events.push(ev('response.custom_tool_call_input.done', { output_index: 0, item_id: item.id, input: item.input }));
  }
  events.push(ev('response.output_item.done', { output_index: 0, item }));
  events.push(ev('response.completed', { response: done }));
  return sse(events);
}
