/**
 * Bedrock Converse as the scripted model speaks it: `toolSpec` tools and `toolResult` blocks in,
 * a `toolUse` block or text out, plain (`/converse`) or as ConverseStream's binary event stream
 * (`/converse-stream`: messageStart, contentBlockStart/Delta/Stop, messageStop, metadata).
 */
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { streamAnswer, type ScriptedResponse } from '../../../src/kit/testing/index.ts';
import type { Decision, OfferedTool, TurnView } from './model.ts';
import { textOf, usage } from './wire-util.ts';

// biome-ignore lint/suspicious/noExplicitAny: a Converse request body, read field by field
export function readConverse(body: any, raw: string): TurnView {
  const tools: OfferedTool[] = (body.toolConfig?.tools ?? [])
    .filter((t: { toolSpec?: unknown }) => t.toolSpec)
    .map((t: { toolSpec: { name: string; inputSchema?: { json?: Record<string, unknown> } } }) => ({ name: t.toolSpec.name, kind: 'function', parameters: t.toolSpec.inputSchema?.json }));
  const toolResults: string[] = [];
  for (const m of body.messages ?? []) {
    for (const block of m.content ?? []) {
      if (block.toolResult) toolResults.push((block.toolResult.content ?? []).map((c: { text?: string; json?: unknown }) => c.text ?? textOf(c.json)).join(''));
    }
  }
  // Structured output: the schema travels as a JSON string (outputConfig.textFormat).
  const schema = body.outputConfig?.textFormat?.structure?.jsonSchema?.schema;
  return { tools, toolResults, raw, jsonSchema: typeof schema === 'string' ? JSON.parse(schema) : undefined };
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function frame(eventType: string, payload: unknown): Buffer {
  const headers = { ':message-type': { type: 'string', value: 'event' }, ':event-type': { type: 'string', value: eventType }, ':content-type': { type: 'string', value: 'application/json' } } as const;
  return Buffer.from(codec.encode({ headers, body: fromUtf8(JSON.stringify(payload)) }));
}

const converseUsage = { inputTokens: usage.chat.prompt_tokens, outputTokens: usage.chat.completion_tokens, totalTokens: usage.chat.total_tokens };

export function answerConverse(decision: Decision, _model: string, stream: boolean): ScriptedResponse {
  const toolUse =
    decision.kind === 'tool'
      ? { toolUseId: decision.callId.replace(/^call_/, 'tooluse_'), name: decision.tool.name, input: typeof decision.input === 'string' ? { input: decision.input } : decision.input }
      : undefined;
  const stopReason = toolUse ? 'tool_use' : 'end_turn';
  const text = decision.kind === 'text' ? decision.text : '';
  if (!stream) {
    const content = toolUse ? [{ toolUse }] : [{ text }];
    return { status: 200, body: { output: { message: { role: 'assistant', content } }, stopReason, usage: converseUsage, metrics: { latencyMs: 5 } } };
  }
  const frames = [frame('messageStart', { role: 'assistant' })];
  if (toolUse) {
    frames.push(frame('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: toolUse.toolUseId, name: toolUse.name } } }));
    frames.push(frame('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: JSON.stringify(toolUse.input) } } }));
  } else {
    frames.push(frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text } }));
  }
  frames.push(frame('contentBlockStop', { contentBlockIndex: 0 }), frame('messageStop', { stopReason }), frame('metadata', { usage: converseUsage, metrics: { latencyMs: 5 } }));
  return streamAnswer(frames, { headers: { 'content-type': 'application/vnd.amazon.eventstream' } });
}
