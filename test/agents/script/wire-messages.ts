/**
 * Anthropic Messages as the scripted model speaks it: `tool_use` or text, plain or with Anthropic's
 * named events, and message threads as Anthropic serves them (`thread: {type: 'create'}` keeps the
 * conversation under the answer's id; `{type: 'continue', previous_message_id}` sends only the new
 * messages), which the SDK's tool runner uses by default.
 */
import type { ScriptedResponse } from '../../../src/kit/testing/index.ts';
import type { Decision, OfferedTool, TurnView } from './model.ts';
import { sse, textOf, usage } from './wire-util.ts';

// biome-ignore lint/suspicious/noExplicitAny: a Messages message, as a client wrote it
type Message = any;
/** Each threaded answer's id → the whole conversation up to and including it. */
const threads = new Map<string, Message[]>();

/** The whole conversation a request stands for: a continued thread's history before its new messages. */
// biome-ignore lint/suspicious/noExplicitAny: a client's request body, read field by field
function conversation(body: any): Message[] {
  const previous = body.thread?.type === 'continue' ? (threads.get(body.thread.previous_message_id) ?? []) : [];
  return previous.concat(body.messages ?? []);
}

// biome-ignore lint/suspicious/noExplicitAny: a client's request body, read field by field
export function readMessages(body: any, raw: string): TurnView {
  // Server tools (web_search_20250305...) have a `type` and no input_schema: not the client's to run.
  const tools: OfferedTool[] = (body.tools ?? [])
    .filter((t: { input_schema?: unknown }) => t.input_schema)
    .map((t: { name: string; input_schema: Record<string, unknown> }) => ({ name: t.name, kind: 'function', parameters: t.input_schema }));
  const toolResults: string[] = [];
  const messages = conversation(body);
  for (const m of messages) {
    if (m.role !== 'user' || !Array.isArray(m.content)) continue;
    for (const block of m.content) if (block.type === 'tool_result') toolResults.push(textOf(block.content));
  }
  return { tools, toolResults, raw: body.thread ? JSON.stringify(messages) + raw : raw, jsonSchema: body.output_config?.format?.schema ?? body.output_format?.schema };
}

let answers = 0;

/** The Messages answer to a decision (a `tool_use` block or text); a threaded request's conversation is kept under its id. */
// biome-ignore lint/suspicious/noExplicitAny: a client's request body, read field by field
export function messageFor(decision: Decision, model: string, body: any) {
  const id = `msg_sy${Date.now()}_${++answers}`;
  const block =
    decision.kind === 'tool'
      ? { type: 'tool_use', id: decision.callId.replace(/^call_/, 'toolu_'), name: decision.tool.name, input: typeof decision.input === 'string' ? { input: decision.input } : decision.input }
      : { type: 'text', text: decision.text };
  const stop = decision.kind === 'tool' ? 'tool_use' : 'end_turn';
  if (body?.thread) threads.set(id, conversation(body).concat([{ role: 'assistant', content: [block] }]));
  return { id, type: 'message', role: 'assistant', model, content: [block] as Array<Record<string, unknown>>, stop_reason: stop, stop_sequence: null, usage: usage.messages };
}

// biome-ignore lint/suspicious/noExplicitAny: a client's request body, read field by field
export function answerMessages(decision: Decision, model: string, stream: boolean, body: any): ScriptedResponse {
  const message = messageFor(decision, model, body);
  if (!stream) return { status: 200, body: message };
  const [block] = message.content as Array<{ type: string; text?: string; input?: unknown }>;
  const ev = (event: string, fields: object) => ({ event, data: { type: event, ...fields } });
  const opening = block!.type === 'tool_use' ? { ...block, input: {} } : { type: 'text', text: '' };
  const delta = block!.type === 'tool_use' ? { type: 'input_json_delta', partial_json: JSON.stringify(block!.input) } : { type: 'text_delta', text: block!.text };
  return sse([
    ev('message_start', { message: { ...message, content: [], stop_reason: null, usage: { ...usage.messages, output_tokens: 1 } } }),
    ev('content_block_start', { index: 0, content_block: opening }),
    ev('content_block_delta', { index: 0, delta }),
    ev('content_block_stop', { index: 0 }),
    ev('message_delta', { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: usage.messages.output_tokens } }),
    ev('message_stop', {}),
  ]);
}
